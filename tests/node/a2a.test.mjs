// A2A delegation end to end: the dev server's demo agent delegates a fraud
// review to a remote agent built on the official @a2a-js/sdk, which pushes
// real notifications to our receiver; the waiting thread becomes answerable
// and the resume run carries the artifact. Plus negative cases against the
// receiver with raw fetch.
//
//   cargo build -p dev-server -p handoff-tests
//   cd tests/node && HANDOFF_BIN_DIR=../../target/debug node --test a2a.test.mjs

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { postChunked, postJson, request, sseEvents, startDevServer, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { assertNoPanics, assertStrict, rawRefundInterrupt, uid } from "./lib/flows.mjs";
import { startFraudAgent } from "./lib/a2a-remote.mjs";
import { startWorker, stopAllWorkers } from "./lib/worker.mjs";

// The same suite runs on every host that serves the receiver: the dev server
// (native, SQLite) and the Worker in workerd (Durable Objects + KV).
const HOSTS = [
  ["dev-server", (env) => startDevServer({ env, label: "dev-server (a2a)" })],
  ["Workers (workerd)", (vars) => startWorker({ vars: { ...vars, HANDOFF_INLINE_LIMIT: "2048" }, label: "worker (a2a)" })],
];

let remote;
let server;

before(async () => {
  remote = await startFraudAgent();
});

after(async () => {
  await stopAllServers();
  await stopAllWorkers();
  await remote?.close();
});

/** Delegating refund run: {threadId, interrupt, taskId, send} (send = the SendMessage the remote received). */
async function delegate(orderId) {
  const before = remote.requests.length;
  const first = await rawRefundInterrupt(server, orderId);
  const { interrupt } = first;
  assert.equal(interrupt.reason, "a2a:task", JSON.stringify(interrupt));
  const taskId = interrupt.metadata?.["a2a.taskId"];
  assert.ok(taskId, "the interrupt metadata carries the task id");
  const sends = remote.requests.slice(before).filter((r) => r.method === "SendMessage");
  assert.equal(sends.length, 1, "exactly one SendMessage per delegation");
  return { ...first, taskId, send: sends[0] };
}

async function threadView(threadId) {
  const res = await request(`${server.url}/threads/${threadId}`);
  assert.equal(res.status, 200, res.text);
  return res.json;
}

async function resume(threadId, interruptId, status = "resolved") {
  const runId = uid("run");
  const res = await postJson(`${server.url}/agent`, {
    threadId,
    runId,
    messages: [],
    resume: [{ interruptId, status, payload: {} }],
  });
  assert.equal(res.status, 200, res.text);
  await assertStrict(res.bytes, { threadId, runId });
  const events = sseEvents(res.bytes);
  return { events, finished: events.at(-1), text: textOf(events) };
}

const textOf = (events) =>
  events
    .filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
    .map((e) => e.delta)
    .join("");

for (const [host, start] of HOSTS) describe(`A2A delegation with push notifications on ${host}`, () => {
  before(async () => {
    server = await start({ DEMO_FRAUD_AGENT_URL: remote.url, HANDOFF_A2A_ALLOW_LOOPBACK: "true" });
  });
  after(() => assertNoPanics(server));

  test("delegate, wait for the pushed result, resume with the artifact, approve", async () => {
    const { threadId, interrupt, taskId, send } = await delegate("A1024");

    // The outbound SendMessage: v1.0 header, returnImmediately, push config with a fresh token.
    assert.equal(send.headers["a2a-version"], "1.0");
    const config = send.body.params.configuration;
    assert.equal(config.returnImmediately, true);
    const push = config.taskPushNotificationConfig;
    assert.match(push.url, new RegExp(`^${server.url}/a2a/push/[A-Za-z0-9._~:-]+$`));
    assert.ok(push.token && push.token.length >= 32, "a long random token");
    assert.match(send.body.params.message.parts[0].text, /A1024/);

    // Answering before the remote task is done: 409 INTERRUPT_NOT_READY before any stream, nothing changed.
    // Wait for the remote's WORKING push first: after it the remote stays quiet until complete().
    const waiting = await waitFor(
      async () => {
        const v = await threadView(threadId);
        return v.a2aTasks?.some((t) => t.task.status.state === "TASK_STATE_WORKING") ? v : undefined;
      },
      { timeoutMs: 15_000, what: "the remote's WORKING push" },
    );
    const earlyRunId = uid("run");
    const earlyBody = { threadId, runId: earlyRunId, messages: [], resume: [{ interruptId: interrupt.id, status: "resolved", payload: {} }] };
    const early = await postJson(`${server.url}/agent`, earlyBody);
    assert.equal(early.status, 409, early.text);
    assert.match(early.headers["content-type"] ?? "", /^application\/json/);
    assert.equal(early.json.code, "INTERRUPT_NOT_READY", early.text);
    assert.match(early.json.message, new RegExp(`${taskId}.*TASK_STATE_WORKING`));
    assert.deepEqual(await threadView(threadId), waiting, "a refused answer changes nothing");
    const unrecorded = await request(`${server.url}/threads/${threadId}/runs/${earlyRunId}/events`);
    assert.equal(unrecorded.status, 404, "the refused run was not recorded");

    // The remote agent finishes; its pushes reach the receiver.
    remote.complete(taskId, { verdict: "No fraud signals for A1024: approve." });
    const view = await waitFor(
      async () => {
        const v = await threadView(threadId);
        const task = v.a2aTasks?.find((t) => t.task.id === taskId);
        return task?.task.status.state === "TASK_STATE_COMPLETED" && task.task.artifacts?.length ? v : undefined;
      },
      { timeoutMs: 15_000, what: "the pushed completion in GET /threads" },
    );
    const snapshot = view.a2aTasks.find((t) => t.task.id === taskId);
    assert.equal(snapshot.task.artifacts[0].parts[0].text, "No fraud signals for A1024: approve.");
    assert.equal(view.pendingInterrupts[0].id, interrupt.id);

    // The same answer (same runId: the refusal recorded nothing) now runs: the agent gets
    // the status and artifacts, then asks for approval.
    const res = await postJson(`${server.url}/agent`, earlyBody);
    assert.equal(res.status, 200, res.text);
    await assertStrict(res.bytes, { threadId, runId: earlyRunId });
    const events = sseEvents(res.bytes);
    const resumed = { events, finished: events.at(-1), text: textOf(events) };
    assert.match(resumed.text, /Fraud review TASK_STATE_COMPLETED: No fraud signals for A1024: approve\./);
    const delta = resumed.events.find(
      (e) => e.type === "STATE_DELTA" && e.delta.some((op) => op.path === "/fraudReview"),
    );
    assert.ok(delta, "state.fraudReview is published");
    assert.equal(resumed.finished.outcome?.type, "interrupt");
    const approval = resumed.finished.outcome.interrupts[0];
    assert.equal(approval.reason, "tool_call");

    const approved = await postJson(`${server.url}/agent`, {
      threadId,
      runId: uid("run"),
      messages: [],
      resume: [{ interruptId: approval.id, status: "resolved", payload: { approved: true } }],
    });
    assert.equal(approved.status, 200, approved.text);
    assert.match(textOf(sseEvents(approved.bytes)), /was refunded for order A1024/);
  });

  test("cancelling the wait is accepted before the remote task is done", async () => {
    const { threadId, interrupt } = await delegate("C3072");
    const cancelled = await resume(threadId, interrupt.id, "cancelled");
    assert.equal(cancelled.finished.type, "RUN_FINISHED");
    assert.equal(cancelled.finished.outcome?.type ?? "success", "success", JSON.stringify(cancelled.finished));
    assert.match(cancelled.text, /fraud review was abandoned/);
    const view = await threadView(threadId);
    assert.deepEqual(view.pendingInterrupts, []);
    assert.equal(view.state.step, "cancelled");
  });

  test("the receiver rejects forgeries and tolerates duplicates, disorder and v0.3 bodies", async () => {
    const { threadId, taskId, send } = await delegate("B2048");
    const push = send.body.params.configuration.taskPushNotificationConfig;
    // Wait for the remote's own first pushes so the subscription is bound and quiet.
    await waitFor(
      async () => (await threadView(threadId)).a2aTasks?.some((t) => t.task.status.state === "TASK_STATE_WORKING"),
      { timeoutMs: 15_000, what: "the remote's WORKING push" },
    );
    const post = (body, token = push.token) =>
      request(push.url, {
        method: "POST",
        headers: { "content-type": "application/a2a+json", "x-a2a-notification-token": token },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    const later = (s) => new Date(Date.now() + s * 1000).toISOString();
    const status = (state, timestamp, id = taskId) => ({
      statusUpdate: { taskId: id, contextId: "ctx", status: { state, timestamp } },
    });

    // Ownership challenge.
    const challenge = await request(`${push.url}?validationToken=abc123`);
    assert.equal(challenge.status, 200);
    assert.equal(challenge.text, "abc123");

    // Forged token: 401, no detail.
    const forged = await post(status("TASK_STATE_COMPLETED", later(1)), "forged-token-0123456789abcdef");
    assert.equal(forged.status, 401, forged.text);
    assert.equal(forged.json.code, "UNAUTHORIZED");

    // Another task id: 403.
    const wrong = await post(status("TASK_STATE_COMPLETED", later(1), "some-other-task"));
    assert.equal(wrong.status, 403, wrong.text);

    // Oversized: 413, answered before the upload ends. On its own socket, which the server
    // may close without reading the rest (a kept-alive socket would fail the next request).
    const big = await postChunked(push.url, [Buffer.from(JSON.stringify({ statusUpdate: { taskId, pad: "x".repeat(1024 * 1024 + 10) } }))], {
      headers: { "content-type": "application/a2a+json", "x-a2a-notification-token": push.token },
    });
    assert.equal(big.status, 413, big.text);

    // Duplicate delivery: acknowledged once, the redelivery gets duplicate:true.
    const working = JSON.stringify(status("TASK_STATE_WORKING", later(10)));
    const d1 = await post(working);
    const d2 = await post(working);
    assert.equal(d1.status, 200, d1.text);
    assert.equal(d2.status, 200, d2.text);
    assert.equal(d1.json.duplicate, false);
    assert.equal(d2.json.duplicate, true);
    assert.equal(d2.json.outcome, d1.json.outcome);

    // v0.3 (`kind`) body accepted.
    const v03 = await post({
      kind: "status-update",
      taskId,
      contextId: "ctx",
      status: { state: "working", timestamp: later(20) },
      final: false,
    });
    assert.equal(v03.status, 200, v03.text);
    assert.equal(v03.json.taskId, taskId);

    // Out of order: completed, then a (newer-stamped) working → still completed.
    const done = await post(status("TASK_STATE_COMPLETED", later(30)));
    assert.equal(done.status, 200, done.text);
    assert.equal(done.json.state, "TASK_STATE_COMPLETED");
    const stale = await post(status("TASK_STATE_WORKING", later(40)));
    assert.equal(stale.status, 200, stale.text);
    assert.equal(stale.json.state, "TASK_STATE_COMPLETED");
    assert.equal(stale.json.outcome, "ignoredTerminal");
    const view = await threadView(threadId);
    assert.equal(view.a2aTasks.find((t) => t.task.id === taskId).task.status.state, "TASK_STATE_COMPLETED");
  });
});
