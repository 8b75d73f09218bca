// The demo's LLM mode (DEMO_LLM=openai) on the dev server, against a local
// OpenAI-compatible stand-in (no model runs offline; the stand-in streams scripted
// Chat Completions chunks the way the API does). The model looks the order up, proposes
// the refund, the approval interrupt comes from the tool's policy, and the approved
// refund moves the ledger once; a provider 429 ends the run MODEL_RATE_LIMITED.
import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { postJson, sseEvents, startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { assertStrict, ledger, uid, userMessage } from "./lib/flows.mjs";

const TIMEOUT = 120_000;

const chunk = (delta, finish = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const toolTurn = (name, args) => [
  chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name, arguments: "" } }] }),
  // Arguments in fragments, as models stream them.
  ...args.match(/.{1,7}/g).map((piece) => chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] })),
  chunk({}, "tool_calls"),
  `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 50, completion_tokens: 9 } })}\n\n`,
  "data: [DONE]\n\n",
];
const textTurn = (text) => [...text.split(" ").map((w, i) => chunk({ content: (i ? " " : "") + w })), chunk({}, "stop"), "data: [DONE]\n\n"];

/** An OpenAI-compatible endpoint answering each request with the next scripted turn. */
async function standIn(turns) {
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

describe("LLM mode (DEMO_LLM=openai) against an OpenAI-compatible stand-in", { timeout: TIMEOUT }, () => {
  after(stopAllServers);

  test("the model looks the order up, the refund waits for approval, the approved refund runs once", async () => {
    const model = await standIn([
      toolTurn("get_order", JSON.stringify({ orderId: "L9001" })),
      toolTurn("refund_order", JSON.stringify({ orderId: "L9001", amountCents: 1500 })),
      textTurn("Refunded 15.00 for order L9001."),
    ]);
    const server = await startDevServer({
      label: "llm",
      env: { DEMO_LLM: "openai", OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "sk-stand-in", DEMO_LLM_MODEL: "stand-in-1" },
    });
    const threadId = uid("thread-llm");
    const runId = uid("run");
    const first = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage("Please refund order L9001")] });
    assert.equal(first.status, 200, first.text);
    await assertStrict(first.bytes, { threadId, runId });
    const events = sseEvents(first.bytes);
    const lookedUp = events.find((e) => e.type === "TOOL_CALL_RESULT");
    assert.match(lookedUp.content, /"orderId":"L9001"/, "get_order ran and its result went out");
    assert.ok(events.filter((e) => e.type === "TOOL_CALL_ARGS").length > 2, "arguments forwarded as they streamed");
    const finished = events.at(-1);
    assert.equal(finished.outcome?.type, "interrupt", JSON.stringify(finished));
    const interrupt = finished.outcome.interrupts[0];
    assert.equal(interrupt.reason, "tool_call");
    assert.ok(interrupt.responseSchema, "the approval says what an answer looks like");
    assert.equal((await ledger(server, "L9001")).refunds, 0, "refunded before approval");

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
    const account = await ledger(server, "L9001");
    assert.equal(account.refunds, 1);
    assert.equal(account.refundedCents, 1500);
    const third = model.requests[2].body.messages;
    assert.match(third.at(-1).content, /"status":"refunded"/, "the model heard the refund's result");
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
