// The starter (functions/starter) on both serverless hosts, driven by the official
// @ag-ui/client: under `cargo lambda watch` with DynamoDB on moto_server, and built for
// Workers in workerd (Miniflare, Durable Objects + KV). One flow per host:
//   run 1: the backend tool's result is streamed, then the run ends with an approval
//          interrupt (responseSchema) bound to submit_expense;
//   run 2: the approval files the expense once (a duplicate answer gets the recorded
//          receipt) and calls the frontend tool, so the run ends with pendingToolCallIds;
//   run 3: the client sends the frontend tool's result back and the agent continues.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { buildResumeArray } from "@ag-ui/client";
import fs from "node:fs";
import path from "node:path";
import { BIN_DIR, Recorder, assertBinaries, makeAgent, postJson, request, sseEvents, startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { assertCleanOfficialRun, assertStrict, describeRun, officialRun, uid, userMessage } from "./lib/flows.mjs";
import { startLambda, startMoto, stopAll } from "./lib/lambda.mjs";
import { STARTER_DIR, startWorker, stopAllWorkers } from "./lib/worker.mjs";

const TIMEOUT = 900_000;
const TOOLS = [
  {
    name: "show_receipt",
    description: "Shows a filed expense's receipt to the user.",
    parameters: { type: "object", properties: { receipt: { type: "string" }, amount: { type: "number" } } },
  },
];

assertBinaries();

const started = (events, name) => events.find((e) => e.type === "TOOL_CALL_START" && e.toolCallName === name);
const resultOf = (events, call) => events.find((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === call?.toolCallId);
const text = (events) => events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");

async function starterFlow(server) {
  const recorder = new Recorder();
  const threadId = uid("thread");
  const agent = makeAgent(`${server.url}/agent`, { recorder, threadId, messages: [userMessage("Expense 42.50 for team lunch")] });

  // Run 1: backend tool, then the approval interrupt.
  let runId = uid("run");
  const first = await officialRun(agent, recorder, { runId, tools: TOOLS });
  await assertCleanOfficialRun(first, { threadId, runId });
  assert.equal(first.outcome?.outcome, "interrupt", describeRun(first));
  const check = resultOf(first.events, started(first.events, "check_policy"));
  assert.deepEqual(JSON.parse(check?.content ?? "null"), { withinPolicy: true, limit: 100 }, "the backend tool's result is streamed");
  const submit = started(first.events, "submit_expense");
  assert.ok(submit, describeRun(first));
  assert.equal(resultOf(first.events, submit), undefined, "nothing is filed before the approval");
  assert.equal(agent.pendingInterrupts.length, 1);
  const [interrupt] = agent.pendingInterrupts;
  assert.equal(interrupt.toolCallId, submit.toolCallId);
  assert.deepEqual(interrupt.responseSchema?.required, ["approved"]);
  const pending = await request(`${server.url}/threads/${threadId}`);
  assert.deepEqual(pending.json.pendingInterrupts.map((i) => i.id), [interrupt.id], "the interrupt is durable");

  // Run 2: approve. The effect files the expense; the frontend tool is left to the client.
  const resume = buildResumeArray(agent.pendingInterrupts, { [interrupt.id]: { status: "resolved", payload: { approved: true } } });
  runId = uid("run");
  const second = await officialRun(agent, recorder, { runId, resume, tools: TOOLS });
  await assertCleanOfficialRun(second, { threadId, runId });
  assert.equal(second.outcome?.outcome, "success", describeRun(second));
  assert.deepEqual(agent.pendingInterrupts, []);
  const filed = JSON.parse(resultOf(second.events, submit)?.content ?? "null");
  assert.equal(filed?.status, "filed", describeRun(second));
  assert.match(filed.receipt, /^EXP-/);
  const show = started(second.events, "show_receipt");
  assert.ok(show, describeRun(second));
  assert.deepEqual(second.outcome.pendingToolCallIds, [show.toolCallId]);
  assert.equal(second.outcome.event?.outcome?.pendingToolCallIds?.[0], show.toolCallId);

  // The same answer again (a retry, another tab): the recorded receipt, not a second filing.
  const againId = uid("run");
  const again = await postJson(`${server.url}/agent`, { threadId, runId: againId, messages: [], resume, tools: TOOLS });
  if (again.status === 200) {
    await assertStrict(again.bytes, { threadId, runId: againId });
    const replayed = resultOf(sseEvents(again.bytes), submit);
    if (replayed) assert.equal(JSON.parse(replayed.content).receipt, filed.receipt, "a duplicate answer gets the recorded receipt");
  } else {
    assert.equal(again.status, 409, again.text);
  }
  const view = await request(`${server.url}/threads/${threadId}`);
  assert.equal(view.status, 200, view.text);
  assert.deepEqual(view.json.state?.expense, { amount: 42.5, status: "filed", receipt: filed.receipt }, "filed once");

  // Run 3: the client ran show_receipt and sends its result; the agent continues.
  agent.addMessage({ id: uid("msg-tool"), role: "tool", toolCallId: show.toolCallId, content: "shown" });
  runId = uid("run");
  const third = await officialRun(agent, recorder, { runId, tools: TOOLS });
  await assertCleanOfficialRun(third, { threadId, runId });
  assert.equal(third.outcome?.outcome, "success", describeRun(third));
  assert.deepEqual(third.outcome.pendingToolCallIds ?? [], [], describeRun(third));
  assert.equal(text(third.events), "Your receipt is on screen (shown).");
}

async function declineFlow(server) {
  const threadId = uid("thread");
  const runId = uid("run");
  const res = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage("Expense 12 taxi")] });
  assert.equal(res.status, 200, res.text);
  const interrupt = sseEvents(res.bytes).at(-1)?.outcome?.interrupts?.[0];
  assert.ok(interrupt, res.text);
  // A wrong answer (the agent checks answers by its own type): 422 before any stream,
  // the interrupt stays pending, and the same runId is free for the right answer.
  const resumeId = uid("run");
  const wrong = await postJson(`${server.url}/agent`, {
    threadId,
    runId: resumeId,
    messages: [],
    resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: "yes" } }],
  });
  assert.equal(wrong.status, 422, wrong.text);
  assert.equal(wrong.json.code, "RESUME_PAYLOAD_INVALID", wrong.text);
  assert.match(wrong.json.message, /approved/, wrong.text);
  const view = await request(`${server.url}/threads/${threadId}`);
  assert.deepEqual(view.json.pendingInterrupts.map((i) => i.id), [interrupt.id], view.text);
  const no = await postJson(`${server.url}/agent`, {
    threadId,
    runId: resumeId,
    messages: [],
    resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: false } }],
  });
  assert.equal(no.status, 200, no.text);
  await assertStrict(no.bytes, { threadId, runId: resumeId });
  const events = sseEvents(no.bytes);
  assert.equal(text(events), "Not filed.");
  assert.ok(!events.some((e) => e.type === "TOOL_CALL_RESULT"), "a denial executes nothing");
}

describe("starter on the local server (make dev-starter)", { timeout: TIMEOUT }, () => {
  let server;
  before(async () => {
    const bin = path.join(BIN_DIR, "starter");
    assert.ok(fs.existsSync(bin), `${bin} not found: cargo build -p starter`);
    server = await startDevServer({ bin, label: "starter" });
  });
  after(stopAllServers);

  test("backend tool, approval, effect once, frontend tool round trip", async () => {
    await starterFlow(server);
  });
  test("a wrong answer is refused with 422; a denial files nothing", async () => {
    await declineFlow(server);
  });
});

describe("starter on AWS Lambda (cargo lambda watch + moto_server)", { timeout: TIMEOUT }, () => {
  let lambda;
  before(async () => {
    const moto = await startMoto();
    lambda = await startLambda({ moto, table: `starter_${Date.now()}`, label: "starter-lambda", pkg: "starter", bin: "starter-lambda" });
  });
  after(stopAll);

  test("backend tool, approval, effect once, frontend tool round trip", async () => {
    await starterFlow(lambda);
  });
  test("a wrong answer is refused with 422; a denial files nothing", async () => {
    await declineFlow(lambda);
  });
});

describe("starter on Cloudflare Workers (workerd)", { timeout: TIMEOUT }, () => {
  let worker;
  before(async () => {
    worker = await startWorker({ workerDir: STARTER_DIR, label: "starter-worker" });
  });
  after(stopAllWorkers);

  test("backend tool, approval, effect once, frontend tool round trip", async () => {
    await starterFlow(worker);
  });
  test("a wrong answer is refused with 422; a denial files nothing", async () => {
    await declineFlow(worker);
  });
});
