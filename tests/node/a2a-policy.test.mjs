// Issue 49's approval scenario on the A2A delegation path (dev server, HANDOFF_AUTH=api-key):
// alice asks for a refund, the demo delegates a fraud review to a remote agent on the
// official @a2a-js/sdk, its pushed completion lets alice's answer go on, and the refund's
// approval that follows holds its policy like every other path: alice's own approval is
// 403 naming the rule, her edit is refused, bob's out-of-bounds edit is 422, bob sees it in
// GET /approvals and reads the thread, and his approval refunds exactly once.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { postJson, request, sseEvents, startDevServer, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { assertStrict, ledger, uid, userMessage } from "./lib/flows.mjs";
import { startFraudAgent } from "./lib/a2a-remote.mjs";
import { POLICY_KEYS } from "./lib/model-standin.mjs";

const as = (who) => ({ headers: { authorization: `Bearer ${POLICY_KEYS[who]}` } });

describe("A2A delegation's approval on the dev server (HANDOFF_AUTH=api-key)", { timeout: 180_000 }, () => {
  let remote;
  let server;

  before(async () => {
    remote = await startFraudAgent();
    server = await startDevServer({
      label: "a2a-policy",
      env: {
        DEMO_FRAUD_AGENT_URL: remote.url,
        HANDOFF_A2A_ALLOW_LOOPBACK: "true",
        HANDOFF_AUTH: "api-key",
        HANDOFF_API_KEYS: `acme/alice=${POLICY_KEYS.alice},acme/bob+approver=${POLICY_KEYS.bob}`,
        DEMO_APPROVER_ABOVE_CENTS: "0",
      },
    });
  });

  after(async () => {
    await stopAllServers();
    await remote?.close();
  });

  test("the approval after a fraud review: not the requester, bounded edits, the approver's inbox, one refund", async () => {
    const orderId = "F6144";
    const threadId = uid("thread-a2a-policy");
    const post = (who, body) => postJson(`${server.url}/agent`, { threadId, messages: [], ...body }, as(who));
    const runId = uid("run");
    const first = await post("alice", { runId, messages: [userMessage(`Refund order ${orderId}`)] });
    assert.equal(first.status, 200, first.text);
    await assertStrict(first.bytes, { threadId, runId }, "the delegating run");
    const waiting = sseEvents(first.bytes).at(-1).outcome.interrupts[0];
    assert.equal(waiting.reason, "a2a:task", JSON.stringify(waiting));
    const taskId = waiting.metadata["a2a.taskId"];
    remote.complete(taskId, { verdict: `No fraud signals for ${orderId}: approve.` });
    await waitFor(
      async () => {
        const view = await request(`${server.url}/threads/${threadId}`, as("alice"));
        return view.json?.a2aTasks?.some((t) => t.task.id === taskId && t.task.status.state === "TASK_STATE_COMPLETED");
      },
      { timeoutMs: 15_000, what: "the pushed completion" },
    );
    const reviewed = await post("alice", { runId: uid("run"), resume: [{ interruptId: waiting.id, status: "resolved", payload: {} }] });
    assert.equal(reviewed.status, 200, reviewed.text);
    const approval = sseEvents(reviewed.bytes).at(-1).outcome?.interrupts?.[0];
    assert.equal(approval?.reason, "tool_call", reviewed.text);
    const policy = approval.metadata?.["handoff.approval"];
    assert.deepEqual(policy?.roles, ["approver"], JSON.stringify(approval));
    assert.equal(policy.source, "agent");

    const answer = (who, payload, id = uid("run")) =>
      post(who, { runId: id, resume: [{ interruptId: approval.id, status: "resolved", payload }] });
    const own = await answer("alice", { approved: true });
    assert.equal(own.status, 403, own.text);
    assert.equal(own.json?.code, "FORBIDDEN", own.text);
    assert.match(own.json.message, /needs the role approver/);
    const ownEdit = await answer("alice", { approved: true, editedArgs: { orderId, amountCents: 1, currency: "USD" } });
    assert.equal(ownEdit.status, 403, ownEdit.text);
    const wide = await answer("bob", { approved: true, editedArgs: { orderId: "Z9", amountCents: 99_999_999, currency: "USD" } });
    assert.equal(wide.status, 422, wide.text);
    assert.equal(wide.json?.code, "RESUME_PAYLOAD_INVALID", wide.text);

    const inbox = await request(`${server.url}/approvals`, as("bob"));
    assert.ok(inbox.json?.approvals?.some((a) => a.interruptId === approval.id), inbox.text);
    const thread = await request(`${server.url}/threads/${threadId}`, as("bob"));
    assert.equal(thread.status, 200, thread.text);
    assert.equal((await ledger(server, orderId, as("alice").headers)).refunds, 0, "nothing refunded yet");

    const yes = uid("run");
    const approved = await answer("bob", { approved: true }, yes);
    assert.equal(approved.status, 200, approved.text);
    assert.equal(sseEvents(approved.bytes).at(-1).outcome?.type, "success", approved.text);
    const replay = await answer("bob", { approved: true }, yes);
    assert.equal(replay.status, 200, replay.text);
    assert.equal((await ledger(server, orderId, as("alice").headers)).refunds, 1, "refunded exactly once");
  });
});
