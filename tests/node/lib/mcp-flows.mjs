// The MCP flows every host runs: the demo's LLM mode with `HANDOFF_MCP_SERVERS` pointing
// at the reference server-everything and our counting server (lib/mcp-servers.mjs), the
// model a scripted stand-in (lib/model-standin.mjs) that calls their tools.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { postJson, sseEvents } from "./devserver.mjs";
import { assertStrict, describeRun, uid, userMessage } from "./flows.mjs";
import { freePort, startCounter, startEverything, startIssuer, startVault } from "./mcp-servers.mjs";
import { dialects, llmEnv, standIn } from "./model-standin.mjs";
import { runOfficial } from "./official.mjs";

const { openai } = dialects;
/** The counting server's bearer token (must reach it, and never a log). */
export const COUNTER_TOKEN = "mcp-counter-secret";
/** The token of a server that is down (never a log either). */
export const DOWN_TOKEN = "mcp-down-secret";
/** The agent's OAuth client at the vault's authorization server (the secret never a log). */
export const VAULT_CLIENT = { clientId: "handoff-agent", clientSecret: "vault-client-secret" };
/** What the AG-UI caller sends as its own credential: never passed on to an MCP server. */
const USER_TOKEN = "user-token-never-forwarded";

/** The host settings: the model, both servers, `down` (nothing listening), approvals. */
export function mcpEnv(model, { everything, counter, downPort, vault, issuer }) {
  return {
    ...llmEnv(model),
    HANDOFF_MCP_SERVERS: `everything=${everything.url},counter=${counter.url},down=http://127.0.0.1:${downPort}/mcp,vault=${vault.url}`,
    HANDOFF_MCP_TOKENS: `counter=${COUNTER_TOKEN},down=${DOWN_TOKEN}`,
    HANDOFF_MCP_OAUTH: `vault=${issuer.tokenUrl}`,
    HANDOFF_MCP_OAUTH_CLIENTS: `vault=${VAULT_CLIENT.clientId}:${VAULT_CLIENT.clientSecret}`,
    HANDOFF_MCP_REQUIRE_APPROVAL: "counter__count",
    HANDOFF_MCP_ALLOW_LOOPBACK: "true",
  };
}

/** One run whose model turns are `turns`: its events (checked by the strict verifier and
 * the official client) and what the model was sent. */
async function converse(server, model, turns, text, body = {}) {
  model.script(turns);
  const first = model.requests.length;
  const threadId = body.threadId ?? uid("thread-mcp");
  const runId = uid("run");
  const res = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage(text)], ...body },
    { headers: { authorization: `Bearer ${USER_TOKEN}` } });
  assert.equal(res.status, 200, res.text);
  await assertValid(res.bytes, { threadId, runId }, text);
  const events = sseEvents(res.bytes);
  return { threadId, runId, events, sent: model.requests.slice(first), finished: events.at(-1) };
}

async function assertValid(bytes, ids, what) {
  await assertStrict(bytes, ids, what);
  const official = await runOfficial(bytes, ids);
  assert.equal(official.accepted, true, `${what}: ${describeRun(official)}`);
}

const resultOf = (events) => events.find((e) => e.type === "TOOL_CALL_RESULT");

/** Listing and a call with arguments: the offered names and schemas, the result as text. */
export async function assertListingAndEcho(server, model) {
  const run = await converse(server, model, [openai.tools([["everything__echo", JSON.stringify({ message: "hello mcp" })]]), openai.text("It said hello.")], "Echo hello");
  const offered = run.sent[0].body.tools.map((t) => t.function.name);
  for (const name of ["everything__echo", "everything__get-sum", "everything__get-structured-content", "counter__count", "counter__peek", "get_order"]) {
    assert.ok(offered.includes(name), `${name} offered: ${offered.join(", ")}`);
  }
  assert.ok(!offered.some((n) => n.startsWith("down__")), "a server that is down offers nothing");
  const echo = run.sent[0].body.tools.find((t) => t.function.name === "everything__echo").function;
  assert.equal(echo.parameters.properties.message.type, "string", "the inputSchema is offered");
  assert.equal(echo.description, "Echoes back the input string");
  assert.doesNotMatch(JSON.stringify(run.sent[0].body.messages), /Echoes back/, "tool descriptions stay out of the prompt");
  assert.equal(resultOf(run.events).content, "Echo: hello mcp");
  const told = run.sent[1].body.messages.at(-1);
  assert.deepEqual([told.role, told.content], ["tool", "Echo: hello mcp"], "the model gets the text");
  assert.equal(run.finished.type, "RUN_FINISHED");
  assert.notEqual(run.finished.outcome?.type, "interrupt");
}

/** structuredContent goes out as its JSON text. */
export async function assertStructured(server, model) {
  const run = await converse(server, model, [openai.tools([["everything__get-structured-content", JSON.stringify({ location: "Chicago" })]]), openai.text("Rainy.")], "Weather in Chicago?");
  assert.deepEqual(JSON.parse(resultOf(run.events).content), { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 });
}

/** An `isError` result is the tool message's error (its text is also the result's content,
 * and a MESSAGES_SNAPSHOT carries the message with `error`, which TOOL_CALL_RESULT cannot);
 * the run goes on to the model's answer. */
export async function assertErrorResult(server, model) {
  const args = { resourceType: "Text", resourceId: -1 };
  const run = await converse(server, model, [openai.tools([["everything__get-resource-reference", JSON.stringify(args)]]), openai.text("That resource does not exist.")], "Resource -1?");
  const result = resultOf(run.events);
  assert.match(result.content, /Invalid resourceId: -1/);
  const snapshot = run.events.find((e) => e.type === "MESSAGES_SNAPSHOT");
  const message = snapshot?.messages.find((m) => m.id === result.messageId);
  assert.equal(message?.role, "tool", JSON.stringify(snapshot));
  assert.equal(message.error, result.content, "the tool message's error");
  assert.equal(message.content, result.content);
  assert.match(run.sent[1].body.messages.at(-1).content, /Invalid resourceId/, "the model hears the error");
  assert.ok(run.events.some((e) => e.type === "TEXT_MESSAGE_CONTENT"), "the run went on");
}

/** An approval-required tool: interrupt, approve, exactly one call; a replayed resume
 * (byte-identical) does not call again. Only the server's own token reaches it. */
export async function assertApprovalOnce(server, model, counter) {
  const callsBefore = counter.calls.length;
  const run = await converse(server, model, [openai.tools([["counter__count", JSON.stringify({ label: "approved-once" })]]), openai.text("Counted.")], "Count once");
  assert.equal(run.finished.outcome?.type, "interrupt", JSON.stringify(run.finished));
  const interrupt = run.finished.outcome.interrupts[0];
  const started = run.events.find((e) => e.type === "TOOL_CALL_START");
  assert.equal(interrupt.reason, "tool_call");
  assert.equal(interrupt.toolCallId, started.toolCallId);
  assert.equal(started.toolCallName, "counter__count");
  assert.match(interrupt.message, /counter__count/);
  assert.match(interrupt.message, /approved-once/);
  assert.ok(interrupt.responseSchema?.properties?.editedArgs, "edits must fit the tool's schema");
  assert.equal(counter.calls.length, callsBefore, "nothing called before the approval");

  const runId = uid("run");
  const resume = { threadId: run.threadId, runId, messages: [], resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }] };
  const approved = await postJson(`${server.url}/agent`, resume);
  assert.equal(approved.status, 200, approved.text);
  await assertValid(approved.bytes, { threadId: run.threadId, runId }, "the approved run");
  const result = resultOf(sseEvents(approved.bytes));
  assert.equal(result.toolCallId, interrupt.toolCallId);
  assert.equal(result.content, `call ${callsBefore + 1}: approved-once`);
  assert.equal(counter.calls.length, callsBefore + 1, "exactly one call");
  assert.deepEqual(counter.calls.at(-1).args, { label: "approved-once" });
  assert.ok(counter.calls.at(-1).meta?.idempotencyKey, "the effect's key goes along");

  const replay = await postJson(`${server.url}/agent`, resume);
  assert.equal(replay.status, 200, replay.text);
  const replayed = resultOf(sseEvents(replay.bytes));
  assert.equal(replayed.messageId, result.messageId);
  assert.equal(replayed.content, result.content);
  assert.equal(counter.calls.length, callsBefore + 1, "a replayed resume does not call again");
  assert.ok(counter.authorizations.length > 0);
  assert.deepEqual([...new Set(counter.authorizations)], [`Bearer ${COUNTER_TOKEN}`], "only the server's own token, never the caller's");
}

/** A server that forgot the session (404) gets a fresh initialize and the call again. */
export async function assertSessionRecovers(server, model, counter) {
  const initializations = counter.initializations();
  counter.forgetSessions();
  const run = await converse(server, model, [openai.tools([["counter__peek", "{}"]]), openai.text("Peeked.")], "Peek");
  assert.match(resultOf(run.events).content, /^counted \d+$/);
  assert.ok(counter.initializations() > initializations, "initialised again");
}

/**
 * OAuth client credentials: the vault lets in only its issuer's tokens meant for it. The
 * agent gets one with its own client (HTTP Basic, `resource` and `audience` the vault's
 * URL), keeps it for later runs, and after the vault refuses it (revoked) gets another and
 * sends the call again: one call. The caller's token reaches neither.
 */
export async function assertOAuthClientCredentials(server, model, { vault, issuer }) {
  const call = async (label) => {
    const run = await converse(server, model, [openai.tools([["vault__count", JSON.stringify({ label })]]), openai.text("Done.")], `Count ${label}`);
    assert.ok(run.sent[0].body.tools.some((t) => t.function.name === "vault__count"), "the vault's tools are offered");
    return resultOf(run.events).content;
  };
  const calls = vault.calls.length;
  assert.equal(await call("oauth-1"), `call ${calls + 1}: oauth-1`);
  assert.ok(issuer.requests.length >= 1, "a token was asked for");
  for (const request of issuer.requests) {
    assert.equal(request.body.grant_type, "client_credentials");
    assert.equal(request.body.resource, vault.url);
    assert.equal(request.body.audience, vault.url);
    assert.equal(request.authorization, `Basic ${Buffer.from(`${VAULT_CLIENT.clientId}:${VAULT_CLIENT.clientSecret}`).toString("base64")}`);
  }
  const tokens = issuer.requests.length;
  assert.equal(await call("oauth-2"), `call ${calls + 2}: oauth-2`);
  assert.equal(issuer.requests.length, tokens, "the token is kept for the next run");

  vault.revoke(vault.accepted.at(-1));
  assert.equal(await call("oauth-3"), `call ${calls + 3}: oauth-3`);
  assert.equal(issuer.requests.length, tokens + 1, "a refused token is replaced");
  assert.equal(vault.calls.length, calls + 3, "each call reached the vault once");
  assert.ok(vault.authorizations.every((a) => a.startsWith("Bearer ey")), "only the issuer's tokens, never the caller's");
}

/** The host's logs name the server that could not be listed, and hold no MCP token. */
export function assertLogs(logs) {
  assert.doesNotMatch(logs, new RegExp(VAULT_CLIENT.clientSecret));
  assert.doesNotMatch(logs, /Bearer ey|Basic aGFu/);
  assert.match(logs, /down/);
  assert.match(logs, /listing failed/);
  assert.doesNotMatch(logs, new RegExp(COUNTER_TOKEN));
  assert.doesNotMatch(logs, new RegExp(DOWN_TOKEN));
}

/**
 * The MCP flows as a suite on one host: `start(env)` starts it with the MCP settings
 * (resolves to {url, logs()}), `stop()` stops what it started.
 */
export function describeMcpHost(title, { start, stop, timeout }) {
  describe(title, { timeout }, () => {
    const fixtures = mcpFixtures({ start, stop, env: mcpEnv });

    test("listing: the servers' tools are offered as {server}__{tool}; a call with arguments", async () => {
      await assertListingAndEcho(fixtures.server, fixtures.model);
    });

    test("structured content comes back as its JSON text", async () => {
      await assertStructured(fixtures.server, fixtures.model);
    });

    test("an isError result is the tool's error and the run goes on", async () => {
      await assertErrorResult(fixtures.server, fixtures.model);
    });

    test("approval: interrupt, approve, exactly one call; a replayed resume does not call again", async () => {
      await assertApprovalOnce(fixtures.server, fixtures.model, fixtures.counter);
    });

    test("a server that forgot the session (404) is initialised again", async () => {
      await assertSessionRecovers(fixtures.server, fixtures.model, fixtures.counter);
    });

    test("OAuth client credentials: a token for the server's audience, kept, replaced when refused", async () => {
      await assertOAuthClientCredentials(fixtures.server, fixtures.model, fixtures);
    });

    test("the logs name the server that is down and hold no MCP token", () => {
      assertLogs(fixtures.server.logs());
    });
  });
}

/**
 * Inside a `describe`: before its tests, the MCP servers, the model stand-in and the host
 * (`start(env(model, servers))`); after them, all stopped. The returned object is filled in
 * by the time the tests run: {server, model, everything, counter, vault, issuer}.
 */
export function mcpFixtures({ start, stop, env }) {
  const fixtures = {};
  before(async () => {
    fixtures.everything = await startEverything();
    fixtures.counter = await startCounter({ token: COUNTER_TOKEN });
    fixtures.issuer = await startIssuer(VAULT_CLIENT);
    fixtures.vault = await startVault(fixtures.issuer);
    fixtures.model = await standIn([]);
    fixtures.server = await start(env(fixtures.model, { ...fixtures, downPort: await freePort() }));
  });
  after(async () => {
    await stop();
    const { everything, counter, vault, issuer, model } = fixtures;
    await Promise.all([everything?.close(), counter?.close(), vault?.close(), issuer?.close(), model?.close()]);
  });
  return fixtures;
}
