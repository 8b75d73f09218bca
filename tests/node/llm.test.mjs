// The demo's LLM mode on the dev server against local provider stand-ins streaming in
// each provider's wire format (no model runs offline): the refund where the model looks
// the order up and proposes the refund, approved on another process, refunds once and
// the model's answer streams (OpenAI-compatible and Anthropic); parallel tool calls;
// mid-stream error events, a 429 with retry-after and a dropped connection end the run
// with stable codes and the provider's words withheld. Every stream passes the strict
// verifier and the official client.
import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { makeDataDir, postJson, sseEvents, startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { assertStrict, describeRun, uid, userMessage } from "./lib/flows.mjs";
import { assertLlmApprovalPolicy, assertLlmRefundFlow, assertModelFailuresEndCleanly, dialects, failureScript, llmEnv, policyEnv, refundScript, standIn } from "./lib/model-standin.mjs";
import { runOfficial } from "./lib/official.mjs";

const TIMEOUT = 180_000;
const { openai } = dialects;

/** One run on `server`; returns its events after checking the stream everywhere. */
async function runOnce(server, text) {
  const threadId = uid("thread-llm");
  const runId = uid("run");
  const res = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage(text)] });
  assert.equal(res.status, 200, res.text);
  await assertStrict(res.bytes, { threadId, runId });
  const official = await runOfficial(res.bytes, { threadId, runId });
  assert.equal(official.accepted, true, describeRun(official));
  return { events: sseEvents(res.bytes), text: res.text };
}

describe("LLM mode (DEMO_LLM) against provider stand-ins", { timeout: TIMEOUT }, () => {
  after(stopAllServers);

  test("OpenAI-compatible: propose, approve on another process, one refund, the answer streams", async () => {
    const model = await standIn(refundScript("L9001"));
    const dataDir = makeDataDir();
    const a = await startDevServer({ label: "llm-a", dataDir, env: llmEnv(model) });
    const b = await startDevServer({ label: "llm-b", dataDir, env: llmEnv(model) });
    await assertLlmRefundFlow(a, model, "L9001", { approver: b });
    for (const server of [a, b]) assert.doesNotMatch(server.logs(), /sk-stand-in/, "the key reached the logs");
    await model.close();
  });

  test("approval policy: the requester cannot approve, an approver cannot widen the edit (api-key)", async () => {
    const model = await standIn(refundScript("L9007"));
    const server = await startDevServer({ label: "llm-policy", env: policyEnv(model) });
    await assertLlmApprovalPolicy(server, "L9007");
    await model.close();
  });

  test("Anthropic Messages: the same flow from named events", async () => {
    const model = await standIn(refundScript("L9003", "anthropic"));
    const server = await startDevServer({ label: "llm-anthropic", env: llmEnv(model, "anthropic") });
    await assertLlmRefundFlow(server, model, "L9003", { provider: "anthropic" });
    await model.close();
  });

  test("parallel tool calls in one turn each run and answer their own call", async () => {
    const model = await standIn([
      openai.tools([["get_order", JSON.stringify({ orderId: "L9004" })], ["get_order", JSON.stringify({ orderId: "L9005" })]]),
      openai.text("Both orders are fine."),
    ]);
    const server = await startDevServer({ label: "llm-parallel", env: llmEnv(model) });
    const { events } = await runOnce(server, "Compare orders L9004 and L9005");
    const starts = events.filter((e) => e.type === "TOOL_CALL_START").map((e) => e.toolCallId);
    const results = events.filter((e) => e.type === "TOOL_CALL_RESULT");
    assert.equal(starts.length, 2);
    assert.deepEqual(results.map((r) => r.toolCallId), starts);
    assert.match(results[1].content, /L9005/);
    assert.equal(events.at(-1).outcome?.type, "success");
    // Two model calls (the tool calls: 50 prompt and 9 completion tokens; the answer: 60
    // and 4): AG-UI's usage on RUN_FINISHED, one entry for the one model, no CUSTOM event.
    assert.deepEqual(events.at(-1).usage, [
      { provider: "openai", model: "stand-in-1", inputTokens: 110, outputTokens: 13, totalTokens: 123 },
    ]);
    assert.ok(!events.some((e) => e.type === "CUSTOM"));
    await model.close();
  });

  test("a mid-stream error event, a 429 with retry-after and a dropped connection end the run with stable codes", async () => {
    const model = await standIn(failureScript());
    const server = await startDevServer({ label: "llm-errors", env: llmEnv(model) });
    await assertModelFailuresEndCleanly(server, "L9006");
    await model.close();
  });
});
