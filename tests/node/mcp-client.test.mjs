// Issue 52, the client side: Handoff calling Handoff over MCP 2026-07-28 with a human in the
// middle, and the fallback to the session revisions against the reference server.
// - Dev server A's LLM agent (the scripted model stand-in) calls dev server B's /mcp tool
//   (B: the scripted demo agent, whose refund waits for an approval). B answers
//   `input_required` with an elicitation; A ends its run with an `mcp_input` interrupt; a
//   human answers it on A with the official @ag-ui/client; A retries B with the
//   `inputResponses` and the `requestState`: B refunds exactly once, a replayed answer on A
//   refunds nothing more.
// - A in front of @modelcontextprotocol/server-everything (session revisions only): A asks
//   `server/discover`, is refused, and goes on with `initialize` and `Mcp-Session-Id`.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { buildResumeArray } from "@ag-ui/client";
import { Recorder, makeAgent, postJson, sseEvents, startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { assertCleanOfficialRun, describeRun, ledger, officialRun, uid, userMessage } from "./lib/flows.mjs";
import { startEverything } from "./lib/mcp-servers.mjs";
import { dialects, llmEnv, standIn } from "./lib/model-standin.mjs";

const { openai } = dialects;
const TIMEOUT = 180_000;
const orderId = () => `A${Math.floor(1000 + Math.random() * 8999)}`;

/** A pass-through proxy to `target` recording each JSON-RPC method and the answer's status. */
async function recordingProxy(target) {
  const seen = [];
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const piece of req) body += piece;
    const headers = { ...req.headers };
    delete headers.host;
    const answer = await fetch(target, { method: req.method, headers, body: req.method === "POST" ? body : undefined });
    const text = await answer.text();
    let method;
    try {
      method = JSON.parse(body).method;
    } catch {
      method = undefined;
    }
    seen.push({ method, status: answer.status, headers: req.headers, answer: text });
    res.writeHead(answer.status, Object.fromEntries(answer.headers.entries()));
    res.end(text);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}/mcp`, seen, close: () => new Promise((r) => server.close(r)) };
}

describe("Handoff calling Handoff over MCP 2026-07-28, a human answering in the middle", { timeout: TIMEOUT }, () => {
  let a;
  let b;
  let model;
  let proxy;
  before(async () => {
    b = await startDevServer({ label: "mcp-b" });
    proxy = await recordingProxy(`${b.url}/mcp`);
    model = await standIn([]);
    a = await startDevServer({
      label: "mcp-a",
      env: { ...llmEnv(model), HANDOFF_MCP_SERVERS: `b=${proxy.url}`, HANDOFF_MCP_ALLOW_LOOPBACK: "true" },
    });
  });
  after(async () => {
    await stopAllServers();
    await proxy?.close();
    await model?.close();
  });

  test("B's interrupt is A's interrupt; the answer on A resumes B exactly once", async () => {
    const order = orderId();
    model.script([
      openai.tools([["b__refund-demo", JSON.stringify({ message: `Refund order ${order}` })]]),
      openai.text(`B refunded order ${order}.`),
    ]);
    const recorder = new Recorder();
    const threadId = uid("thread-a");
    const agent = makeAgent(`${a.url}/agent`, { recorder, threadId, messages: [userMessage(`Ask B to refund ${order}`)] });
    const runId = uid("run");
    const asked = await officialRun(agent, recorder, { runId });
    await assertCleanOfficialRun(asked, { threadId, runId });
    assert.equal(asked.outcome?.outcome, "interrupt", describeRun(asked));
    assert.equal(agent.pendingInterrupts.length, 1);
    const question = agent.pendingInterrupts[0];
    assert.equal(question.reason, "mcp_input", JSON.stringify(question));
    assert.equal(question.responseSchema?.properties?.approved?.type, "boolean", JSON.stringify(question));
    assert.match(question.message ?? "", new RegExp(order), "B's question, as B asked it");
    assert.ok(question.toolCallId, "the interrupt names A's tool call");
    assert.doesNotMatch(JSON.stringify(question), /requestState/, "B's state stays on A's server");
    assert.equal((await ledger(b, order)).refunds, 0, "nothing refunded before the human answered");

    const calls = proxy.seen.filter((s) => s.method && s.method !== "server/discover");
    assert.ok(proxy.seen.some((s) => s.method === "server/discover" && s.status === 200), "A discovered B");
    assert.ok(!proxy.seen.some((s) => s.method === "initialize"), "no session with a 2026-07-28 server");
    const firstCall = calls.find((s) => s.method === "tools/call");
    assert.equal(firstCall.headers["mcp-method"], "tools/call");
    assert.equal(firstCall.headers["mcp-name"], "refund-demo");
    assert.equal(JSON.parse(firstCall.answer).result.resultType, "input_required");

    // The human answers on A over AG-UI with the official client.
    const resume = buildResumeArray(agent.pendingInterrupts, { [question.id]: { status: "resolved", payload: { approved: true } } });
    const answerRun = uid("run");
    const answered = await officialRun(agent, recorder, { runId: answerRun, resume });
    await assertCleanOfficialRun(answered, { threadId, runId: answerRun });
    assert.equal(answered.outcome?.outcome, "success", describeRun(answered));
    const result = answered.events.find((e) => e.type === "TOOL_CALL_RESULT");
    assert.equal(result?.toolCallId, question.toolCallId);
    assert.match(result.content, new RegExp(order), "B's final answer is the tool's result");
    const said = answered.events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
    assert.equal(said, `B refunded order ${order}.`);
    const retries = proxy.seen.filter((s) => s.method === "tools/call");
    assert.equal(retries.length, 2, "one call, one retry");
    const retry = JSON.parse(retries[1].answer);
    assert.equal(retry.result.resultType, "complete", retries[1].answer);
    assert.equal((await ledger(b, order)).refunds, 1, "exactly one refund on B");

    // A replayed answer (byte-identical POST) and the same answer under a new run id: the
    // recorded result; B is not called again.
    const body = recorder.records.at(-1).request;
    assert.equal(body.runId, answerRun);
    const replay = await postJson(`${a.url}/agent`, body);
    assert.equal(replay.status, 200, replay.text);
    assert.equal(sseEvents(replay.bytes).find((e) => e.type === "TOOL_CALL_RESULT")?.content, result.content);
    const again = await postJson(`${a.url}/agent`, { ...body, runId: uid("run") });
    assert.ok([200, 409].includes(again.status), again.text);
    assert.equal(proxy.seen.filter((s) => s.method === "tools/call").length, 2, "B was not called again");
    assert.equal((await ledger(b, order)).refunds, 1, "still one refund on B");
  });

  test("a cancelled question reaches B as cancel: nothing refunded", async () => {
    const order = orderId();
    model.script([
      openai.tools([["b__refund-demo", JSON.stringify({ message: `Refund order ${order}` })]]),
      openai.text("B did not refund."),
    ]);
    const threadId = uid("thread-a");
    const first = await postJson(`${a.url}/agent`, { threadId, runId: uid("run"), messages: [userMessage(`Refund ${order} at B`)] });
    const question = sseEvents(first.bytes).at(-1).outcome.interrupts[0];
    assert.equal(question.reason, "mcp_input");
    const cancelled = await postJson(`${a.url}/agent`, {
      threadId, runId: uid("run"), messages: [], resume: [{ interruptId: question.id, status: "cancelled" }],
    });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(sseEvents(cancelled.bytes).at(-1).outcome?.type, "success", cancelled.text);
    const retry = proxy.seen.filter((s) => s.method === "tools/call").at(-1);
    assert.equal(JSON.parse(retry.answer).result.resultType, "complete");
    assert.equal((await ledger(b, order)).refunds, 0, "a cancel refunds nothing");
  });
});

describe("the fallback to the session revisions (server-everything)", { timeout: TIMEOUT }, () => {
  let a;
  let model;
  let everything;
  let proxy;
  before(async () => {
    everything = await startEverything();
    proxy = await recordingProxy(everything.url);
    model = await standIn([]);
    a = await startDevServer({
      label: "mcp-a-everything",
      env: { ...llmEnv(model), HANDOFF_MCP_SERVERS: `everything=${proxy.url}`, HANDOFF_MCP_ALLOW_LOOPBACK: "true" },
    });
  });
  after(async () => {
    await stopAllServers();
    await proxy?.close();
    await everything?.close();
    await model?.close();
  });

  test("server/discover is refused, initialize and a session follow, the call works", async () => {
    model.script([openai.tools([["everything__echo", JSON.stringify({ message: "fallback" })]]), openai.text("Echoed.")]);
    const threadId = uid("thread-everything");
    const runId = uid("run");
    const run = await postJson(`${a.url}/agent`, { threadId, runId, messages: [userMessage("Echo fallback")] });
    assert.equal(run.status, 200, run.text);
    assert.equal(sseEvents(run.bytes).find((e) => e.type === "TOOL_CALL_RESULT")?.content, "Echo: fallback");
    const methods = proxy.seen.map((s) => s.method);
    assert.deepEqual(methods.slice(0, 3), ["server/discover", "initialize", "notifications/initialized"], methods.join(","));
    assert.ok(proxy.seen[0].status >= 400 || /"error"/.test(proxy.seen[0].answer), "the reference server refused the probe");
    const call = proxy.seen.find((s) => s.method === "tools/call");
    assert.ok(call.headers["mcp-session-id"], "the call went in the session");
    assert.equal(call.headers["mcp-protocol-version"], "2025-11-25");
  });
});
