// Issue 49's MCP scenario on one host, as a new user configures it: HANDOFF_AUTH=api-key,
// the demo's LLM mode, HANDOFF_MCP_SERVERS naming our counting server (official SDK) and
// the reference server-everything, HANDOFF_MCP_REQUIRE_APPROVAL=counter__count.
// alice (no role) asks for a count: her own approval is 403 FORBIDDEN naming the rule, her
// edit is refused; bob (approver) cannot edit it (422), sees it in GET /approvals and reads
// the thread; his approval calls the tool exactly once, and a replay calls nothing.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { postJson, request, sseEvents } from "./devserver.mjs";
import { assertStrict, uid, userMessage } from "./flows.mjs";
import { COUNTER_TOKEN, mcpEnv, mcpFixtures } from "./mcp-flows.mjs";
import { POLICY_KEYS, dialects } from "./model-standin.mjs";

const { openai } = dialects;
const as = (who) => ({ headers: { authorization: `Bearer ${POLICY_KEYS[who]}` } });

/** The MCP settings with api-key authentication: alice asks, bob holds `approver`. */
export function mcpPolicyEnv(model, servers) {
  return {
    ...mcpEnv(model, servers),
    HANDOFF_AUTH: "api-key",
    HANDOFF_API_KEYS: `acme/alice=${POLICY_KEYS.alice},acme/bob+approver=${POLICY_KEYS.bob}`,
  };
}

export async function assertMcpApprovalPolicy(server, model, counter) {
  const callsBefore = counter.calls.length;
  model.script([openai.tools([["counter__count", JSON.stringify({ label: "four-eyes" })]]), openai.text("Counted.")]);
  const threadId = uid("thread-mcp-policy");
  const runId = uid("run");
  const first = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage("Count for me")] }, as("alice"));
  assert.equal(first.status, 200, first.text);
  await assertStrict(first.bytes, { threadId, runId }, "the asking run");
  const finished = sseEvents(first.bytes).at(-1);
  assert.equal(finished.outcome?.type, "interrupt", JSON.stringify(finished));
  const interrupt = finished.outcome.interrupts[0];
  assert.deepEqual(interrupt.metadata?.mcp, { server: "counter", tool: "count" }, JSON.stringify(interrupt));
  const policy = interrupt.metadata?.["handoff.approval"];
  assert.deepEqual(policy?.roles, ["approver"], `the policy survives the MCP metadata: ${JSON.stringify(interrupt)}`);
  assert.equal(policy.notRequester, true);
  assert.equal(policy.source, "mcpTool");

  const answer = (who, payload, id = uid("run")) =>
    postJson(`${server.url}/agent`, {
      threadId, runId: id, messages: [],
      resume: [{ interruptId: interrupt.id, status: "resolved", payload }],
    }, as(who));
  const selfApproved = await answer("alice", { approved: true });
  assert.equal(selfApproved.status, 403, selfApproved.text);
  assert.equal(selfApproved.json?.code, "FORBIDDEN", selfApproved.text);
  assert.match(selfApproved.json?.message ?? "", /needs the role approver/, selfApproved.text);
  const selfEdited = await answer("alice", { approved: true, editedArgs: { label: "anything" } });
  assert.equal(selfEdited.status, 403, selfEdited.text);
  const widened = await answer("bob", { approved: true, editedArgs: { label: "anything" } });
  assert.equal(widened.status, 422, widened.text);
  assert.equal(widened.json?.code, "RESUME_PAYLOAD_INVALID", widened.text);
  assert.match(widened.json?.message ?? "", /editedArgs\.label/, widened.text);
  assert.equal(counter.calls.length, callsBefore, "nothing called before the approval");

  const inbox = await request(`${server.url}/approvals`, as("bob"));
  assert.equal(inbox.status, 200, inbox.text);
  assert.ok(inbox.json.approvals.some((a) => a.interruptId === interrupt.id && a.threadId === threadId), inbox.text);
  const notAlices = await request(`${server.url}/approvals`, as("alice"));
  assert.ok(!notAlices.json.approvals.some((a) => a.interruptId === interrupt.id), `alice may not approve it: ${notAlices.text}`);
  const thread = await request(`${server.url}/threads/${threadId}`, as("bob"));
  assert.equal(thread.status, 200, thread.text);

  const approvedId = uid("run");
  const approved = await answer("bob", { approved: true }, approvedId);
  assert.equal(approved.status, 200, approved.text);
  await assertStrict(approved.bytes, { threadId, runId: approvedId }, "the approved run");
  const result = sseEvents(approved.bytes).find((e) => e.type === "TOOL_CALL_RESULT");
  assert.equal(result?.content, `call ${callsBefore + 1}: four-eyes`, approved.text);
  assert.equal(counter.calls.length, callsBefore + 1, "exactly one call");
  const replay = await answer("bob", { approved: true }, approvedId);
  assert.equal(replay.status, 200, replay.text);
  assert.equal(counter.calls.length, callsBefore + 1, "a replay calls nothing");
  assert.deepEqual([...new Set(counter.authorizations)], [`Bearer ${COUNTER_TOKEN}`], "only the server's own token");
}

/** The scenario as a suite on one host: `start(env)` resolves to {url}, `stop()` stops it. */
export function describeMcpPolicy(title, { start, stop, timeout }) {
  describe(title, { timeout }, () => {
    const fixtures = mcpFixtures({ start, stop, env: mcpPolicyEnv });

    test("an MCP tool's approval: not the requester, no edits, the approver's inbox, one call", async () => {
      await assertMcpApprovalPolicy(fixtures.server, fixtures.model, fixtures.counter);
    });
  });
}
