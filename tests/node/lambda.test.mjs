// AWS Lambda end to end: the agent-lambda function under the Lambda runtime
// emulator (`cargo lambda watch`) with its DynamoDB store on a real moto_server.
// The official @ag-ui/client drives interrupt -> resume; the interrupt is raised
// through one function process and resumed through a second, fresh one.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { buildResumeArray } from "@ag-ui/client";
import { assertBinaries, postJson, sseEvents } from "./lib/devserver.mjs";
import { assertCleanOfficialRun, assertStrict, ledger, officialRefundInterrupt, officialRun, uid, userMessage } from "./lib/flows.mjs";
import { startLambda, startMoto, stopAll } from "./lib/lambda.mjs";

const TIMEOUT = 900_000;
const TOKEN_DELAY_MS = 120;

assertBinaries();

describe("AWS Lambda (cargo lambda watch + moto_server)", { timeout: TIMEOUT }, () => {
  let moto;
  const table = `handoff_${Date.now()}`;
  before(async () => {
    moto = await startMoto();
  });
  after(stopAll);

  test("an interrupt raised by one process is resumed by a fresh one; concurrent identical resumes refund once", { timeout: TIMEOUT }, async () => {
    const first = await startLambda({ moto, table, label: "lambda-a" });
    const orderId = "L3001";
    const ctx = await officialRefundInterrupt(first, orderId);
    assert.equal((await ledger(first, orderId)).refunds, 0);
    await first.kill();

    const second = await startLambda({ moto, table, label: "lambda-b" });
    const answer = { status: "resolved", payload: { approved: true } };
    const resume = buildResumeArray(ctx.agent.pendingInterrupts, { [ctx.interrupt.id]: answer });
    const racers = await Promise.all(
      Array.from({ length: 6 }, () => {
        const runId = uid("run");
        return postJson(`${second.url}/agent`, { threadId: ctx.threadId, runId, messages: [], resume }).then((res) => ({ res, runId }));
      }),
    );
    const results = new Set();
    for (const { res, runId } of racers) {
      if (res.status === 409) {
        assert.equal(res.json?.code, "THREAD_BUSY", res.text);
        continue;
      }
      assert.equal(res.status, 200, res.text);
      await assertStrict(res.bytes, { threadId: ctx.threadId, runId });
      const result = sseEvents(res.bytes).find((e) => e.type === "TOOL_CALL_RESULT");
      assert.equal(result?.toolCallId, ctx.refundCallId, "the result answers the original refund_order call");
      results.add(JSON.stringify([result.messageId, result.content]));
    }
    assert.equal(results.size, 1, "every caller sees the same recorded result");
    assert.equal((await ledger(second, orderId)).refunds, 1);

    // The official client's own resume is one more duplicate: replayed, not re-executed.
    // Same agent object (its pending interrupts), now talking to the fresh process.
    ctx.agent.url = `${second.url}/agent`;
    const runId = uid("run");
    const run = await officialRun(ctx.agent, ctx.recorder, { runId, resume });
    await assertCleanOfficialRun(run, { threadId: ctx.threadId, runId });
    assert.equal(run.outcome?.outcome, "success");
    assert.equal(ctx.agent.pendingInterrupts.length, 0);
    assert.equal((await ledger(second, orderId)).refunds, 1);
    await second.kill();
  });

  test("SSE arrives incrementally through the function URL (not buffered)", { timeout: TIMEOUT }, async () => {
    const lambda = await startLambda({ moto, table, label: "lambda-slow", env: { DEMO_TOKEN_DELAY_MS: String(TOKEN_DELAY_MS) } });
    const threadId = uid("thread");
    const runId = uid("run");
    const started = Date.now();
    const res = await fetch(`${lambda.url}/agent`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ threadId, runId, messages: [userMessage("Refund order L3002")] }),
    });
    assert.equal(res.status, 200);
    const arrivals = [];
    const chunks = [];
    for await (const chunk of res.body) {
      arrivals.push({ at: Date.now() - started, text: Buffer.from(chunk).toString("utf8") });
      chunks.push(Buffer.from(chunk));
    }
    const bytes = Buffer.concat(chunks);
    await assertStrict(bytes, { threadId, runId });
    const words = sseEvents(bytes).filter((e) => e.type === "TEXT_MESSAGE_CONTENT").length;
    assert.ok(words >= 5, `expected a streamed sentence, got ${words} deltas`);
    const firstText = arrivals.find((a) => a.text.includes("TEXT_MESSAGE_CONTENT"));
    const finished = arrivals.find((a) => a.text.includes("RUN_FINISHED"));
    // Buffered delivery would hand over everything at once; streamed delivery spreads
    // the deltas over roughly (words - 1) * delay. Half of that is a safe floor.
    const spread = finished.at - firstText.at;
    assert.ok(
      spread >= ((words - 1) * TOKEN_DELAY_MS) / 2,
      `first text at ${firstText.at} ms, RUN_FINISHED at ${finished.at} ms: spread ${spread} ms for ${words} deltas`,
    );
    assert.ok(arrivals.length > words / 2, `only ${arrivals.length} network chunks for ${words} deltas`);
    await lambda.kill();
  });

  test("DynamoDB unavailable: a retryable 503 before the stream, never a panic; service resumes with the store", { timeout: TIMEOUT }, async () => {
    const lambda = await startLambda({ moto, table, label: "lambda-fault" });
    await moto.kill();
    const res = await postJson(`${lambda.url}/agent`, { threadId: uid("thread"), runId: uid("run"), messages: [userMessage("Refund order L3003")] }, { allow5xx: true });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.json?.code, "STORE_UNAVAILABLE");
    assert.ok(res.headers["retry-after"], "a retryable answer says when to retry");
    assert.doesNotMatch(lambda.logs(20_000), /panicked/);
    await lambda.kill();
  });
});
