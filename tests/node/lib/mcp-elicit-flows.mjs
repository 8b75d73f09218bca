// The session path's server-initiated elicitation (issue 52): the official
// @modelcontextprotocol/sdk client declares form elicitation at initialize, and the server
// asks an interrupt as `elicitation/create` on the tools/call's stream. The client's answer
// is a POST that may reach any instance; the call answers once the answer's run ended.
// Host-agnostic: each flow takes `host = {url, headers?, ledger(orderId)}`. Faults (a
// response sent twice, a response sent to another instance) are made in the transport's
// fetch; the client itself is the SDK's.
import assert from "node:assert/strict";
import { TOOL, sdkClient } from "./mcp-server-flows.mjs";

/** The elicitation requests `handler` saw, and a handler answering each with `answer`. */
function answering(answer) {
  const seen = [];
  const handler = async (request) => {
    seen.push(request.params);
    return typeof answer === "function" ? answer(request) : answer;
  };
  return { seen, handler };
}

/** A JSON-RPC response (what a client sends back for a server's request), else null. */
function responseIn(init) {
  if (init?.method !== "POST" || typeof init.body !== "string") return null;
  try {
    const message = JSON.parse(init.body);
    return !message.method && ("result" in message || "error" in message) ? message : null;
  } catch {
    return null;
  }
}

/**
 * A fetch that sends the client's responses by `mode`: "replay" (sent, then sent again once
 * answered), "race" (sent twice at once) or `{to: url}` (to another instance's /mcp).
 * `sent` counts the response POSTs and their statuses.
 */
export function responseFault(mode) {
  const sent = [];
  const fetchImpl = async (url, init) => {
    if (!responseIn(init)) return fetch(url, init);
    const post = async (target) => {
      const res = await fetch(target, init);
      sent.push(res.status);
      return res;
    };
    if (mode === "replay") {
      const first = await post(url);
      await first.arrayBuffer();
      return post(url);
    }
    if (mode === "race") {
      const [first, second] = await Promise.all([post(url), post(url)]);
      await second.arrayBuffer();
      return first;
    }
    return post(`${mode.to}/mcp`);
  };
  return { sent, fetch: fetchImpl };
}

/** The refund asked over elicitation: its one request, checked, and the call's result. */
async function elicitedRefund(host, orderId, answer, { fetch: fetchImpl } = {}) {
  const { seen, handler } = answering(answer);
  const { client } = await sdkClient(host, { onElicit: handler, fetch: fetchImpl });
  try {
    const result = await client.callTool({ name: TOOL, arguments: { message: `Refund order ${orderId}` } });
    assert.equal(seen.length, 1, `one elicitation: ${JSON.stringify(seen)}`);
    assert.match(seen[0].message, new RegExp(orderId));
    assert.equal(seen[0].requestedSchema.properties.approved.type, "boolean", JSON.stringify(seen[0]));
    return result;
  } finally {
    await client.close();
  }
}

const accept = { action: "accept", content: { approved: true } };

/** accept → the call answers with the finished run; exactly one refund. */
export async function assertElicitAccept(host, orderId, opts) {
  const result = await elicitedRefund(host, orderId, accept, opts);
  assert.ok(!result.isError, JSON.stringify(result));
  assert.equal(result.structuredContent.status, "completed", JSON.stringify(result));
  assert.match(result.structuredContent.runId, /^mcp-ask-/, "the answer's run");
  assert.match(result.content[0].text, /refund/i, JSON.stringify(result));
  assert.equal((await host.ledger(orderId)).refunds, 1, "exactly one refund");
  return result;
}

/** decline → a deny (approved false) recorded, nothing refunded. */
export async function assertElicitDecline(host, orderId) {
  const result = await elicitedRefund(host, orderId, { action: "decline" });
  assert.equal(result.structuredContent.status, "completed", JSON.stringify(result));
  assert.equal((await host.ledger(orderId)).refunds, 0, "declined: nothing refunded");
  const res = await fetch(`${host.url}/threads/${result.structuredContent.threadId}`, { headers: host.headers ?? {} });
  const { answers } = await res.json();
  assert.deepEqual(answers.map((a) => [a.status, a.approved]), [["resolved", false]], JSON.stringify(answers));
}

/** The client's answer sent twice (a replay after the first was taken, or two at once). */
export async function assertElicitAnswerTwice(host, orderId, mode) {
  const fault = responseFault(mode);
  await assertElicitAccept(host, orderId, { fetch: fault.fetch });
  assert.deepEqual(fault.sent, [202, 202], "both copies of the answer were taken");
  assert.equal((await host.ledger(orderId)).refunds, 1, `${mode}: still one refund`);
}

/** The answer POSTed to `other` (another instance on the same store). */
export async function assertElicitAnsweredElsewhere(host, other, orderId) {
  const fault = responseFault({ to: other.url });
  await assertElicitAccept(host, orderId, { fetch: fault.fetch });
  assert.deepEqual(fault.sent, [202], "the answer went to the other instance");
}

/**
 * No answer within the server's wait (`HANDOFF_MCP_ELICIT_WAIT_MS`): the call says the run
 * waits for an approver, with its threadId; the late answer still resumes it once, and a
 * call with that threadId and no message returns the outcome.
 */
export async function assertElicitTimesOut(host, orderId) {
  let release;
  const late = new Promise((resolve) => (release = resolve));
  const { seen, handler } = answering(() => late);
  const { client } = await sdkClient(host, { onElicit: handler });
  const poller = (await sdkClient(host)).client;
  try {
    const waiting = await client.callTool({ name: TOOL, arguments: { message: `Refund order ${orderId}` } });
    assert.equal(waiting.structuredContent.status, "input_required", JSON.stringify(waiting));
    assert.match(waiting.content[0].text, /waits for an approver/, JSON.stringify(waiting));
    assert.equal(seen.length, 1);
    assert.equal((await host.ledger(orderId)).refunds, 0, "nothing before the answer");
    release(accept);
    const { threadId } = waiting.structuredContent;
    let done;
    for (let i = 0; i < 100; i++) {
      done = await poller.callTool({ name: TOOL, arguments: { threadId } });
      if (done.structuredContent.status !== "input_required") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(done.structuredContent.status, "completed", JSON.stringify(done));
    assert.equal((await host.ledger(orderId)).refunds, 1, "the late answer refunded once");
  } finally {
    await client.close();
    await poller.close();
  }
}

/**
 * Four eyes: the requester (who holds the approver role) is not asked: the call says the
 * run waits for an approver; another approver answers (AG-UI); the requester's poll gets it.
 */
export async function assertElicitFourEyes(requester, approver, orderId) {
  const { seen, handler } = answering(accept);
  const { client } = await sdkClient(requester, { onElicit: handler });
  try {
    const waiting = await client.callTool({ name: TOOL, arguments: { message: `Refund order ${orderId}` } });
    assert.equal(seen.length, 0, "the requester was not asked to approve its own refund");
    assert.equal(waiting.structuredContent.status, "input_required", JSON.stringify(waiting));
    assert.match(waiting.content[0].text, /waits for an approver/);
    const { threadId, interrupts } = waiting.structuredContent;
    const res = await fetch(`${approver.url}/agent`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...approver.headers },
      body: JSON.stringify({
        threadId, runId: `approve-${orderId}-${Date.now()}`, messages: [],
        resume: [{ interruptId: interrupts[0].id, status: "resolved", payload: { approved: true } }],
      }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    await res.text();
    const done = await client.callTool({ name: TOOL, arguments: { threadId } });
    assert.equal(done.structuredContent.status, "completed", JSON.stringify(done));
    assert.equal((await requester.ledger(orderId)).refunds, 1);
  } finally {
    await client.close();
  }
}
