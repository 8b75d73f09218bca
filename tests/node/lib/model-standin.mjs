// Local stand-ins for model providers (no model runs offline). Each request is answered
// with the next scripted turn, streamed in the provider's documented wire format:
// OpenAI-compatible Chat Completions (`data:` chunks, index-keyed tool call fragments,
// a usage chunk, `[DONE]`) or Anthropic Messages (named events, `input_json_delta`
// fragments, `message_delta` usage). A turn may also be a function that answers by hand
// (an HTTP error, a connection dropped mid-stream).
import assert from "node:assert/strict";
import http from "node:http";
import { postJson, request, sseEvents } from "./devserver.mjs";
import { assertStrict, describeRun, ledger, uid, userMessage } from "./flows.mjs";
import { runOfficial } from "./official.mjs";

const pieces = (text) => text.match(/.{1,7}/gs) ?? [];

const openai = {
  chunk: (delta, finish = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
  /** `calls`: [[name, argsJson], …], several in one turn (parallel tool calls). */
  tools(calls) {
    const frames = [];
    calls.forEach(([name, args], index) => {
      frames.push(openai.chunk({ tool_calls: [{ index, id: `call_${index}`, type: "function", function: { name, arguments: "" } }] }));
      for (const piece of pieces(args)) frames.push(openai.chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
    frames.push(openai.chunk({}, "tool_calls"));
    frames.push(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 50, completion_tokens: 9 } })}\n\n`);
    frames.push("data: [DONE]\n\n");
    return frames;
  },
  text: (text) => [
    ...text.split(" ").map((w, i) => openai.chunk({ content: (i ? " " : "") + w })),
    openai.chunk({}, "stop"),
    `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 60, completion_tokens: 4 } })}\n\n`,
    "data: [DONE]\n\n",
  ],
};

const event = (name, body) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...body })}\n\n`;
const anthropic = {
  start: () => event("message_start", { message: { id: "msg_1", type: "message", role: "assistant", content: [], usage: { input_tokens: 50, output_tokens: 1 } } }),
  end: (reason) => [event("message_delta", { delta: { stop_reason: reason }, usage: { output_tokens: 9 } }), event("message_stop", {})],
  tools(calls) {
    const frames = [anthropic.start(), event("ping", {})];
    calls.forEach(([name, args], index) => {
      frames.push(event("content_block_start", { index, content_block: { type: "tool_use", id: `toolu_${index}`, name, input: {} } }));
      for (const piece of pieces(args)) frames.push(event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } }));
      frames.push(event("content_block_stop", { index }));
    });
    return [...frames, ...anthropic.end("tool_use")];
  },
  text(text) {
    const words = text.split(" ").map((w, i) => event("content_block_delta", { index: 0, delta: { type: "text_delta", text: (i ? " " : "") + w } }));
    return [anthropic.start(), event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }), ...words, event("content_block_stop", { index: 0 }), ...anthropic.end("end_turn")];
  },
};

export const dialects = { openai, anthropic };

/**
 * A provider endpoint answering each request with the next of `turns`; `script(next)`
 * answers the requests from now on with `next` instead (one stand-in, one host process,
 * many scripted conversations).
 */
export async function standIn(turns) {
  const requests = [];
  let script = turns;
  let offset = 0;
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const piece of req) body += piece;
    requests.push({ url: req.url, headers: req.headers, body: JSON.parse(body) });
    const turn = script[requests.length - 1 - offset];
    if (typeof turn === "function") return turn(res);
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const frame of turn ?? openai.text("(script ended)")) {
      res.write(frame);
      await new Promise((r) => setTimeout(r, 3));
    }
    res.end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${server.address().port}`;
  const scriptNext = (next) => {
    script = next;
    offset = requests.length;
  };
  return { base, url: `${base}/v1`, requests, script: scriptNext, close: () => new Promise((r) => server.close(r)) };
}

/** The host settings that point the demo's LLM mode at `model`. */
export function llmEnv(model, provider = "openai") {
  return provider === "openai"
    ? { DEMO_LLM: "openai", OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "sk-stand-in", DEMO_LLM_MODEL: "stand-in-1" }
    : { DEMO_LLM: "anthropic", ANTHROPIC_BASE_URL: model.base, ANTHROPIC_API_KEY: "sk-stand-in", DEMO_LLM_MODEL: "stand-in-1" };
}

/** The model's turns of the refund flow for `orderId` (1500 cents). */
export function refundScript(orderId, provider = "openai") {
  const d = dialects[provider];
  return [
    d.tools([["get_order", JSON.stringify({ orderId })]]),
    d.tools([["refund_order", JSON.stringify({ orderId, amountCents: 1500 })]]),
    d.text(`Refunded 15.00 for order ${orderId}.`),
  ];
}

/** A stream valid for the strict verifier and the official client. */
async function assertValidEverywhere(bytes, ids, what) {
  await assertStrict(bytes, ids, what);
  const official = await runOfficial(bytes, ids);
  assert.equal(official.accepted, true, `${what}: ${describeRun(official)}`);
  assert.deepEqual(official.warnings, [], `${what}: ${describeRun(official)}`);
}

/**
 * The refund flow in the demo's LLM mode on `server` (model `model`, scripted with
 * `refundScript(orderId, provider)`): the model looks the order up, the refund waits for
 * approval, the approval (sent to `approver`: another process on the same store, or the
 * same) runs the refund once, and the model's final answer streams.
 */
export async function assertLlmRefundFlow(server, model, orderId, { provider = "openai", approver = server } = {}) {
  const threadId = uid("thread-llm");
  const runId = uid("run");
  const first = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage(`Please refund order ${orderId}`)] });
  assert.equal(first.status, 200, first.text);
  await assertValidEverywhere(first.bytes, { threadId, runId }, "the proposing run");
  const events = sseEvents(first.bytes);
  const lookedUp = events.find((e) => e.type === "TOOL_CALL_RESULT");
  assert.match(lookedUp.content, new RegExp(`"orderId":"${orderId}"`), "get_order ran and its result went out");
  assert.ok(events.filter((e) => e.type === "TOOL_CALL_ARGS").length > 2, "arguments forwarded as they streamed");
  const finished = events.at(-1);
  assert.equal(finished.outcome?.type, "interrupt", JSON.stringify(finished));
  const interrupt = finished.outcome.interrupts[0];
  assert.equal(interrupt.reason, "tool_call");
  assert.ok(interrupt.responseSchema, "the approval says what an answer looks like");
  assert.equal((await ledger(server, orderId)).refunds, 0, "refunded before approval");

  // What the provider got: the key, the model, the stored history.
  const sent = model.requests[0];
  if (provider === "openai") {
    assert.equal(sent.url, "/v1/chat/completions");
    assert.equal(sent.headers.authorization, "Bearer sk-stand-in");
    assert.deepEqual(model.requests[1].body.messages.map((m) => m.role), ["system", "user", "assistant", "tool"]);
  } else {
    assert.equal(sent.url, "/v1/messages");
    assert.equal(sent.headers["x-api-key"], "sk-stand-in");
    assert.ok(sent.headers["anthropic-version"]);
    const turns = model.requests[1].body.messages;
    assert.deepEqual(turns.map((m) => m.role), ["user", "assistant", "user"]);
    assert.equal(turns[2].content[0].type, "tool_result");
  }
  assert.equal(sent.body.model, "stand-in-1");
  assert.equal(sent.body.stream, true);

  const resumeId = uid("run");
  const resumed = await postJson(`${approver.url}/agent`, {
    threadId, runId: resumeId, messages: [],
    resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }],
  });
  assert.equal(resumed.status, 200, resumed.text);
  await assertValidEverywhere(resumed.bytes, { threadId, runId: resumeId }, "the approved run");
  const answer = sseEvents(resumed.bytes);
  assert.equal(answer.at(-1).outcome?.type, "success");
  const said = answer.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
  assert.equal(said, `Refunded 15.00 for order ${orderId}.`, "the model's final answer did not stream");
  const account = await ledger(approver, orderId);
  assert.equal(account.refunds, 1);
  assert.equal(account.refundedCents, 1500);
  const heard = model.requests[2].body.messages.at(-1);
  assert.match(JSON.stringify(heard), /\\"status\\":\\"refunded\\"/, "the model heard the refund's result");
}

/** API keys for the approval-policy scenario: alice asks, bob holds `approver`. */
export const POLICY_KEYS = { alice: "alice-key-0123456789", bob: "bob-key-0123456789" };

/**
 * The host settings of the approval-policy scenario: HANDOFF_AUTH=api-key, every refund
 * above 0 cents needs an approver other than the requester (DEMO_APPROVER_ABOVE_CENTS=0).
 */
export function policyEnv(model) {
  return {
    ...llmEnv(model),
    HANDOFF_AUTH: "api-key",
    HANDOFF_API_KEYS: `acme/alice=${POLICY_KEYS.alice},acme/bob+approver=${POLICY_KEYS.bob}`,
    DEMO_APPROVER_ABOVE_CENTS: "0",
  };
}

/**
 * Issue 35's scenario in the demo's LLM mode (the model looks the order up and calls
 * refund_order): alice (no role) cannot approve her own refund (403 FORBIDDEN); bob (an
 * approver) cannot move it to order Z9 for 99,999,999 cents (422 RESUME_PAYLOAD_INVALID);
 * nothing is refunded until bob approves it as proposed, and then exactly once.
 */
export async function assertLlmApprovalPolicy(server, orderId) {
  const as = (who) => ({ headers: { authorization: `Bearer ${POLICY_KEYS[who]}` } });
  const threadId = uid("thread-policy");
  const runId = uid("run");
  const first = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage(`Please refund order ${orderId}`)] }, as("alice"));
  assert.equal(first.status, 200, first.text);
  await assertValidEverywhere(first.bytes, { threadId, runId }, "the proposing run");
  const finished = sseEvents(first.bytes).at(-1);
  assert.equal(finished.outcome?.type, "interrupt", JSON.stringify(finished));
  const interrupt = finished.outcome.interrupts[0];
  const policy = interrupt.metadata?.["handoff.approval"];
  assert.deepEqual(policy?.roles, ["approver"], JSON.stringify(interrupt));
  const answer = (who, payload) =>
    postJson(`${server.url}/agent`, {
      threadId, runId: uid("run"), messages: [],
      resume: [{ interruptId: interrupt.id, status: "resolved", payload }],
    }, as(who));

  const selfApproved = await answer("alice", { approved: true });
  assert.equal(selfApproved.status, 403, selfApproved.text);
  assert.equal(selfApproved.json?.code, "FORBIDDEN", selfApproved.text);
  const widened = await answer("bob", { approved: true, editedArgs: { orderId: "Z9", amountCents: 99999999 } });
  assert.equal(widened.status, 422, widened.text);
  assert.equal(widened.json?.code, "RESUME_PAYLOAD_INVALID", widened.text);
  assert.match(widened.json?.message ?? "", /editedArgs/, widened.text);
  assert.equal((await ledger(server, orderId, as("alice").headers)).refunds, 0, "nothing refunded");
  assert.equal((await ledger(server, "Z9", as("bob").headers)).refunds, 0, "nothing refunded on Z9");

  const approved = await answer("bob", { approved: true });
  assert.equal(approved.status, 200, approved.text);
  assert.equal(sseEvents(approved.bytes).at(-1).outcome?.type, "success", approved.text);
  assert.equal((await ledger(server, orderId, as("alice").headers)).refunds, 1);
  // The ledger is behind the authenticator like every route.
  const anonymous = await request(`${server.url}/demo/orders/${orderId}`);
  assert.equal(anonymous.status, 401, anonymous.text);
  assert.equal(anonymous.json?.code, "UNAUTHENTICATED", anonymous.text);
}

/** Three failing turns: an error event mid-stream, a 429 with retry-after, a dropped connection. */
export function failureScript() {
  return [
    [openai.chunk({ content: "Let me" }), `data: ${JSON.stringify({ error: { message: "shard-7 exploded", type: "server_error" } })}\n\n`],
    (res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "7" });
      res.end(JSON.stringify({ error: { message: "org-secret-42 is over its quota", type: "requests" } }));
    },
    (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(openai.chunk({ content: "Half a" }));
      setTimeout(() => res.socket.destroy(), 20);
    },
  ];
}

/**
 * Three runs on `server` against a model scripted with `failureScript()`: each ends
 * RUN_ERROR with a stable code (MODEL_UNAVAILABLE, MODEL_RATE_LIMITED with the wait,
 * MODEL_UNAVAILABLE), the provider's words withheld, the stream valid everywhere.
 */
export async function assertModelFailuresEndCleanly(server, orderId) {
  const expected = [
    ["MODEL_UNAVAILABLE", /shard-7/],
    ["MODEL_RATE_LIMITED", /org-secret-42/],
    ["MODEL_UNAVAILABLE", /Half a.*broke/],
  ];
  for (const [code, secret] of expected) {
    const threadId = uid("thread-llm");
    const runId = uid("run");
    const res = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage(`Refund order ${orderId}`)] });
    assert.equal(res.status, 200, res.text);
    await assertValidEverywhere(res.bytes, { threadId, runId }, `the run that met ${code}`);
    const last = sseEvents(res.bytes).at(-1);
    assert.equal(last.type, "RUN_ERROR", JSON.stringify(last));
    assert.equal(last.code, code);
    assert.doesNotMatch(JSON.stringify(last), secret);
    if (code === "MODEL_RATE_LIMITED") assert.match(last.message, /retry in 7 s/);
    assert.doesNotMatch(res.text, /org-secret-42|shard-7/);
  }
  assert.equal((await ledger(server, orderId)).refunds, 0);
}
