// The demo's LLM mode (DEMO_LLM=openai) on the dev server, against a local
// OpenAI-compatible stand-in (no model runs offline; the stand-in streams scripted
// Chat Completions chunks the way the API does). The model looks the order up, proposes
// the refund, the approval interrupt comes from the tool's policy, and the approved
// refund moves the ledger once; a provider 429 ends the run MODEL_RATE_LIMITED.
import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { assertLlmRefundFlow, refundScript, standIn } from "./lib/model-standin.mjs";
import { postJson, sseEvents, startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { assertStrict, uid, userMessage } from "./lib/flows.mjs";

const TIMEOUT = 120_000;

describe("LLM mode (DEMO_LLM=openai) against an OpenAI-compatible stand-in", { timeout: TIMEOUT }, () => {
  after(stopAllServers);

  test("the model looks the order up, the refund waits for approval, the approved refund runs once", async () => {
    const model = await standIn(refundScript("L9001"));
    const server = await startDevServer({
      label: "llm",
      env: { DEMO_LLM: "openai", OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "sk-stand-in", DEMO_LLM_MODEL: "stand-in-1" },
    });
    await assertLlmRefundFlow(server, model, "L9001");
    assert.doesNotMatch(server.logs(), /sk-stand-in/, "the key reached the logs");
    await model.close();
  });

  test("a provider 429 ends the run MODEL_RATE_LIMITED, the provider's words withheld", async () => {
    const model = await standIn([
      (res) => {
        res.writeHead(429, { "content-type": "application/json", "retry-after": "7" });
        res.end(JSON.stringify({ error: { message: "org-secret-42 is over its quota", type: "requests" } }));
      },
    ]);
    const server = await startDevServer({ label: "llm-429", env: { DEMO_LLM: "openai", OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "sk-x" } });
    const threadId = uid("thread-llm");
    const runId = uid("run");
    const res = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage("Refund order L9002")] });
    assert.equal(res.status, 200, res.text);
    await assertStrict(res.bytes, { threadId, runId });
    const last = sseEvents(res.bytes).at(-1);
    assert.equal(last.type, "RUN_ERROR");
    assert.equal(last.code, "MODEL_RATE_LIMITED");
    assert.match(last.message, /retry in 7 s/);
    assert.doesNotMatch(res.text, /org-secret-42/);
    await model.close();
  });
});
