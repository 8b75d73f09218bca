// Issue 53 on AWS Lambda (cargo lambda watch + moto): a background run (`Prefer:
// respond-async`) is claimed and answered 202; the template's scheduled invocation (its
// OutboxSweep input, sent to the emulator's Invoke API as EventBridge would) runs it. An
// invocation that times out mid-run hands the run over at its deadline instead of losing
// it, and the next scheduled invocation finishes it: the model's first answer and the
// tool's result are replayed from the store, not asked for again.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { assertBinaries } from "./lib/devserver.mjs";
import { uid, userMessage } from "./lib/flows.mjs";
import { startLambda, startMoto, stopAll } from "./lib/lambda.mjs";
import { llmEnv, refundScript, standIn } from "./lib/model-standin.mjs";

const TIMEOUT = 900_000;
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

assertBinaries();

describe("background runs and hand-overs on AWS Lambda", { timeout: TIMEOUT }, () => {
  let lambda;
  let model;
  let sweep;
  before(async () => {
    model = await standIn([]);
    const moto = await startMoto();
    lambda = await startLambda({
      moto,
      table: `handoff_background_${Date.now()}`,
      label: "agent-lambda (background)",
      // Runs get 6 s of an invocation (the emulator's deadline is always 10 minutes): the
      // run that outlives that is handed over at its deadline.
      env: { ...llmEnv(model), HANDOFF_RUN_BUDGET_MS: "6000" },
    });
    const template = fs.readFileSync(path.join(REPO, "infra/template.yaml"), "utf8");
    const input = /OutboxSweep:[\s\S]*?Input: '([^']+)'/.exec(template)?.[1];
    assert.ok(input, "infra/template.yaml schedules an invocation with an input");
    const invoke = new URL(lambda.url).origin + "/2015-03-31/functions/agent-lambda/invocations";
    sweep = async () => {
      const res = await fetch(invoke, { method: "POST", body: input, signal: AbortSignal.timeout(60_000) });
      const text = await res.text();
      assert.equal(res.status, 200, text);
    };
  });
  after(async () => {
    const output = lambda?.logs(200_000) ?? "";
    await stopAll();
    await model?.close();
    assert.doesNotMatch(output, /panicked/, output.slice(-4000));
  });

  async function background(orderId) {
    const threadId = uid("thread-bg");
    const runId = uid("run");
    const res = await fetch(`${lambda.url}/agent`, {
      method: "POST",
      headers: { "content-type": "application/json", prefer: "respond-async" },
      body: JSON.stringify({ threadId, runId, messages: [userMessage(`Refund order ${orderId}`)] }),
    });
    assert.equal(res.status, 202, await res.clone().text());
    assert.equal(res.headers.get("location"), `/threads/${threadId}/runs/${runId}`);
    return { threadId, runId };
  }

  async function status({ threadId, runId }) {
    const res = await fetch(`${lambda.url}/threads/${threadId}/runs/${runId}`);
    assert.equal(res.status, 200);
    return res.json();
  }

  test("202 at once; the scheduled invocation runs it to its interrupt", async () => {
    model.script(refundScript("L7101"));
    const before = model.requests.length;
    const run = await background("L7101");
    assert.equal((await status(run)).status, "running");
    assert.equal(model.requests.length, before, "nothing ran in the request's invocation");
    await sweep();
    const view = await status(run);
    assert.equal(view.status, "interrupted", JSON.stringify(view));
    assert.equal(view.interrupts.length, 1);
    assert.equal(model.requests.length - before, 2);
  });

  test("an invocation that times out mid-run hands it over; the next one finishes it, replaying what was done", async () => {
    // The model's second turn outlasts the first invocation's 6 s; asked again, it answers.
    const [lookup, propose] = refundScript("L7102");
    let slow = true;
    const held = (res) => {
      if (!slow) return respond(res, propose);
      slow = false;
      setTimeout(() => respond(res, propose), 20_000).unref();
    };
    model.script([lookup, held, held]);
    const before = model.requests.length;
    const run = await background("L7102");
    await sweep();
    const handed = await status(run);
    assert.equal(handed.status, "running", `handed over, not cancelled: ${JSON.stringify(handed)}`);
    await sweep();
    const view = await status(run);
    assert.equal(view.status, "interrupted", JSON.stringify(view));
    const asked = model.requests.slice(before).map((r) => r.body.messages.filter((m) => m.role === "tool").length);
    assert.deepEqual(asked, [0, 1, 1], "turn 1 once (replayed after); the lookup answered once; turn 2 asked again");
  });
});

/** Streams one scripted turn. */
function respond(res, turn) {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const frame of turn) res.write(frame);
  res.end();
}
