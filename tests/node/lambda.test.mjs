// AWS Lambda end to end: the agent-lambda function under the Lambda runtime
// emulator (`cargo lambda watch`) with its DynamoDB store on a real moto_server.
// The official @ag-ui/client drives interrupt -> resume; the interrupt is raised
// through one function process and resumed through a second, fresh one.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { buildResumeArray } from "@ag-ui/client";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { BIN_DIR, assertBinaries, postJson, request, sseEvents } from "./lib/devserver.mjs";
import { startFaultProxy } from "./lib/faultproxy.mjs";
import { assertCleanOfficialRun, assertReconnectFollowsALiveRun, assertReconnectRejoinsTheRun, assertStopEndsTheRun, assertStreamsIncrementally, assertStrict, ledger, officialRefundInterrupt, officialRun, uid, userMessage } from "./lib/flows.mjs";
import { startLambda, startMoto, stopAll } from "./lib/lambda.mjs";
import { assertProtoRefundFlow } from "./lib/proto-flows.mjs";
import { assertLlmApprovalPolicy, assertLlmRefundFlow, llmEnv, policyEnv, refundScript, standIn } from "./lib/model-standin.mjs";
import * as ck from "./lib/copilotkit-flows.mjs";

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

  test("a per-instance store (memory, sqlite) is refused at start unless HANDOFF_ALLOW_LOCAL_STORE=true", { timeout: TIMEOUT }, async () => {
    for (const store of ["memory", "sqlite"]) {
      // The binary itself: the refusal comes before it ever talks to a Lambda runtime.
      const run = spawnSync(path.join(BIN_DIR, "agent-lambda"), [], {
        env: { PATH: process.env.PATH, HANDOFF_STORE: store, HANDOFF_AUTH: "none", RUST_LOG: "info" },
        encoding: "utf8",
        timeout: 30_000,
      });
      const output = `${run.stdout}${run.stderr}`;
      assert.notEqual(run.status, 0, `HANDOFF_STORE=${store} must not start: ${output}`);
      assert.match(output, new RegExp(`HANDOFF_STORE=${store} keeps state inside one Lambda instance`), output);
      assert.match(output, /HANDOFF_ALLOW_LOCAL_STORE=true/, output);
    }
    const allowed = await startLambda({ moto, table, label: "lambda-local", env: { HANDOFF_STORE: "memory", HANDOFF_ALLOW_LOCAL_STORE: "true" } });
    const threadId = uid("thread");
    const runId = uid("run");
    const res = await postJson(`${allowed.url}/agent`, { threadId, runId, messages: [userMessage("hello")] });
    assert.equal(res.status, 200, res.text);
    await assertStrict(res.bytes, { threadId, runId });
    await allowed.kill();
  });

  test("frames carry ids: a client rejoins a finished or a live run with Last-Event-ID; a stop ends a run cancelled; protobuf on request", { timeout: TIMEOUT }, async () => {
    const lambda = await startLambda({ moto, table, label: "lambda-rejoin", env: { DEMO_TOKEN_DELAY_MS: String(TOKEN_DELAY_MS) } });
    await assertProtoRefundFlow(lambda, "L3030");
    await assertReconnectRejoinsTheRun(lambda, "L3010");
    await assertReconnectFollowsALiveRun(lambda, "L3011");
    await assertStopEndsTheRun(lambda, "L3012");
    await lambda.kill();
  });

  test("DEMO_LLM=openai: a model drives the refund; the approved refund runs once", { timeout: TIMEOUT }, async () => {
    const model = await standIn(refundScript("L3013"));
    const lambda = await startLambda({
      moto, table, label: "lambda-llm",
      env: llmEnv(model),
    });
    await assertLlmRefundFlow(lambda, model, "L3013");
    await lambda.kill();
    await model.close();
  });

  test("DEMO_LLM=openai with HANDOFF_AUTH=api-key: the refund's approval policy holds", { timeout: TIMEOUT }, async () => {
    const model = await standIn(refundScript("L3014"));
    const lambda = await startLambda({ moto, table, label: "lambda-llm-policy", env: policyEnv(model) });
    await assertLlmApprovalPolicy(lambda, "L3014");
    await lambda.kill();
    await model.close();
  });

  test("SSE arrives incrementally through the function URL (not buffered)", { timeout: TIMEOUT }, async () => {
    const lambda = await startLambda({ moto, table, label: "lambda-slow", env: { DEMO_TOKEN_DELAY_MS: String(TOKEN_DELAY_MS) } });
    await assertStreamsIncrementally(lambda, "L3002", TOKEN_DELAY_MS);
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

// DynamoDB faults in the middle of a run, injected by a proxy between the function and moto.
// The function keeps its production SDK retry policy (standard, 3 attempts); the proxy's
// faults last for every attempt of the request they target.
describe("AWS Lambda: DynamoDB faults mid-run (fault proxy in front of moto_server)", { timeout: TIMEOUT }, () => {
  let moto;
  let proxy;
  let lambda;
  const table = `handoff_faults_${Date.now()}`;
  before(async () => {
    moto = await startMoto();
    proxy = await startFaultProxy(moto.endpoint);
    // Slow tokens leave time to arm the proxy between RUN_STARTED and the finish commit.
    lambda = await startLambda({ moto: proxy, table, label: "lambda-faults", env: { DEMO_TOKEN_DELAY_MS: "40" } });
  });
  after(async () => {
    await proxy?.close();
    await stopAll();
  });

  /** POSTs a run and calls `arm` as soon as RUN_STARTED has arrived; resolves to the body. */
  async function streamArming(body, arm) {
    const res = await fetch(`${lambda.url}/agent`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200);
    const chunks = [];
    let armed = false;
    for await (const chunk of res.body) {
      chunks.push(Buffer.from(chunk));
      if (!armed && Buffer.concat(chunks).includes("RUN_STARTED")) {
        arm();
        armed = true;
      }
    }
    assert.ok(armed, "RUN_STARTED never arrived");
    return Buffer.concat(chunks);
  }

  async function view(threadId) {
    const res = await request(`${lambda.url}/threads/${threadId}`);
    assert.equal(res.status, 200, res.text);
    return res.json;
  }

  function assertRunError(bytes, code) {
    const events = sseEvents(bytes);
    assert.equal(events.at(-1)?.type, "RUN_ERROR", JSON.stringify(events.map((e) => e.type)));
    assert.equal(events.at(-1).code, code);
    assert.ok(!events.some((e) => e.type === "RUN_FINISHED"), "a failed commit must not announce RUN_FINISHED");
  }

  test("throttling of the finish commit: in-stream STORE_UNAVAILABLE, nothing half-written, the thread released, the retry succeeds", { timeout: TIMEOUT }, async () => {
    const threadId = uid("thread");
    const runId = uid("run");
    const body = { threadId, runId, messages: [userMessage("Refund order L3101")] };
    const before = proxy.faulted;
    const bytes = await streamArming(body, () => proxy.throttleNextTransaction());
    proxy.heal();
    assert.ok(proxy.faulted - before >= 1, "the proxy throttled nothing");
    await assertStrict(bytes, { threadId, runId });
    assertRunError(bytes, "STORE_UNAVAILABLE");

    // The interrupt was never persisted, and the lease went back with the failure.
    const failed = await view(threadId);
    assert.equal(failed.status, "idle");
    assert.deepEqual(failed.pendingInterrupts, []);
    assert.deepEqual(failed.messages, []);
    assert.deepEqual(failed.lastRun, { runId, status: "errored" });

    const retry = await postJson(`${lambda.url}/agent`, body);
    assert.equal(retry.status, 200, retry.text);
    await assertStrict(retry.bytes, { threadId, runId });
    assert.equal(sseEvents(retry.bytes).at(-1)?.outcome?.type, "interrupt");
    const interrupted = await view(threadId);
    assert.equal(interrupted.status, "interrupted");
    assert.equal(interrupted.pendingInterrupts.length, 1);
    assert.doesNotMatch(lambda.logs(50_000), /panicked/);
  });

  test("throttling that outlasts the run: STORE_UNAVAILABLE, nothing half-written, the next run is a 409 with Retry-After, not a 5xx", { timeout: TIMEOUT }, async () => {
    const threadId = uid("thread");
    const runId = uid("run");
    const before = proxy.faulted;
    const bytes = await streamArming({ threadId, runId, messages: [userMessage("Refund order L3102")] }, () => proxy.throttleAll());
    proxy.heal();
    // The finish and the release of the lease were both refused, each after the SDK's retries.
    assert.ok(proxy.faulted - before >= 2, `only ${proxy.faulted - before} throttled requests`);
    await assertStrict(bytes, { threadId, runId });
    assertRunError(bytes, "STORE_UNAVAILABLE");

    const stuck = await view(threadId);
    assert.equal(stuck.status, "running", "the lease lapses at the invocation deadline");
    assert.deepEqual(stuck.pendingInterrupts, []);
    assert.deepEqual(stuck.messages, []);
    const busy = await postJson(`${lambda.url}/agent`, { threadId, runId: uid("run"), messages: [userMessage("hello")] });
    assert.equal(busy.status, 409, busy.text);
    assert.equal(busy.json?.code, "THREAD_BUSY");
    assert.ok(Number(busy.headers["retry-after"]) >= 1);
  });

  test("a conditional-check failure is a 409 before the stream or an in-stream RUN_ERROR, never a 5xx", { timeout: TIMEOUT }, async () => {
    // Every claim transaction cancelled by a condition: the engine re-reads, retries, then answers busy.
    proxy.cancelTransactions();
    const before = proxy.faulted;
    const claim = await postJson(`${lambda.url}/agent`, { threadId: uid("thread"), runId: uid("run"), messages: [userMessage("hello")] }, { allow5xx: true });
    proxy.heal();
    assert.ok(proxy.faulted > before, "the proxy cancelled nothing");
    assert.equal(claim.status, 409, claim.text);
    assert.equal(claim.json?.code, "THREAD_BUSY");

    // The finish commit cancelled by its fence: the run lost its lease.
    const threadId = uid("thread");
    const runId = uid("run");
    const bytes = await streamArming({ threadId, runId, messages: [userMessage("Refund order L3103")] }, () => proxy.cancelNextTransaction());
    proxy.heal();
    await assertStrict(bytes, { threadId, runId });
    assertRunError(bytes, "LEASE_LOST");
    assert.deepEqual((await view(threadId)).pendingInterrupts, []);
    assert.doesNotMatch(lambda.logs(50_000), /panicked/);
  });
});

// The CopilotKit flows of copilotkit.test.mjs, from @copilotkit/core to the function URL's /copilotkit routes.
describe("AWS Lambda: CopilotKit runtime protocol with @copilotkit/core", { timeout: TIMEOUT }, () => {
  let moto;
  let lambda;
  let slow;
  const table = `handoff_ck_${Date.now()}`;
  before(async () => {
    moto = await startMoto();
    lambda = await startLambda({ moto, table, label: "lambda-ck" });
    slow = await startLambda({ moto, table, label: "lambda-ck-slow", env: { DEMO_TOKEN_DELAY_MS: String(TOKEN_DELAY_MS) } });
  });
  after(async () => {
    const outputs = [lambda, slow].filter(Boolean).map((l) => l.proc.logs(Infinity));
    await stopAll();
    for (const output of outputs) {
      assert.doesNotMatch(output, /panicked/, output.slice(-4000));
      // `cargo lambda watch` never restarts a function that exited: every later request
      // to it hangs until its timeout. Name the exit instead of leaving only the timeout.
      assert.doesNotMatch(output, /command exited/, output.slice(-4000));
    }
  });

  test("CopilotKit: discovery over GET /info; unknown agents and methods are JSON 4xx", { timeout: TIMEOUT }, async () => {
    await ck.assertDiscovery(lambda);
    await ck.assertUnknownsRefused(lambda);
  });
  test("CopilotKit: a run ends on the interrupt, resolved through the interrupt API, one refund", { timeout: TIMEOUT }, () =>
    ck.assertRunResolvedThroughInterruptApi(lambda, "L3020"));
  test("CopilotKit: connect after a reload re-presents history, state and the pending interrupt", { timeout: TIMEOUT }, () =>
    ck.assertReconnectAfterReload(lambda, "L3021"));
  test("CopilotKit: connect joins a live run and follows it to its end", { timeout: TIMEOUT }, () =>
    ck.assertConnectJoinsLiveRun(slow, "L3022"));
  test("CopilotKit: connect with Last-Event-ID rejoins the live run where the page dropped", { timeout: TIMEOUT }, () =>
    ck.assertConnectRejoinsByLastEventId(slow, "L3026"));
  test("CopilotKit: stopAgent cancels the run; a REST stop mid-stream ends it cancelled", { timeout: TIMEOUT }, async () => {
    await ck.assertStopAgentCancels(slow, "L3023");
    await ck.assertRestStopWhileStreaming(slow, "L3024");
  });
  test("CopilotKit: single-route envelope; connect on a thread that never ran is empty", { timeout: TIMEOUT }, async () => {
    await ck.assertSingleRouteMode(lambda, "L3025");
    await ck.assertConnectToNewThreadIsEmpty(lambda);
  });
  test("CopilotKit's thread store over DynamoDB: list, next page, rename, archive, unarchive, delete (REST and envelope)", { timeout: TIMEOUT }, async () => {
    await ck.assertThreadStore(lambda, "rest");
    await ck.assertThreadStore(lambda, "single");
  });
});
