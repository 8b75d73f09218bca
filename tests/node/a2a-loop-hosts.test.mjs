// Issue 51's loop across hosts: one Handoff deployment delegating its fraud review to
// another over A2A, as a2a-loop.test.mjs does with two dev servers.
//
// 1. The Worker (workerd) delegates to Lambda (cargo lambda watch + moto): Lambda serves the
//    task, its approver answers there over AG-UI, and its pushes (from its outbox, the first
//    attempt made by the invocation that ran the run) wake the Worker's thread. Then the
//    input-required push fails once (a gate in front of the Worker answers 503): it arrives
//    only after a sweep, made by the invocation the SAM template's schedule sends
//    (infra/template.yaml's OutboxSweep input, sent to the emulator's Invoke API).
// 2. A dev server delegates to the Worker, whose first push fails the same way: the Cron
//    Trigger's `scheduled` handler sweeps it (the Worker's per-request sweep is held off by
//    a long HANDOFF_OUTBOX_POLL_MS, so only the trigger can deliver it).
// Each ends with one refund, on the delegate.
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { assertBinaries, postJson, request, sseEvents, startDevServer, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { assertNoPanics, ledger, uid, userMessage } from "./lib/flows.mjs";
import { startLambda, startMoto, stopAll } from "./lib/lambda.mjs";
import { startWorker, stopAllWorkers } from "./lib/worker.mjs";

const TIMEOUT = 900_000;
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const order = (prefix) => `${prefix}${Math.floor(5000 + Math.random() * 4999)}`;

assertBinaries();

/** A gate in front of a host: forwards every request, or answers 503 while shut (counted). */
async function startGate() {
  const gate = { target: null, shut: false, refused: 0 };
  const server = http.createServer((req, res) => {
    if (gate.shut || !gate.target) {
      gate.refused += 1;
      res.writeHead(503, { "content-type": "application/json" }).end('{"code":"GATE_SHUT","message":"test gate"}');
      return;
    }
    const upstream = http.request(new URL(req.url, gate.target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", (err) => res.writeHead(502).end(String(err)));
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  gate.url = `http://127.0.0.1:${server.address().port}`;
  gate.close = () => new Promise((resolve) => server.close(resolve));
  return gate;
}

const rpc = (host, method, params) =>
  postJson(`${host.url}/a2a`, { jsonrpc: "2.0", id: 1, method, params }, { headers: { "A2A-Version": "1.0" } });

/** The task as the delegating host's thread view shows it (what its receiver accepted). */
async function taskOnFirst(first, threadId, taskId) {
  const view = await request(`${first.url}/threads/${threadId}`);
  return view.json?.a2aTasks?.find((t) => t.task.id === taskId)?.task;
}

/** The refund on `first`, which delegates its fraud review and waits for it. */
async function delegate(first, orderId) {
  const threadId = uid("thread-hosts");
  const asked = await postJson(`${first.url}/agent`, { threadId, runId: uid("run"), messages: [userMessage(`Refund order ${orderId}`)] });
  assert.equal(asked.status, 200, asked.text);
  const waiting = sseEvents(asked.bytes).at(-1)?.outcome?.interrupts?.[0];
  assert.equal(waiting?.reason, "a2a:task", asked.text);
  return { threadId, waiting, taskId: waiting.metadata["a2a.taskId"] };
}

/** The delegated task on `second` once it waits for its approver (the send returned at
 * once, `returnImmediately`), and the approver's question. */
async function question(second, taskId) {
  let got;
  await waitFor(
    async () => {
      got = await rpc(second, "GetTask", { id: taskId });
      return got.json?.result?.status?.state === "TASK_STATE_INPUT_REQUIRED";
    },
    { timeoutMs: 30_000, intervalMs: 200, what: "the delegated task waiting for its approver", detail: () => got?.text },
  );
  const task = got.json.result;
  return { task, asked: task.status.message.parts.find((p) => p.data)?.data };
}

/** The approver answers on `second` over AG-UI; the task completes there. */
async function approve(second, { task, asked }) {
  const answer = { interruptId: asked.interruptId, status: "resolved", payload: { approved: true } };
  const approved = await postJson(`${second.url}/agent`, { threadId: task.contextId, runId: uid("run"), messages: [], resume: [answer] });
  assert.equal(approved.status, 200, approved.text);
  assert.equal(sseEvents(approved.bytes).at(-1).outcome?.type, "success", approved.text);
  const done = await rpc(second, "GetTask", { id: task.id });
  assert.equal(done.json.result.status.state, "TASK_STATE_COMPLETED", "the task follows the AG-UI answer");
}

/** `first` goes on once the review completed: to its own approval. One refund, on `second`. */
async function finish(first, second, { threadId, waiting, taskId }, orderId) {
  await waitFor(async () => (await taskOnFirst(first, threadId, taskId))?.status?.state === "TASK_STATE_COMPLETED", {
    timeoutMs: 30_000,
    what: "the second's completed push, accepted by the first's receiver",
  });
  const reviewed = await postJson(`${first.url}/agent`, {
    threadId,
    runId: uid("run"),
    messages: [],
    resume: [{ interruptId: waiting.id, status: "resolved", payload: {} }],
  });
  assert.equal(reviewed.status, 200, reviewed.text);
  assert.equal(sseEvents(reviewed.bytes).at(-1).outcome?.interrupts?.[0]?.reason, "tool_call", "the first goes on to its own approval");
  assert.equal((await ledger(second, orderId)).refunds, 1, "one refund on the second");
  assert.equal((await ledger(first, orderId)).refunds, 0, "the first has not refunded yet");
}

/** The first push fails at `gate`; no sweep delivers it until `sweep()` runs once it is due. */
async function assertRetriedBySweep(first, second, gate, orderId, sweep) {
  gate.shut = true;
  const refusedBefore = gate.refused;
  const loop = await delegate(first, orderId);
  const asked = await question(second, loop.taskId);
  await waitFor(() => gate.refused > refusedBefore, { timeoutMs: 15_000, what: "the input-required push, refused at the gate" });
  gate.shut = false;
  const before = (await taskOnFirst(first, loop.threadId, loop.taskId))?.status?.state;
  assert.notEqual(before, "TASK_STATE_INPUT_REQUIRED", "the refused push did not arrive");
  // The retry is due 5 s after the failed attempt; until then a sweep leaves it.
  await waitFor(
    async () => {
      await sweep();
      return (await taskOnFirst(first, loop.threadId, loop.taskId))?.status?.state === "TASK_STATE_INPUT_REQUIRED";
    },
    { timeoutMs: 45_000, intervalMs: 1_000, what: "the input-required push, retried by a sweep" },
  );
  await approve(second, asked);
  await finish(first, second, loop, orderId);
}

describe("the Worker delegating to Lambda over A2A", { timeout: TIMEOUT }, () => {
  let lambda;
  let worker;
  let gate;
  before(async () => {
    gate = await startGate();
    const moto = await startMoto();
    lambda = await startLambda({
      moto,
      table: `handoff_loop_hosts_${Date.now()}`,
      label: "agent-lambda (the delegate)",
      publicUrl: true,
      env: { HANDOFF_A2A_ALLOW_LOOPBACK: "true", HANDOFF_OUTBOX_POLL_MS: "500" },
    });
    worker = await startWorker({
      label: "worker (delegating)",
      vars: { DEMO_FRAUD_AGENT_URL: lambda.url, HANDOFF_A2A_ALLOW_LOOPBACK: "true", HANDOFF_PUBLIC_URL: gate.url },
    });
    gate.target = worker.url;
  });
  after(async () => {
    const output = lambda?.logs(200_000) ?? "";
    if (worker) assertNoPanics(worker);
    await stopAllWorkers();
    await stopAll();
    await gate?.close();
    assert.doesNotMatch(output, /panicked/, output.slice(-4000));
  });

  test("Lambda's approver answers there; its pushes wake the Worker; one refund on Lambda", async () => {
    const orderId = order("H");
    const loop = await delegate(worker, orderId);
    const asked = await question(lambda, loop.taskId);
    await waitFor(async () => (await taskOnFirst(worker, loop.threadId, loop.taskId))?.status?.state === "TASK_STATE_INPUT_REQUIRED", {
      timeoutMs: 30_000,
      what: "Lambda's input-required push, accepted by the Worker's receiver",
    });
    assert.equal((await ledger(lambda, orderId)).refunds, 0);
    await approve(lambda, asked);
    await finish(worker, lambda, loop, orderId);
  });

  test("a failed push is retried by the sweep of the template's scheduled invocation", async () => {
    const template = fs.readFileSync(path.join(REPO, "infra/template.yaml"), "utf8");
    const input = /OutboxSweep:[\s\S]*?Input: '([^']+)'/.exec(template)?.[1];
    assert.ok(input, "infra/template.yaml schedules an OutboxSweep with an input");
    // The emulator's Invoke API, as EventBridge calls the function (no Function URL).
    const invoke = new URL(lambda.url).origin + "/2015-03-31/functions/agent-lambda/invocations";
    const sweep = async () => {
      const res = await fetch(invoke, { method: "POST", body: input, signal: AbortSignal.timeout(30_000) });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      assert.match(text, /"status":\s*"ok"/, "the schedule's input is answered as GET /healthz");
    };
    await assertRetriedBySweep(worker, lambda, gate, order("S"), sweep);
  });
});

describe("a dev server delegating to the Worker over A2A", { timeout: TIMEOUT }, () => {
  let first;
  let worker;
  let gate;
  before(async () => {
    gate = await startGate();
    // A request sweeps at most once an hour here: only the Cron Trigger retries.
    worker = await startWorker({
      label: "worker (the delegate)",
      vars: { HANDOFF_A2A_ALLOW_LOOPBACK: "true", HANDOFF_OUTBOX_POLL_MS: "3600000" },
    });
    first = await startDevServer({
      label: "dev-server (delegating)",
      env: { DEMO_FRAUD_AGENT_URL: worker.url, HANDOFF_A2A_ALLOW_LOOPBACK: "true", HANDOFF_PUBLIC_URL: gate.url },
    });
    gate.target = first.url;
  });
  after(async () => {
    if (worker) assertNoPanics(worker);
    await stopAllWorkers();
    await stopAllServers();
    await gate?.close();
  });

  test("the Worker's failed push is retried by its Cron Trigger; one refund on the Worker", () =>
    assertRetriedBySweep(first, worker, gate, order("C"), () => worker.scheduled()));
});
