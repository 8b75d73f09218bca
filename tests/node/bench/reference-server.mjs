// The Node reference server of `make bench` (tests/src/bin/load.rs): `node:http` and the
// official `@ag-ui/encoder` serving the demo refund script, with its threads in a Map and no
// durability at all, or with `--durable` in SQLite (reference-store.mjs says what it commits
// and when). Bodies are parsed with @ag-ui/core's RunAgentInputSchema, as an
// SDK-based server does (a body without state, tools, context or forwardedProps gets them
// empty first). Run 1 ("Refund order B77") streams the same event types, count and sizes as
// the dev server's run 1 (ending in an approval interrupt); the approving resume streams the
// refund; any other message gets the demo's one-line answer as a text message (conversation
// mode). `GET /demo/orders/{id}` reports the refunds, like the demo's ledger.
//
// PORT (default 0: any free port) is where it listens; the first stdout line has its URL.
// With `--durable`, HANDOFF_DATA_DIR (default `.handoff-reference`) holds the database, as it
// holds the dev server's.

import http from "node:http";
import { randomUUID } from "node:crypto";
import { EventEncoder } from "@ag-ui/encoder";
import { RunAgentInputSchema } from "@ag-ui/core/schemas";
import { durableStore, memoryStore } from "./reference-store.mjs";

const encoder = new EventEncoder();
const durable = process.argv.includes("--durable");
// Threads (messages, state, the open interrupt { id, toolCallId, order, args }) and the ledger.
const store = durable ? await durableStore(process.env.HANDOFF_DATA_DIR || ".handoff-reference") : memoryStore();

const uid = (prefix) => `${prefix}-${randomUUID().replaceAll("-", "")}`;
const cents = (n) => `${Math.floor(n / 100)}.${String(n % 100).padStart(2, "0")}`;

// The demo's catalog: every well-formed id exists, amounts are deterministic.
function lookup(orderId) {
  if (orderId === "A1024") return { orderId, item: "Wireless headphones", amountCents: 12800, currency: "USD" };
  let seed = 0;
  for (const b of Buffer.from(orderId)) seed += b;
  return { orderId, item: `Item #${seed % 97}`, amountCents: 1000 + ((seed * 7919) % 40000), currency: "USD" };
}

function orderIdIn(text) {
  const word = text.split(/[^A-Za-z0-9]/).find((w) => /^[A-Za-z][0-9]{2,11}$/.test(w));
  return word?.toUpperCase();
}

function stream(res, threadId, runId, events) {
  res.writeHead(200, { "content-type": encoder.getContentType(), "cache-control": "no-cache" });
  const timestamp = Date.now();
  let id = 0;
  const send = (event) => res.write(`id: ${++id}\n${encoder.encodeSSE({ ...event, timestamp })}`);
  send({ type: "RUN_STARTED", threadId, runId, protocolVersion: "1.0" });
  events(send);
}

const CHAT_REPLY = 'I can refund or return an order. Try "Refund order A1024" or "Return order A1024".';

/** Any message but a refund request: the demo's one-line answer, kept with the history. */
function chat(res, threadId, runId, body) {
  const textId = uid("msg");
  const messages = [...body.messages, { role: "assistant", id: textId, content: CHAT_REPLY }];
  store.saveTurn(threadId, messages, body.state, undefined);
  stream(res, threadId, runId, (send) => {
    send({ type: "TEXT_MESSAGE_START", messageId: textId, role: "assistant" });
    for (const piece of CHAT_REPLY.split(/(?<= )/)) send({ type: "TEXT_MESSAGE_CONTENT", messageId: textId, delta: piece });
    send({ type: "TEXT_MESSAGE_END", messageId: textId });
    send({ type: "RUN_FINISHED", threadId, runId, outcome: { type: "success" } });
    res.end();
  });
}

function runOne(res, threadId, runId, body) {
  const user = body.messages?.findLast((m) => m.role === "user");
  const orderId = user && /refund/i.test(user.content) ? orderIdIn(user.content) : undefined;
  if (!orderId) return chat(res, threadId, runId, body);
  const order = lookup(orderId);
  const lookupId = uid("tc");
  const lookupArgs = JSON.stringify({ orderId });
  const resultId = uid("msg");
  const textId = uid("msg");
  const refundId = uid("tc");
  const args = JSON.stringify({ amountCents: order.amountCents, currency: order.currency, orderId });
  const words = `Order ${orderId} (${order.item}) was paid ${cents(order.amountCents)} ${order.currency}. I can refund it in full once you approve.`;
  const state = { order, step: "await_decision" };
  const messages = [
    ...body.messages,
    { role: "assistant", id: lookupId, toolCalls: [{ id: lookupId, type: "function", function: { name: "get_order", arguments: lookupArgs } }] },
    { role: "tool", id: resultId, content: JSON.stringify(order), toolCallId: lookupId },
    { role: "assistant", id: textId, content: words },
    { role: "assistant", id: refundId, toolCalls: [{ id: refundId, type: "function", function: { name: "refund_order", arguments: args } }] },
  ];
  const interrupt = {
    id: uid("int"),
    reason: "tool_call",
    message: `Refund ${cents(order.amountCents)} ${order.currency} for order ${orderId}?`,
    toolCallId: refundId,
    responseSchema: {
      properties: {
        approved: { type: "boolean" },
        editedArgs: {
          properties: { amountCents: { minimum: 1, type: "integer" }, currency: { type: "string" }, orderId: { type: "string" } },
          type: "object",
        },
      },
      required: ["approved"],
      type: "object",
    },
    expiresAt: new Date(Date.now() + 300_000).toISOString(),
  };
  store.saveTurn(threadId, messages, state, { id: interrupt.id, toolCallId: refundId, order, args });
  stream(res, threadId, runId, (send) => {
    send({ type: "STATE_SNAPSHOT", snapshot: { order: null, step: "lookup" } });
    send({ type: "STEP_STARTED", stepName: "lookup" });
    send({ type: "TOOL_CALL_START", toolCallId: lookupId, toolCallName: "get_order" });
    send({ type: "TOOL_CALL_ARGS", toolCallId: lookupId, delta: lookupArgs });
    send({ type: "TOOL_CALL_END", toolCallId: lookupId });
    send({ type: "TOOL_CALL_RESULT", messageId: resultId, toolCallId: lookupId, content: JSON.stringify(order) });
    send({ type: "STEP_FINISHED", stepName: "lookup" });
    send({ type: "STATE_DELTA", delta: [{ op: "replace", path: "/order", value: order }, { op: "replace", path: "/step", value: "await_decision" }] });
    send({ type: "TEXT_MESSAGE_START", messageId: textId });
    for (const word of words.split(" ")) send({ type: "TEXT_MESSAGE_CONTENT", messageId: textId, delta: word });
    send({ type: "TEXT_MESSAGE_END", messageId: textId });
    send({ type: "TOOL_CALL_START", toolCallId: refundId, toolCallName: "refund_order" });
    for (let i = 0; i < args.length; i += 12) send({ type: "TOOL_CALL_ARGS", toolCallId: refundId, delta: args.slice(i, i + 12) });
    send({ type: "TOOL_CALL_END", toolCallId: refundId });
    send({ type: "STATE_SNAPSHOT", snapshot: state });
    send({ type: "MESSAGES_SNAPSHOT", messages });
    send({ type: "RUN_FINISHED", threadId, runId, outcome: { type: "interrupt", interrupts: [interrupt] } });
    res.end();
  });
}

function resume(res, threadId, runId, body) {
  const answer = body.resume[0];
  if (answer?.status !== "resolved" || answer.payload?.approved !== true) return reject(res, 422, "only approvals are scripted");
  const pending = store.claim(threadId, answer.interruptId);
  if (!pending) return reject(res, 409, "no such open interrupt");
  const { toolCallId, order } = pending;
  const idempotencyKey = `${threadId}/refund:${toolCallId}`;
  const content = JSON.stringify({ amountCents: order.amountCents, idempotencyKey, orderId: order.orderId, refundId: `rf-${toolCallId}`, status: "refunded" });
  const resultId = uid("msg");
  const textId = uid("msg");
  const words = `Done: ${cents(order.amountCents)} was refunded for order ${order.orderId}.`;
  const added = [{ role: "tool", id: resultId, content, toolCallId }, { role: "assistant", id: textId, content: words }];
  store.refund(threadId, order, idempotencyKey, added, { order, step: "refunded" });
  stream(res, threadId, runId, (send) => {
    send({ type: "TOOL_CALL_RESULT", messageId: resultId, toolCallId, content });
    send({ type: "STATE_DELTA", delta: [{ op: "replace", path: "/step", value: "refunded" }] });
    send({ type: "TEXT_MESSAGE_START", messageId: textId });
    for (const word of words.split(" ")) send({ type: "TEXT_MESSAGE_CONTENT", messageId: textId, delta: word });
    send({ type: "TEXT_MESSAGE_END", messageId: textId });
    send({ type: "RUN_FINISHED", threadId, runId, outcome: { type: "success" } });
    res.end();
  });
}

function reject(res, status, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: message }));
}

const server = http.createServer({ noDelay: true, keepAliveTimeout: 60_000 }, (req, res) => {
  if (req.method === "GET" && req.url.startsWith("/demo/orders/")) {
    const orderId = decodeURIComponent(req.url.slice("/demo/orders/".length));
    const entry = store.ledger(orderId);
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify({ orderId, ...entry }));
  }
  if (req.method !== "POST" || req.url !== "/agent") return reject(res, 404, "not found");
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return reject(res, 400, "invalid JSON");
    }
    const parsed = RunAgentInputSchema.safeParse({ state: {}, tools: [], context: [], forwardedProps: {}, ...body });
    if (!parsed.success) return reject(res, 422, parsed.error.message);
    body = parsed.data;
    const { threadId, runId } = body;
    if (Array.isArray(body.resume) && body.resume.length > 0) resume(res, threadId, runId, body);
    else runOne(res, threadId, runId, body);
  });
});

server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  console.log(`Node reference server${durable ? " (durable)" : ""} listening on http://127.0.0.1:${server.address().port}`);
});
