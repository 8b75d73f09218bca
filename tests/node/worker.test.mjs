// Cloudflare Workers end to end: the built Worker (wasm) in workerd through
// Miniflare, state in real Durable Objects (SQLite-backed) and KV. The same
// scenarios as the dev server: the official @ag-ui/client drives interrupt ->
// resume; concurrent identical resumes refund once; a restarted isolate
// resumes; bad input; A2UI and Superagent framing; SSE streamed, not buffered.
// The store's own checks run on the test-only Worker: worker-store.test.mjs.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { buildResumeArray } from "@ag-ui/client";
import { assertBinaries, postJson, request, sseEvents, sseFrames } from "./lib/devserver.mjs";
import { assertAbandonedRunCompletes, assertReconnectFollowsALiveRun, assertReconnectRejoinsTheRun, assertStopEndsTheRun, assertCleanOfficialRun, assertKeepAlivesInQuietPeriods, assertNoPanics, assertOversizedBodiesRefusedCleanly, assertStreamsIncrementally, assertStrict, describeRun, ledger, officialRefundInterrupt, officialRun, rawRefundInterrupt, uid, userMessage } from "./lib/flows.mjs";
import { assertLlmApprovalPolicy, assertLlmRefundFlow, assertModelFailuresEndCleanly, failureScript, llmEnv, policyEnv, refundScript, standIn } from "./lib/model-standin.mjs";
import * as ck from "./lib/copilotkit-flows.mjs";
import { assertProtoRefundFlow } from "./lib/proto-flows.mjs";
import { makeStateDir, startWorker, stopAllWorkers } from "./lib/worker.mjs";

const TIMEOUT = 300_000;
// A low inline limit sends thread records through KV blobs in every scenario.
const VARS = { HANDOFF_INLINE_LIMIT: "2048", HANDOFF_BODY_LIMIT: "65536" };

assertBinaries();
after(stopAllWorkers);

const toolResults = (events) => events.filter((e) => e.type === "TOOL_CALL_RESULT");

function assertApiError(res, status, code, what) {
  assert.equal(res.status, status, `${what}: ${res.text}`);
  assert.equal(res.json?.code, code, `${what}: ${res.text}`);
  assert.equal(typeof res.json?.message, "string");
}

// The check names come from the Worker (the conformance crate's CHECK_NAMES), so the list cannot drift.
// The /__test/ routes are the test-only Worker's (functions/agent-worker-tests): the deployable
// Worker has none of them.

describe("Workers: refund flow with the official client", { timeout: TIMEOUT }, () => {
  let worker;
  before(async () => {
    worker = await startWorker({ vars: VARS, label: "refund" });
  });

  async function resumeWith(ctx, response) {
    const runId = uid("run-resume");
    const resume = buildResumeArray(ctx.agent.pendingInterrupts, { [ctx.interrupt.id]: response });
    const run = await officialRun(ctx.agent, ctx.recorder, { runId, resume });
    await assertCleanOfficialRun(run, { threadId: ctx.threadId, runId });
    assert.equal(run.outcome?.outcome, "success", describeRun(run));
    assert.deepEqual(ctx.agent.pendingInterrupts, []);
    return run;
  }

  test("approve: the refund executes once and answers the original call", async () => {
    const ctx = await officialRefundInterrupt(worker, "W1001");
    assert.equal(ctx.interrupt.reason, "tool_call");
    assert.equal((await ledger(worker, "W1001")).refunds, 0);
    const run = await resumeWith(ctx, { status: "resolved", payload: { approved: true } });
    const results = toolResults(run.events);
    assert.equal(results.length, 1);
    assert.equal(results[0].toolCallId, ctx.refundCallId);
    assert.equal(JSON.parse(results[0].content).status, "refunded");
    assert.equal((await ledger(worker, "W1001")).refunds, 1);
  });

  test("answers are checked against responseSchema by the platform's validator: 422 before anything, then the right answer works", async () => {
    const ctx = await officialRefundInterrupt(worker, "W1006");
    // The schema's amountCents is an integer of at least 1: a fraction breaks it.
    const bad = await postJson(`${worker.url}/agent`, {
      threadId: ctx.threadId,
      runId: uid("run-bad"),
      messages: [],
      resume: [{ interruptId: ctx.interrupt.id, status: "resolved", payload: { approved: true, editedArgs: { orderId: "W1006", amountCents: 12.5, currency: "USD" } } }],
    });
    assert.equal(bad.status, 422, bad.text);
    assert.equal(bad.json.code, "RESUME_PAYLOAD_INVALID", bad.text);
    assert.match(bad.json.message, /editedArgs/, bad.text);
    assert.equal((await ledger(worker, "W1006")).refunds, 0);
    await resumeWith(ctx, { status: "resolved", payload: { approved: true } });
    assert.equal((await ledger(worker, "W1006")).refunds, 1);
  });

  test("deny and cancel execute nothing", async () => {
    for (const [orderId, answer, step] of [
      ["W1002", { status: "resolved", payload: { approved: false } }, "declined"],
      ["W1003", { status: "cancelled" }, "cancelled"],
    ]) {
      const ctx = await officialRefundInterrupt(worker, orderId);
      const run = await resumeWith(ctx, answer);
      assert.deepEqual(toolResults(run.events), []);
      assert.equal(ctx.agent.state.step, step);
      assert.equal((await ledger(worker, orderId)).refunds, 0);
    }
  });

  test("concurrent identical resumes: one refund, every 200 carries the same result", async () => {
    const first = await rawRefundInterrupt(worker, "W1004");
    const resume = [{ interruptId: first.interrupt.id, status: "resolved", payload: { approved: true } }];
    const answers = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const runId = uid("run");
        const res = await postJson(`${worker.url}/agent`, { threadId: first.threadId, runId, messages: [], resume });
        return { res, runId };
      }),
    );
    const seen = new Set();
    for (const { res, runId } of answers) {
      if (res.status === 409) {
        assert.equal(res.json?.code, "THREAD_BUSY", res.text);
        continue;
      }
      assert.equal(res.status, 200, res.text);
      await assertStrict(res.bytes, { threadId: first.threadId, runId });
      const [result] = toolResults(sseEvents(res.bytes));
      assert.ok(result, `a result in ${res.text.slice(0, 500)}`);
      seen.add(JSON.stringify([result.toolCallId, result.content]));
    }
    assert.equal(seen.size, 1, `one recorded result, got ${[...seen]}`);
    assert.equal((await ledger(worker, "W1004")).refunds, 1);
  });

  test("the thread view and the replay come back from the Durable Object", async () => {
    const first = await rawRefundInterrupt(worker, "W1005");
    const view = await request(`${worker.url}/threads/${first.threadId}`);
    assert.equal(view.status, 200, view.text);
    assert.deepEqual(view.json.pendingInterrupts.map((i) => i.id), [first.interrupt.id]);
    const replay = await request(`${worker.url}/threads/${first.threadId}/runs/${first.runId}/events`);
    assert.equal(replay.status, 200, replay.text);
    const report = await assertStrict(replay.bytes, { threadId: first.threadId, runId: first.runId }, "replay");
    assert.deepEqual(report.runs, [{ runId: first.runId, outcome: "interrupt", interruptIds: [first.interrupt.id] }]);
    const text = (events) => events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
    assert.equal(text(sseEvents(replay.bytes)), text(first.events), "the replay carries the same text");
    assertNoPanics(worker);
  });
});

describe("Workers: a restarted isolate resumes", { timeout: TIMEOUT }, () => {
  test("interrupt on one Miniflare, resume on a new one over the same persisted state", async () => {
    const stateDir = makeStateDir();
    const a = await startWorker({ vars: VARS, stateDir, label: "before-restart" });
    const ctx = await officialRefundInterrupt(a, "W2001");
    await a.kill();
    const b = await startWorker({ vars: VARS, stateDir, label: "after-restart" });
    ctx.agent.url = `${b.url}/agent`;
    const runId = uid("run");
    const resume = buildResumeArray(ctx.agent.pendingInterrupts, { [ctx.interrupt.id]: { status: "resolved", payload: { approved: true } } });
    const run = await officialRun(ctx.agent, ctx.recorder, { runId, resume });
    await assertCleanOfficialRun(run, { threadId: ctx.threadId, runId });
    assert.equal(toolResults(run.events)[0]?.toolCallId, ctx.refundCallId);
    assert.equal((await ledger(b, "W2001")).refunds, 1);
  });
});

describe("Workers: bad input is a 4xx before any stream", { timeout: TIMEOUT }, () => {
  let worker;
  before(async () => {
    worker = await startWorker({ vars: { ...VARS, HANDOFF_BODY_LIMIT: "1024" }, label: "bad-input" });
  });
  const valid = (text = "hello") => ({ threadId: uid("thread"), runId: uid("run"), messages: [userMessage(text)] });

  test("malformed JSON 400, missing fields 400, wrong content-type 415, oversized 413", async () => {
    const post = (body, type = "application/json") =>
      request(`${worker.url}/agent`, { method: "POST", headers: { "content-type": type }, body });
    assertApiError(await post('{"threadId": '), 400, "INVALID_INPUT", "malformed JSON");
    for (const field of ["threadId", "runId", "messages"]) {
      const body = valid();
      delete body[field];
      assertApiError(await post(JSON.stringify(body)), 400, "INVALID_INPUT", `missing ${field}`);
    }
    assertApiError(await post(JSON.stringify(valid()), "text/plain"), 415, "UNSUPPORTED_MEDIA_TYPE", "text/plain");
    assertApiError(await post(JSON.stringify(valid("x".repeat(4096)))), 413, "BODY_TOO_LARGE", "4 KiB body");
  });

  test("30 oversized (2 MiB) posts each get 413 BODY_TOO_LARGE, no reset; the run after each succeeds (no isolate restart)", async () => {
    await assertOversizedBodiesRefusedCleanly(worker, { rounds: 30 });
    assertNoPanics(worker);
  });

  test("409s: resume without answers, answering what is not pending, a reused runId; nothing lost", async () => {
    const first = await rawRefundInterrupt(worker, "W3001");
    const again = await postJson(`${worker.url}/agent`, { threadId: first.threadId, runId: uid("run"), messages: [userMessage("hi")] });
    assertApiError(again, 409, "RESUME_INCOMPLETE", "a new message while an interrupt is pending");
    const stranger = await postJson(`${worker.url}/agent`, {
      threadId: first.threadId,
      runId: uid("run"),
      messages: [],
      resume: [{ interruptId: "int-unknown", status: "resolved", payload: { approved: true } }],
    });
    assert.ok([400, 409].includes(stranger.status), stranger.text);
    // A resume may reuse the interrupted run's id (CopilotKit does); a new message may not.
    const reused = await postJson(`${worker.url}/agent`, {
      threadId: first.threadId,
      runId: first.runId,
      messages: [userMessage("something else")],
    });
    assertApiError(reused, 409, "RUN_ID_CONFLICT", "a reused runId");
    const view = await request(`${worker.url}/threads/${first.threadId}`);
    assert.deepEqual(view.json.pendingInterrupts.map((i) => i.id), [first.interrupt.id], "the interrupt is still pending");
    assert.equal((await ledger(worker, "W3001")).refunds, 0);
  });
});

describe("Workers: A2UI, Superagent and streaming", { timeout: TIMEOUT }, () => {
  let worker;
  let slow;
  const TOKEN_DELAY_MS = 120;
  before(async () => {
    [worker, slow] = await Promise.all([
      startWorker({ vars: VARS, label: "framing" }),
      startWorker({ vars: { ...VARS, DEMO_TOKEN_DELAY_MS: String(TOKEN_DELAY_MS) }, label: "slow" }),
    ]);
  });

  test("A2UI named frames end with done; the interrupt resumes over A2UI", async () => {
    const threadId = uid("thread-a2ui");
    const res = await postJson(`${worker.url}/agent?a2ui=true`, { threadId, runId: uid("run"), messages: [userMessage("Refund order W4001")] });
    assert.equal(res.status, 200, res.text);
    const frames = sseFrames(res.bytes);
    assert.ok(frames.every((f) => f.event && JSON.parse(f.data).type === f.event), "every frame named after its type");
    assert.equal(frames.at(-1).event, "done");
    const interrupt = JSON.parse(frames.find((f) => f.event === "interrupt").data).data;
    const resumed = await postJson(`${worker.url}/agent`, {
      threadId,
      runId: uid("run"),
      messages: [],
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }],
    }, { headers: { "X-A2UI": "true" } });
    assert.equal(resumed.status, 200, resumed.text);
    const result = sseFrames(resumed.bytes).find((f) => f.event === "tool_result");
    assert.equal(JSON.parse(result.data).data.name, "refund_order");
    assert.equal((await ledger(worker, "W4001")).refunds, 1);
  });

  test("Superagent legacy framing ends with [DONE]; chat/resume refunds once", async () => {
    const session = uid("session");
    const res = await postJson(`${worker.url}/api/v1/chat/stream`, { agent_id: "refund-demo", session_id: session, message: "Refund order W4002" });
    assert.equal(res.status, 200, res.text);
    const frames = sseFrames(res.bytes);
    assert.ok(frames.every((f) => f.event === undefined));
    assert.equal(frames.at(-1).data, "[DONE]");
    const resumed = await postJson(`${worker.url}/api/v1/chat/resume`, { agent_id: "refund-demo", session_id: session, input: { approved: true } });
    assert.equal(resumed.status, 200, resumed.text);
    assert.equal(sseFrames(resumed.bytes).at(-1).data, "[DONE]");
    assert.equal((await ledger(worker, "W4002")).refunds, 1);
  });

  test("SSE arrives incrementally from workerd (not buffered)", async () => {
    await assertStreamsIncrementally(slow, "W4003", TOKEN_DELAY_MS);
  });

  // The run is spawned with ctx.waitUntil: it outlives its response.
  test("a client that disconnects mid-run does not stop the run", async () => {
    await assertAbandonedRunCompletes(slow, "W4004");
  });

  test("Accept: application/vnd.ag-ui.event+proto: the refund and its approval as official protobuf frames", async () => {
    await assertProtoRefundFlow(worker, "W4030");
  });

  test("Last-Event-ID rejoins a finished run at any frame", async () => {
    await assertReconnectRejoinsTheRun(slow, "W4008");
  });

  test("a client that dropped mid-run rejoins the live run with Last-Event-ID", async () => {
    await assertReconnectFollowsALiveRun(slow, "W4009");
  });

  test("POST /threads/{id}/runs/{runId}/stop ends the run cancelled and releases the thread", async () => {
    await assertStopEndsTheRun(slow, "W4007");
  });

  test("DEMO_LLM=openai: a model drives the refund through fetch; the approved refund runs once", async () => {
    const model = await standIn(refundScript("W4010"));
    const llm = await startWorker({
      vars: { ...VARS, ...llmEnv(model) },
      label: "llm",
    });
    await assertLlmRefundFlow(llm, model, "W4010");
    await model.close();
  });

  test("DEMO_LLM=openai with HANDOFF_AUTH=api-key: the refund's approval policy holds", async () => {
    const model = await standIn(refundScript("W4012"));
    const llm = await startWorker({ vars: { ...VARS, ...policyEnv(model) }, label: "llm-policy" });
    await assertLlmApprovalPolicy(llm, "W4012");
    await model.close();
  });

  test("DEMO_LLM=openai: model errors, a 429 and a dropped connection end runs with stable codes in workerd", async () => {
    const model = await standIn(failureScript());
    const llm = await startWorker({ vars: { ...VARS, ...llmEnv(model) }, label: "llm-errors" });
    await assertModelFailuresEndCleanly(llm, "W4011");
    await model.close();
  });

  test("pauses carry `: keep-alive` comments from Workers timers", async () => {
    const quiet = await startWorker({ vars: { ...VARS, DEMO_TOKEN_DELAY_MS: "300", HANDOFF_KEEP_ALIVE_MS: "100" }, label: "keep-alive" });
    await assertKeepAlivesInQuietPeriods(quiet, "W4005");
  });

  test("HANDOFF_RUN_BUDGET_MS: a run that would outlive its budget ends cancelled and releases the thread", async () => {
    const bounded = await startWorker({ vars: { ...VARS, DEMO_TOKEN_DELAY_MS: "300", HANDOFF_RUN_BUDGET_MS: "1500" }, label: "budget" });
    const threadId = uid("thread-budget");
    const runId = uid("run");
    const res = await postJson(`${bounded.url}/agent`, { threadId, runId, messages: [userMessage("Refund order W4006")] });
    assert.equal(res.status, 200, res.text);
    await assertStrict(res.bytes, { threadId, runId });
    const finished = sseEvents(res.bytes).at(-1);
    assert.equal(finished.type, "RUN_FINISHED");
    assert.equal(finished.outcome?.type, "cancelled", JSON.stringify(finished));
    const view = await request(`${bounded.url}/threads/${threadId}`);
    assert.equal(view.status, 200, view.text);
    assert.notEqual(view.json.status, "running", "the lease is released");
    assert.deepEqual(view.json.pendingInterrupts ?? [], []);
    assert.equal((await ledger(bounded, "W4006")).refunds, 0);
  });

  test("the workers stayed healthy", async () => {
    for (const w of [worker, slow]) {
      assert.equal((await request(`${w.url}/healthz`)).status, 200);
      assertNoPanics(w);
    }
  });
});

describe("Workers: a retried fraud-review delegation is the same A2A message", { timeout: TIMEOUT }, () => {
  // The official @a2a-js/sdk remote behind a proxy that forwards the first SendMessage and
  // then drops the connection instead of answering: the delegation's outcome is in doubt.
  let remote;
  let proxy;
  let worker;
  before(async () => {
    const { startFraudAgent } = await import("./lib/a2a-remote.mjs");
    remote = await startFraudAgent();
    proxy = await startAnswerLosingProxy(remote.url);
    worker = await startWorker({
      vars: { ...VARS, DEMO_FRAUD_AGENT_URL: proxy.url, HANDOFF_A2A_ALLOW_LOOPBACK: "true" },
      label: "a2a-retry",
    });
  });
  after(async () => {
    await proxy?.close();
    await remote?.close();
  });

  test("a lost SendMessage answer, then a retry: same messageId and Idempotency-Key (the effect's key)", async () => {
    const threadId = uid("thread-a2a-retry");
    proxy.loseNextSend = true;
    const lost = await postJson(`${worker.url}/agent`, { threadId, runId: uid("run"), messages: [userMessage("Refund order W5001")] });
    assert.equal(lost.status, 200, lost.text);
    assert.equal(sseEvents(lost.bytes).at(-1).type, "RUN_ERROR", lost.text);
    const retried = await rawRefundInterrupt(worker, "W5001", { threadId });
    assert.equal(retried.interrupt.reason, "a2a:task");

    const sends = remote.requests.filter((r) => r.method === "SendMessage");
    assert.equal(sends.length, 2, "the remote received the lost send and the retry");
    // The order's first refund (no refund executed yet): review 0.
    const key = `${threadId}/a2a:fraud:W5001:0`;
    for (const send of sends) {
      assert.equal(send.body.params.message.messageId, key);
      assert.equal(send.headers["idempotency-key"], key);
    }
    assertNoPanics(worker);
  });
});

/** Forwards to `target` (rewriting the agent card's URLs to itself); with `loseNextSend`, forwards one POST and drops the connection. */
async function startAnswerLosingProxy(target) {
  const { default: http } = await import("node:http");
  const upstream = new URL(target);
  const proxy = { loseNextSend: false };
  const hopByHop = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive"]);
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !hopByHop.has(name)));
    const answer = await fetch(new URL(req.url, upstream), {
      method: req.method,
      headers,
      body: req.method === "POST" ? Buffer.concat(chunks) : undefined,
    });
    const text = (await answer.text()).replaceAll(upstream.origin, proxy.url);
    if (req.method === "POST" && proxy.loseNextSend) {
      proxy.loseNextSend = false;
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
    res.end(text);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${server.address().port}`;
  proxy.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return proxy;
}

describe("Workers: 200 racing identical resumes", { timeout: TIMEOUT }, () => {
  let worker;
  // The winning run streams its words 10 ms apart, so it is still running while the other
  // requests arrive: they are refused, resend, and get its replay once it finished.
  before(async () => {
    worker = await startWorker({ vars: { ...VARS, DEMO_TOKEN_DELAY_MS: "10" }, label: "race-200" });
  });

  // 200 clients send the same answer at once (a fresh runId per POST, each on its own
  // connection: `connection: close`, because workerd's local listener, on a loaded machine,
  // resets keep-alive connections that undici then reuses for the resend, and fetch does not
  // retry a POST). On a saturated machine workerd still resets some connections before any
  // response: such a client cannot know whether its answer arrived, so it resends it, as a
  // real client would (the exactly-once case itself: the refund must still happen once); a client refused with 409 THREAD_BUSY resends after a short pause until it
  // gets a stream. Every response is checked: a 200 whose SSE the strict verifier accepts,
  // ending in success with the one recorded result, or a 409 THREAD_BUSY before any stream.
  test("200 identical resumes at once: one refund, every response a strict stream with the one result or 409 THREAD_BUSY", async () => {
    const CLIENTS = 200;
    const MAX_SENDS = 200;
    const orderId = "W6001";
    const first = await rawRefundInterrupt(worker, orderId);
    const resume = [{ interruptId: first.interrupt.id, status: "resolved", payload: { approved: true } }];
    const send = async (runId) => ({
      runId,
      res: await postJson(`${worker.url}/agent`, { threadId: first.threadId, runId, messages: [], resume }, { allow5xx: true, headers: { connection: "close" } }),
    });
    const resets = [];
    const client = async () => {
      const sent = [];
      for (let n = 0; n < MAX_SENDS; n += 1) {
        let answer;
        try {
          answer = await send(uid("run"));
        } catch (err) {
          // No response at all (a reset connection): resend the same answer.
          if (!(err instanceof TypeError) || !err.cause) throw err;
          resets.push(err.cause.code ?? err.cause.message);
          continue;
        }
        sent.push(answer);
        if (answer.res.status !== 409 || answer.res.json?.code !== "THREAD_BUSY") break;
        await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30));
      }
      return sent;
    };
    const clients = await Promise.all(Array.from({ length: CLIENTS }, client));

    const seen = new Set();
    const counts = { streams: 0, busy: 0, firstStreams: 0, firstBusy: 0 };
    for (const sent of clients) {
      for (const [n, { res, runId }] of sent.entries()) {
        if (res.status === 409) {
          assert.equal(res.json?.code, "THREAD_BUSY", `run ${runId}: ${res.text}`);
          counts.busy += 1;
          if (n === 0) counts.firstBusy += 1;
          continue;
        }
        assert.equal(res.status, 200, `run ${runId}: ${res.text.slice(0, 500)}`);
        await assertStrict(res.bytes, { threadId: first.threadId, runId });
        const events = sseEvents(res.bytes);
        assert.equal(events.at(-1).type, "RUN_FINISHED", `run ${runId}: ${res.text.slice(0, 500)}`);
        assert.equal(events.at(-1).outcome?.type, "success", `run ${runId}: ${JSON.stringify(events.at(-1))}`);
        const results = toolResults(events);
        assert.equal(results.length, 1, `run ${runId}: one result in ${res.text.slice(0, 500)}`);
        seen.add(JSON.stringify([results[0].toolCallId, results[0].content]));
        counts.streams += 1;
        if (n === 0) counts.firstStreams += 1;
      }
      assert.equal(sent.at(-1).res.status, 200, `a client still refused after ${MAX_SENDS} sends`);
    }
    const refunds = (await ledger(worker, orderId)).refunds;
    console.log(
      `workerd: ${CLIENTS} clients sending identical resumes at once: first sends ${counts.firstStreams} streams, ` +
        `${counts.firstBusy} THREAD_BUSY; all ${counts.streams + counts.busy} sends: ${counts.streams} streams, ` +
        `${counts.busy} THREAD_BUSY; connections reset before a response: ${resets.length}; refunds executed: ${refunds}`,
    );
    assert.equal(counts.streams, CLIENTS, "every client got a stream");
    assert.equal(seen.size, 1, `one recorded result, got ${[...seen]}`);
    assert.equal(refunds, 1, "the refund executed once");
    assertNoPanics(worker);
  });
});

// The CopilotKit flows of copilotkit.test.mjs, from @copilotkit/core to the Worker's /copilotkit routes.
describe("Workers: CopilotKit runtime protocol with @copilotkit/core", { timeout: TIMEOUT }, () => {
  let worker;
  let slow;
  before(async () => {
    [worker, slow] = await Promise.all([
      startWorker({ vars: VARS, label: "copilotkit" }),
      startWorker({ vars: { ...VARS, DEMO_TOKEN_DELAY_MS: "150" }, label: "copilotkit-slow" }),
    ]);
  });
  after(() => {
    for (const w of [worker, slow]) if (w) assertNoPanics(w);
  });

  test("CopilotKit: discovery over GET /info; unknown agents and methods are JSON 4xx", async () => {
    await ck.assertDiscovery(worker);
    await ck.assertUnknownsRefused(worker);
  });
  test("CopilotKit: a run ends on the interrupt, resolved through the interrupt API, one refund", () =>
    ck.assertRunResolvedThroughInterruptApi(worker, "W4020"));
  test("CopilotKit: connect after a reload re-presents history, state and the pending interrupt", () =>
    ck.assertReconnectAfterReload(worker, "W4021"));
  test("CopilotKit: connect joins a live run and follows it to its end", () => ck.assertConnectJoinsLiveRun(slow, "W4022"));
  test("CopilotKit: connect with Last-Event-ID rejoins the live run where the page dropped", () =>
    ck.assertConnectRejoinsByLastEventId(slow, "W4026"));
  test("CopilotKit: stopAgent cancels the run; a REST stop mid-stream ends it cancelled", async () => {
    await ck.assertStopAgentCancels(slow, "W4023");
    await ck.assertRestStopWhileStreaming(slow, "W4024");
  });
  test("CopilotKit: single-route envelope; connect on a thread that never ran is empty", async () => {
    await ck.assertSingleRouteMode(worker, "W4025");
    await ck.assertConnectToNewThreadIsEmpty(worker);
  });
  test("CopilotKit's thread store over Durable Objects: list, next page, rename, archive, unarchive, delete (REST and envelope)", async () => {
    await ck.assertThreadStore(worker, "rest");
    await ck.assertThreadStore(worker, "single");
  });
});
