// A local stand-in for an OpenAI-compatible Chat Completions endpoint (no model runs
// offline): each request is answered with the next scripted turn, streamed as the API
// streams (`data:` chunks, tool call arguments in fragments, usage, `[DONE]`).
import assert from "node:assert/strict";
import http from "node:http";
import { postJson, sseEvents } from "./devserver.mjs";
import { assertStrict, ledger, uid, userMessage } from "./flows.mjs";

const chunk = (delta, finish = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
export const toolTurn = (name, args) => [
  chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name, arguments: "" } }] }),
  // Arguments in fragments, as models stream them.
  ...args.match(/.{1,7}/g).map((piece) => chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] })),
  chunk({}, "tool_calls"),
  `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 50, completion_tokens: 9 } })}\n\n`,
  "data: [DONE]\n\n",
];
export const textTurn = (text) => [...text.split(" ").map((w, i) => chunk({ content: (i ? " " : "") + w })), chunk({}, "stop"), "data: [DONE]\n\n"];

/** An OpenAI-compatible endpoint answering each request with the next scripted turn. */
export async function standIn(turns) {
  const requests = [];
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const piece of req) body += piece;
    requests.push({ url: req.url, headers: req.headers, body: JSON.parse(body) });
    const turn = turns[requests.length - 1];
    if (typeof turn === "function") return turn(res);
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const frame of turn ?? textTurn("(script ended)")) {
      res.write(frame);
      await new Promise((r) => setTimeout(r, 3));
    }
    res.end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}/v1`, requests, close: () => new Promise((r) => server.close(r)) };
}


/**
 * The refund flow in the demo's LLM mode on `server`, whose model is `model` (a stand-in
 * scripted with the three turns of `refundScript(orderId)`, key `sk-stand-in`): the model
 * looks the order up, the refund waits for approval, the approved refund runs once.
 */
export async function assertLlmRefundFlow(server, model, orderId) {
  const threadId = uid("thread-llm");
  const runId = uid("run");
  const first = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage(`Please refund order ${orderId}`)] });
  assert.equal(first.status, 200, first.text);
  await assertStrict(first.bytes, { threadId, runId });
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

  // What the provider got: the key in the header, the model, the stored history.
  assert.equal(model.requests[0].headers.authorization, "Bearer sk-stand-in");
  assert.equal(model.requests[0].url, "/v1/chat/completions");
  assert.equal(model.requests[0].body.model, "stand-in-1");
  assert.equal(model.requests[0].body.stream, true);
  const second = model.requests[1].body.messages;
  assert.deepEqual(second.map((m) => m.role), ["system", "user", "assistant", "tool"]);

  const resumeId = uid("run");
  const resumed = await postJson(`${server.url}/agent`, {
    threadId, runId: resumeId, messages: [],
    resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }],
  });
  assert.equal(resumed.status, 200, resumed.text);
  await assertStrict(resumed.bytes, { threadId, runId: resumeId });
  assert.equal(sseEvents(resumed.bytes).at(-1).outcome?.type, "success");
  const account = await ledger(server, orderId);
  assert.equal(account.refunds, 1);
  assert.equal(account.refundedCents, 1500);
  const third = model.requests[2].body.messages;
  assert.match(third.at(-1).content, /"status":"refunded"/, "the model heard the refund's result");
}

/** The model's turns of the refund flow for `orderId` (1500 cents). */
export const refundScript = (orderId) => [
  toolTurn("get_order", JSON.stringify({ orderId })),
  toolTurn("refund_order", JSON.stringify({ orderId, amountCents: 1500 })),
  textTurn(`Refunded 15.00 for order ${orderId}.`),
];
