// The agent served as an MCP server at POST /mcp (issue 52). Host-agnostic: each flow takes
// `host = {url, headers?, ledger(orderId)}`.
// - The session revisions (2025-11-25) with the official @modelcontextprotocol/sdk client.
// - 2026-07-28 (MRTR: input_required, inputResponses, requestState) with raw JSON-RPC over
//   fetch: the SDK on npm does not speak it yet.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

export const TOOL = "refund-demo";
export const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
  "io.modelcontextprotocol/clientInfo": { name: "handoff-tests", version: "1.0.0" },
};

/**
 * An SDK client connected (initialize + initialized) to `host`'s /mcp. `onElicit`: the
 * client declares form elicitation and answers each `elicitation/create` with it; `fetch`:
 * the transport's fetch (to route or repeat what the client sends).
 */
export async function sdkClient(host, { onElicit, fetch: fetchImpl } = {}) {
  const capabilities = onElicit ? { elicitation: { form: {} } } : {};
  const client = new Client({ name: "handoff-tests", version: "1.0.0" }, { capabilities });
  if (onElicit) client.setRequestHandler(ElicitRequestSchema, onElicit);
  const transport = new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), {
    requestInit: { headers: host.headers ?? {} },
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  await client.connect(transport);
  return { client, transport };
}

/** One raw JSON-RPC request to /mcp; the parsed response (result or error). */
export async function rpc(host, method, params, headers = {}) {
  const res = await fetch(`${host.url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-method": method,
      ...(params?.name ? { "mcp-name": params.name } : {}),
      ...(host.headers ?? {}),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: randomUUID(), method, params }),
  });
  assert.equal(res.status, 200, `${method}: HTTP ${res.status}`);
  return res.json();
}

/** `tools/call` as a 2026-07-28 client with form elicitation; `extra` adds params. */
export async function call(host, args, extra = {}) {
  const reply = await rpc(host, "tools/call", { name: TOOL, arguments: args, _meta: META, ...extra });
  assert.ok(reply.result, `tools/call answered an error: ${JSON.stringify(reply.error)}`);
  return reply.result;
}

/** Session path: list and a call that completes, with progress, the agent's text and its thread. */
export async function assertSdkListAndCall(host) {
  const { client, transport } = await sdkClient(host);
  try {
    assert.ok(transport.sessionId, "initialize issued an Mcp-Session-Id");
    assert.equal(client.getServerVersion().name, TOOL);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), [TOOL]);
    assert.equal(tools[0].inputSchema.properties.message.type, "string");
    assert.equal(tools[0].inputSchema.properties.threadId.type, "string");
    const notes = [];
    const result = await client.callTool({ name: TOOL, arguments: { message: "hello" } }, undefined, {
      onprogress: (note) => notes.push(note),
    });
    assert.ok(!result.isError, JSON.stringify(result));
    assert.ok(notes.length >= 1, "progress notifications on the call's stream");
    assert.deepEqual(notes.map((n) => n.progress), notes.map((_, i) => i + 1), JSON.stringify(notes));
    assert.match(result.content[0].text, /refund/i, JSON.stringify(result));
    assert.equal(result.structuredContent.status, "completed");
    assert.ok(result.structuredContent.threadId && result.structuredContent.runId, JSON.stringify(result));
    await client.ping();
  } finally {
    await client.close();
  }
}

/**
 * Session path with an interrupt: the result says the run waits for an approver and names
 * the console and the thread; an answer elsewhere (AG-UI) refunds once; a later call with the
 * threadId and no message returns the outcome without a new turn.
 */
export async function assertSdkWaitsThenPolls(host, orderId) {
  const { client } = await sdkClient(host);
  try {
    const waiting = await client.callTool({ name: TOOL, arguments: { message: `Refund order ${orderId}` } });
    const info = waiting.structuredContent;
    assert.equal(info.status, "input_required", JSON.stringify(waiting));
    assert.match(waiting.content[0].text, /waits for an approver/, JSON.stringify(waiting));
    assert.equal(info.consoleUrl, `${host.publicUrl ?? host.url}/?thread=${encodeURIComponent(info.threadId)}`);
    const interruptId = info.interrupts[0].id;
    const again = await client.callTool({ name: TOOL, arguments: { threadId: info.threadId } });
    assert.equal(again.structuredContent.status, "input_required", "still waiting: no turn was started");
    assert.equal(again.structuredContent.runId, info.runId, "the same run, not a new turn");
    assert.equal((await host.ledger(orderId)).refunds, 0);
    const resume = {
      threadId: info.threadId, runId: `approve-${randomUUID()}`, messages: [],
      resume: [{ interruptId, status: "resolved", payload: { approved: true } }],
    };
    const res = await fetch(`${host.url}/agent`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...(host.headers ?? {}) },
      body: JSON.stringify(resume),
    });
    assert.equal(res.status, 200, await res.clone().text());
    await res.text();
    const done = await client.callTool({ name: TOOL, arguments: { threadId: info.threadId } });
    assert.equal(done.structuredContent.status, "completed", JSON.stringify(done));
    assert.equal(done.structuredContent.runId, resume.runId, "the approver's run");
    assert.equal((await host.ledger(orderId)).refunds, 1, "exactly one refund");
  } finally {
    await client.close();
  }
}

/** 2026-07-28: discover, list (resultType, ttlMs, cacheScope), an unknown version refused. */
export async function assertDiscoverAndList(host) {
  const discovered = (await rpc(host, "server/discover", { _meta: META })).result;
  assert.ok(discovered.supportedVersions.includes("2026-07-28"), JSON.stringify(discovered));
  assert.equal(discovered.serverInfo.name, TOOL);
  assert.equal(discovered.resultType, "complete");
  const listed = (await rpc(host, "tools/list", { _meta: META })).result;
  assert.equal(listed.resultType, "complete");
  assert.equal(listed.tools[0].name, TOOL);
  assert.ok(listed.ttlMs > 0 && ["public", "private"].includes(listed.cacheScope), JSON.stringify(listed));
  assert.equal(listed._meta["io.modelcontextprotocol/serverInfo"].name, TOOL);
  const old = await rpc(host, "tools/list", { _meta: { ...META, "io.modelcontextprotocol/protocolVersion": "1999-01-01" } });
  assert.equal(old.error?.code, -32022, JSON.stringify(old));
  const mismatch = await rpc(host, "tools/list", { _meta: META }, { "mcp-method": "tools/call" });
  assert.equal(mismatch.error?.code, -32020, JSON.stringify(mismatch));
}

/** Asks for a refund: the input_required result and its one elicitation's key. */
async function ask(host, orderId) {
  const args = { message: `Refund order ${orderId}` };
  const asked = await call(host, args);
  assert.equal(asked.resultType, "input_required", JSON.stringify(asked));
  const keys = Object.keys(asked.inputRequests ?? {});
  assert.equal(keys.length, 1, JSON.stringify(asked));
  const request = asked.inputRequests[keys[0]];
  assert.equal(request.method, "elicitation/create");
  assert.equal(request.params.requestedSchema.properties.approved.type, "boolean", JSON.stringify(request));
  assert.match(request.params.message, new RegExp(orderId));
  return { args, key: keys[0], requestState: asked.requestState };
}

const answer = (key, action, content) => ({ [key]: content ? { action, content } : { action } });

/** accept → one refund; the same retry again (a replayed requestState) → no second refund. */
export async function assertAcceptOnceThenReplay(host, orderId) {
  const { args, key, requestState } = await ask(host, orderId);
  assert.equal((await host.ledger(orderId)).refunds, 0, "nothing refunded before the answer");
  const retry = { requestState, inputResponses: answer(key, "accept", { approved: true }) };
  const done = await call(host, args, retry);
  assert.equal(done.resultType, "complete", JSON.stringify(done));
  assert.equal(done.structuredContent.status, "completed", JSON.stringify(done));
  assert.match(done.content[0].text, /refund/i);
  assert.equal((await host.ledger(orderId)).refunds, 1, "exactly one refund");
  const replay = await call(host, args, retry);
  assert.deepEqual(replay.structuredContent, done.structuredContent, "the recorded result");
  assert.equal((await host.ledger(orderId)).refunds, 1, "a replayed requestState refunds nothing more");
}

/** decline → no refund (a deny: approved false). */
export async function assertDecline(host, orderId) {
  const { args, key, requestState } = await ask(host, orderId);
  const done = await call(host, args, { requestState, inputResponses: answer(key, "decline") });
  assert.equal(done.resultType, "complete", JSON.stringify(done));
  assert.equal((await host.ledger(orderId)).refunds, 0, "declined: nothing refunded");
  // A deny, not a cancel: the thread's audit records a resolved answer with approved false.
  const threadId = done.structuredContent.threadId;
  const res = await fetch(`${host.url}/threads/${threadId}`, { headers: host.headers ?? {} });
  const { answers } = await res.json();
  assert.deepEqual(
    answers.map((a) => [a.interruptId, a.status, a.approved]),
    [[key, "resolved", false]],
    JSON.stringify(answers),
  );
}

/** Two retries racing with the same state: one refund, both told the same outcome. */
export async function assertRacingRetries(host, orderId) {
  const { args, key, requestState } = await ask(host, orderId);
  const retry = { requestState, inputResponses: answer(key, "accept", { approved: true }) };
  const [a, b] = await Promise.all([call(host, args, retry), call(host, args, retry)]);
  assert.equal(a.structuredContent.status, "completed", JSON.stringify(a));
  assert.deepEqual(b.structuredContent, a.structuredContent, JSON.stringify(b));
  assert.equal((await host.ledger(orderId)).refunds, 1, "one refund for two racing retries");
}

/** A forged requestState, or a retry with other arguments: refused, nothing runs. */
export async function assertForgedStateRunsNothing(host, orderId) {
  const { args, key, requestState } = await ask(host, orderId);
  const inputResponses = answer(key, "accept", { approved: true });
  const flip = requestState.endsWith("0") ? "1" : "0";
  const forged = await rpc(host, "tools/call", {
    name: TOOL, arguments: args, _meta: META, requestState: requestState.slice(0, -1) + flip, inputResponses,
  });
  assert.equal(forged.error?.data?.code, "REQUEST_STATE_INVALID", JSON.stringify(forged));
  const other = await rpc(host, "tools/call", {
    name: TOOL, arguments: { message: "Refund order A0000" }, _meta: META, requestState, inputResponses,
  });
  assert.equal(other.error?.data?.code, "REQUEST_STATE_INVALID", JSON.stringify(other));
  assert.equal((await host.ledger(orderId)).refunds, 0, "nothing refunded");
}
