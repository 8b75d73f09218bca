// Issue 51's loop: two Handoff deployments (two dev-server processes), the first delegating
// its fraud review to the second over A2A. The second's refund needs approval; its approver
// answers there over AG-UI; the second's push (from its outbox) wakes the first's thread,
// whose receiver accepts it (its token and its JWT); the first goes on. One effect on the second, whatever the
// retries in between.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { postJson, request, sseEvents, startDevServer, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { assertStrict, ledger, uid, userMessage } from "./lib/flows.mjs";

const rpc = (url, method, params) =>
  postJson(`${url}/a2a`, { jsonrpc: "2.0", id: 1, method, params }, { headers: { "A2A-Version": "1.0" } });

describe("two Handoff deployments, one delegating to the other over A2A (dev servers)", { timeout: 180_000 }, () => {
  let first;
  let second;

  before(async () => {
    // The second signs its pushes (ES256, key at /.well-known/jwks.json); the first's
    // receiver requires the token and that JWT on every push.
    second = await startDevServer({
      label: "a2a-loop-second",
      env: { HANDOFF_A2A_ALLOW_LOOPBACK: "true", HANDOFF_A2A_PUSH_JWT: "true" },
    });
    first = await startDevServer({
      label: "a2a-loop-first",
      env: {
        DEMO_FRAUD_AGENT_URL: second.url,
        DEMO_FRAUD_AGENT_JWKS_URL: `${second.url}/.well-known/jwks.json`,
        HANDOFF_A2A_ALLOW_INSECURE_JWKS: "true",
        HANDOFF_A2A_ALLOW_LOOPBACK: "true",
      },
    });
  });
  after(stopAllServers);

  const taskOnFirst = async (threadId, taskId) => {
    const view = await request(`${first.url}/threads/${threadId}`);
    return view.json?.a2aTasks?.find((t) => t.task.id === taskId)?.task;
  };

  test("the second publishes the key its pushes are signed with; the first publishes none", async () => {
    const jwks = await request(`${second.url}/.well-known/jwks.json`);
    assert.equal(jwks.status, 200, jwks.text);
    const [key] = jwks.json.keys;
    assert.deepEqual([key.kty, key.crv, key.alg], ["EC", "P-256", "ES256"]);
    assert.equal("d" in key, false, "no private part");
    assert.equal((await request(`${first.url}/.well-known/jwks.json`)).status, 404);
  });

  test("the second's approver answers there; its push wakes the first; one refund on the second", async () => {
    const orderId = "A1024";
    const threadId = uid("thread-loop");
    const runId = uid("run");
    const asked = await postJson(`${first.url}/agent`, { threadId, runId, messages: [userMessage(`Refund order ${orderId}`)] });
    assert.equal(asked.status, 200, asked.text);
    await assertStrict(asked.bytes, { threadId, runId }, "the delegating run");
    const waiting = sseEvents(asked.bytes).at(-1).outcome?.interrupts?.[0];
    assert.ok(waiting, asked.text.slice(-600));
    assert.equal(waiting.reason, "a2a:task", JSON.stringify(waiting));
    const taskId = waiting.metadata["a2a.taskId"];

    // On the second, the delegated task waits for its approver.
    const got = await rpc(second.url, "GetTask", { id: taskId });
    const task = got.json.result;
    assert.equal(task?.status?.state, "TASK_STATE_INPUT_REQUIRED", got.text);
    const question = task.status.message.parts.find((p) => p.data)?.data;
    await waitFor(async () => (await taskOnFirst(threadId, taskId))?.status?.state === "TASK_STATE_INPUT_REQUIRED", {
      timeoutMs: 15_000,
      what: "the second's input-required push, accepted by the first's receiver",
    });
    assert.equal((await ledger(second, orderId)).refunds, 0);

    // The approver answers on the second, over AG-UI, on the task's context.
    const answer = { interruptId: question.interruptId, status: "resolved", payload: { approved: true } };
    const approved = await postJson(`${second.url}/agent`, { threadId: task.contextId, runId: uid("run"), messages: [], resume: [answer] });
    assert.equal(approved.status, 200, approved.text);
    assert.equal(sseEvents(approved.bytes).at(-1).outcome?.type, "success", approved.text);
    const done = await rpc(second.url, "GetTask", { id: taskId });
    assert.equal(done.json.result.status.state, "TASK_STATE_COMPLETED", "the task follows the AG-UI answer");

    await waitFor(async () => (await taskOnFirst(threadId, taskId))?.status?.state === "TASK_STATE_COMPLETED", {
      timeoutMs: 15_000,
      what: "the second's completed push, accepted by the first's receiver",
    });
    const reviewed = await postJson(`${first.url}/agent`, {
      threadId,
      runId: uid("run"),
      messages: [],
      resume: [{ interruptId: waiting.id, status: "resolved", payload: {} }],
    });
    assert.equal(reviewed.status, 200, reviewed.text);
    const next = sseEvents(reviewed.bytes).at(-1);
    assert.equal(next.outcome?.interrupts?.[0]?.reason, "tool_call", "the first goes on to its own approval");
    assert.equal((await ledger(second, orderId)).refunds, 1, "one refund on the second");
    assert.equal((await ledger(first, orderId)).refunds, 0, "the first has not refunded yet");
  });
});
