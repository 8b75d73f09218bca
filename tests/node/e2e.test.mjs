// End-to-end tests against real dev-server processes, driven by the OFFICIAL
// @ag-ui/client (HttpAgent) and by raw fetch.
//
//   cargo build -p dev-server -p handoff-tests
//   HANDOFF_BIN_DIR=<target/debug> node --test e2e.test.mjs
//
// Every SSE response the official client consumes is also recorded raw (a
// teeing `fetch` passed to HttpAgent) and checked with `agui-verify` in strict
// mode against the expected threadId/runId. Every raw request fails the test
// on a 5xx. Servers are stopped (SIGTERM, then SIGKILL) in `after` hooks.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { buildResumeArray } from "@ag-ui/client";
import { runOfficial } from "./lib/official.mjs";
import {
  assertAbandonedRunCompletes,
  assertReconnectFollowsALiveRun,
  assertReconnectRejoinsTheRun,
  assertStopEndsTheRun,
  assertKeepAlivesInQuietPeriods,
  assertOversizedBodiesRefusedCleanly,
  assertNoPanics,
  assertCleanOfficialRun,
  assertStrict,
  describeRun,
  ledger,
  officialRefundInterrupt,
  officialRun,
  rawRefundInterrupt,
  uid,
  userMessage,
} from "./lib/flows.mjs";
import {
  Recorder,
  assertBinaries,
  liveServers,
  makeAgent,
  makeDataDir,
  postChunked,
  postJson,
  request,
  sseEvents,
  sseFrames,
  startDevServer,
  stopAllServers,
  waitFor,
} from "./lib/devserver.mjs";

const TEST_TIMEOUT = 180_000;

assertBinaries();
after(stopAllServers); // safety net; each suite stops its own servers too

// ---------------------------------------------------------------------------
// Helpers


/** Starts servers for a suite and stops them in its `after` hook. */
function suiteServers() {
  const servers = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });
  return {
    servers,
    async start(opts) {
      const s = await startDevServer(opts);
      servers.push(s);
      return s;
    },
  };
}

function assertApiError(res, status, code, what = "") {
  assert.equal(res.status, status, `${what}: expected ${status} ${code}, got ${res.status} ${res.text}`);
  assert.match(res.headers["content-type"] ?? "", /^application\/json/, `${what}: error body must be JSON`);
  assert.ok(res.json, `${what}: body is not JSON: ${res.text}`);
  assert.equal(res.json.code, code, `${what}: ${res.text}`);
  assert.equal(typeof res.json.message, "string", `${what}: message must be a string`);
  assert.ok(res.json.message.length > 0, `${what}: empty message`);
  assert.doesNotMatch(res.text, /^(id|data):/, `${what}: a stream started before the error`);
}

const toolResults = (events) => events.filter((e) => e.type === "TOOL_CALL_RESULT");

// ---------------------------------------------------------------------------
// 0. A long conversation as the official client holds it

describe("long conversations: the official client's resent history is recognised", { timeout: TEST_TIMEOUT }, () => {
  const pool = suiteServers();
  let server;
  before(async () => {
    server = await pool.start({ label: "digest", env: { HANDOFF_LOG: "json" } });
  });

  test("every turn, approvals included, costs the same store calls however long the thread (no page is read)", async () => {
    const recorder = new Recorder();
    const threadId = uid("thread-digest");
    const agent = makeAgent(`${server.url}/agent`, { recorder, threadId, messages: [userMessage("hello")] });
    const runIds = [];
    const turn = async (extra = {}) => {
      const runId = uid("run");
      runIds.push(runId);
      const run = await officialRun(agent, recorder, { runId, ...extra });
      await assertCleanOfficialRun(run, { threadId, runId });
      return run;
    };
    await turn();
    for (let i = 2; i <= 6; i++) {
      agent.addMessage(userMessage(`turn ${i}: tell me more`));
      await turn();
    }
    // An approval in the middle: its resume resends the history too.
    agent.addMessage(userMessage("Refund order A1024"));
    const asked = await turn();
    assert.equal(asked.outcome?.outcome, "interrupt", describeRun(asked));
    const resume = buildResumeArray(agent.pendingInterrupts, { [agent.pendingInterrupts[0].id]: { status: "resolved", payload: { approved: true } } });
    await turn({ resume });
    agent.addMessage(userMessage("thanks"));
    await turn();
    assert.ok(recorder.records.at(-1).request.messages.length >= 16, "the client resends the whole history");

    const lines = () => server.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    const ended = await waitFor(() => {
      const mine = lines().filter((l) => l.message === "run ended" && l.thread_id === threadId);
      return mine.length === runIds.length && mine;
    }, { what: "a run ended line per turn" });
    const calls = Object.fromEntries(ended.map((l) => [l.run_id, l.store_calls]));
    const chats = [...runIds.slice(0, 6), runIds.at(-1)].map((id) => calls[id]);
    // Every later chat turn costs the same: one that had to read its pages would make one
    // more call (the scan). The first turn starts the thread, so it claims without reading
    // it first: one call fewer.
    const [first, ...later] = chats;
    assert.equal(new Set(later).size, 1, `store calls per chat turn: ${JSON.stringify(chats)}`);
    assert.equal(first, later[0] - 1, `a new thread's first turn reads nothing first: ${JSON.stringify(chats)}`);
  });
});

// ---------------------------------------------------------------------------
// 1. Refund interrupt -> resume with buildResumeArray, official client

describe("refund flow: official client, interrupt then resume", { timeout: TEST_TIMEOUT }, () => {
  const pool = suiteServers();
  let server;
  before(async () => {
    server = await pool.start({ label: "refund" });
  });

  async function resumeWith(ctx, response) {
    const runId = uid("run-resume");
    const resume = buildResumeArray(ctx.agent.pendingInterrupts, { [ctx.interrupt.id]: response });
    const run = await officialRun(ctx.agent, ctx.recorder, { runId, resume });
    assert.deepEqual(run.records[0]?.request?.resume, resume, "the client must send the resume array");
    const report = await assertCleanOfficialRun(run, { threadId: ctx.threadId, runId });
    assert.equal(run.outcome?.outcome, "success", describeRun(run));
    assert.equal(report.runs[0].outcome, "success");
    assert.deepEqual(ctx.agent.pendingInterrupts, [], "agent.pendingInterrupts must be cleared by the resume");
    assert.ok(
      !run.events.some((e) => e.type === "TOOL_CALL_START"),
      "a resume answers the original call: no new TOOL_CALL_START",
    );
    return run;
  }

  test("approve: the refund executes once and answers the original refund_order call", async () => {
    const orderId = "A2001";
    const ctx = await officialRefundInterrupt(server, orderId);
    assert.equal(ctx.interrupt.reason, "tool_call");
    assert.ok(ctx.refundCallId, "the first run streams a refund_order call");
    assert.equal(ctx.interrupt.toolCallId, ctx.refundCallId, "the interrupt is bound to the refund_order call");
    assert.equal((await ledger(server, orderId)).refunds, 0, "nothing executes before approval");

    const run = await resumeWith(ctx, { status: "resolved", payload: { approved: true } });
    const results = toolResults(run.events);
    assert.equal(results.length, 1, describeRun(run));
    assert.equal(results[0].toolCallId, ctx.refundCallId, "TOOL_CALL_RESULT must answer the ORIGINAL toolCallId");
    const receipt = JSON.parse(results[0].content);
    assert.equal(receipt.status, "refunded");
    assert.equal(receipt.orderId, orderId);
    const account = await ledger(server, orderId);
    assert.equal(account.refunds, 1);
    assert.equal(account.refundedCents, receipt.amountCents);
    assert.equal(ctx.agent.state.step, "refunded");
  });

  test("deny: approved=false succeeds and executes nothing", async () => {
    const orderId = "A2002";
    const ctx = await officialRefundInterrupt(server, orderId);
    const run = await resumeWith(ctx, { status: "resolved", payload: { approved: false } });
    assert.deepEqual(toolResults(run.events), []);
    assert.equal((await ledger(server, orderId)).refunds, 0);
    assert.equal(ctx.agent.state.step, "declined");
  });

  test("edit: editedArgs replace the proposed arguments (5000 cents refunded)", async () => {
    const orderId = "A2003";
    const ctx = await officialRefundInterrupt(server, orderId);
    const proposed = ctx.agent.state.order;
    assert.notEqual(proposed.amountCents, 5000, "pick an order whose amount differs from the edit");
    const run = await resumeWith(ctx, {
      status: "resolved",
      payload: { approved: true, editedArgs: { orderId, amountCents: 5000, currency: "USD" } },
    });
    const results = toolResults(run.events);
    assert.equal(results.length, 1);
    assert.equal(results[0].toolCallId, ctx.refundCallId);
    assert.equal(JSON.parse(results[0].content).amountCents, 5000);
    const account = await ledger(server, orderId);
    assert.equal(account.refunds, 1);
    assert.equal(account.refundedCents, 5000);
  });

  test("cancel: status cancelled succeeds and executes nothing", async () => {
    const orderId = "A2004";
    const ctx = await officialRefundInterrupt(server, orderId);
    const run = await resumeWith(ctx, { status: "cancelled" });
    assert.deepEqual(toolResults(run.events), []);
    assert.equal((await ledger(server, orderId)).refunds, 0);
    assert.equal(ctx.agent.state.step, "cancelled");
  });

  test("the server stayed healthy", async () => {
    const h = await request(`${server.url}/healthz`);
    assert.equal(h.status, 200);
    assertNoPanics(server);
  });
});

// ---------------------------------------------------------------------------
// 2. Return flow: input_required, schema-checked payload

describe("return flow: input_required interrupt", { timeout: TEST_TIMEOUT }, () => {
  const pool = suiteServers();
  let server;
  before(async () => {
    server = await pool.start({ label: "return" });
  });

  test("resolve with {reason: damaged}", async () => {
    const orderId = "B77";
    const ctx = await officialRefundInterrupt(server, orderId, { verb: "Return" });
    assert.equal(ctx.interrupt.reason, "input_required");
    assert.deepEqual(ctx.interrupt.responseSchema.required, ["reason"]);
    const runId = uid("run-resume");
    const resume = buildResumeArray(ctx.agent.pendingInterrupts, {
      [ctx.interrupt.id]: { status: "resolved", payload: { reason: "damaged" } },
    });
    const run = await officialRun(ctx.agent, ctx.recorder, { runId, resume });
    await assertCleanOfficialRun(run, { threadId: ctx.threadId, runId });
    assert.equal(run.outcome?.outcome, "success");
    assert.deepEqual(ctx.agent.pendingInterrupts, []);
    const account = await ledger(server, orderId);
    assert.equal(account.returns, 1);
    assert.deepEqual(account.returnReasons, ["damaged"]);
    assert.equal(ctx.agent.state.step, "returned");
  });

  test("a payload violating responseSchema is a 422 RESUME_PAYLOAD_INVALID; a correct resume still works", async () => {
    const orderId = "B78";
    const ctx = await officialRefundInterrupt(server, orderId, { verb: "Return" });

    const badRunId = uid("run-bad");
    const bad = await officialRun(ctx.agent, ctx.recorder, {
      runId: badRunId,
      resume: buildResumeArray(ctx.agent.pendingInterrupts, {
        [ctx.interrupt.id]: { status: "resolved", payload: { reason: "bogus" } },
      }),
    });
    assert.equal(bad.accepted, false, `runAgent must reject\n  ${describeRun(bad)}`);
    assert.match(bad.error ?? "", /HTTP 422/, describeRun(bad));
    assert.equal(bad.records.length, 1);
    assert.equal(bad.records[0].status, 422);
    const body = JSON.parse(bad.records[0].body.toString("utf8"));
    assert.equal(body.code, "RESUME_PAYLOAD_INVALID", JSON.stringify(body));
    assert.equal(typeof body.message, "string");
    assert.deepEqual(bad.events, [], "no event before the error");
    assert.equal(ctx.agent.pendingInterrupts.length, 1, "the interrupt stays pending on the client");
    const view = await request(`${server.url}/threads/${ctx.threadId}`);
    assert.deepEqual(view.json.pendingInterrupts.map((i) => i.id), [ctx.interrupt.id], "and on the server");
    assert.equal((await ledger(server, orderId)).returns, 0);

    const runId = uid("run-good");
    const good = await officialRun(ctx.agent, ctx.recorder, {
      runId,
      resume: buildResumeArray(ctx.agent.pendingInterrupts, {
        [ctx.interrupt.id]: { status: "resolved", payload: { reason: "damaged", note: "cracked screen" } },
      }),
    });
    await assertCleanOfficialRun(good, { threadId: ctx.threadId, runId });
    assert.equal(good.outcome?.outcome, "success");
    assert.deepEqual(ctx.agent.pendingInterrupts, []);
    const account = await ledger(server, orderId);
    assert.equal(account.returns, 1);
    assert.deepEqual(account.returnReasons, ["damaged"]);
  });

  test("the server stayed healthy", async () => {
    assert.equal((await request(`${server.url}/healthz`)).status, 200);
    assertNoPanics(server);
  });
});

// ---------------------------------------------------------------------------
// 3. Race: 24 concurrent identical resumes over 3 processes sharing one store

describe("race: concurrent resumes across 3 processes on one data dir", { timeout: TEST_TIMEOUT }, () => {
  const pool = suiteServers();
  let servers;
  before(async () => {
    const dataDir = makeDataDir();
    servers = await Promise.all([0, 1, 2].map((i) => pool.start({ dataDir, label: `race-${i}` })));
  });

  test("exactly one refund; every answer is a valid 200 stream with the same result or 409 THREAD_BUSY", async (t) => {
    const orderId = "X3001";
    const { threadId, interrupt } = await rawRefundInterrupt(servers[0], orderId);
    const resume = [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }];
    const N = 24;
    const attempts = Array.from({ length: N }, (_, i) => ({ i, server: servers[i % 3], runId: uid(`race-${i}`) }));
    const responses = await Promise.all(
      attempts.map(async (a) => ({
        ...a,
        res: await postJson(`${a.server.url}/agent`, { threadId, runId: a.runId, messages: [], resume }),
      })),
    );

    const ok = [];
    const busy = [];
    for (const { i, server, runId, res } of responses) {
      const what = `attempt ${i} on ${server.label}`;
      if (res.status === 200) {
        await assertStrict(res.bytes, { threadId, runId }, what);
        const events = sseEvents(res.bytes);
        assert.equal(events.at(-1).type, "RUN_FINISHED", what);
        assert.equal(events.at(-1).outcome?.type, "success", `${what}: ${JSON.stringify(events.at(-1))}`);
        const results = toolResults(events);
        assert.equal(results.length, 1, `${what}: expected one TOOL_CALL_RESULT\n${res.text}`);
        ok.push({ i, result: results[0] });
      } else if (res.status === 409) {
        assertApiError(res, 409, "THREAD_BUSY", what);
        assert.match(res.headers["retry-after"] ?? "", /^\d+$/, `${what}: 409 THREAD_BUSY needs Retry-After`);
        busy.push(i);
      } else {
        assert.fail(`${what}: unexpected HTTP ${res.status} ${res.text}`);
      }
    }
    assert.ok(ok.length >= 1, "at least one resume must succeed");
    const first = ok[0].result;
    assert.equal(first.toolCallId, interrupt.toolCallId);
    for (const { i, result } of ok) {
      assert.equal(result.messageId, first.messageId, `attempt ${i}: TOOL_CALL_RESULT messageId differs`);
      assert.equal(result.content, first.content, `attempt ${i}: TOOL_CALL_RESULT content differs`);
      assert.equal(result.toolCallId, first.toolCallId);
    }
    for (const s of servers) {
      const account = await ledger(s, orderId);
      assert.equal(account.refunds, 1, `${s.label} sees ${account.refunds} refunds: ${JSON.stringify(account)}`);
    }
    t.diagnostic(`race: ${ok.length} x 200, ${busy.length} x 409 THREAD_BUSY`);

    // A later, sequential identical resume is a replay of the recorded result.
    for (const s of servers) {
      const runId = uid("after-race");
      const res = await postJson(`${s.url}/agent`, { threadId, runId, messages: [], resume });
      assert.equal(res.status, 200, `${s.label}: ${res.text}`);
      await assertStrict(res.bytes, { threadId, runId }, `sequential resume on ${s.label}`);
      const results = toolResults(sseEvents(res.bytes));
      assert.equal(results.length, 1);
      assert.equal(results[0].messageId, first.messageId);
      assert.equal(results[0].content, first.content);
    }
    assert.equal((await ledger(servers[2], orderId)).refunds, 1);
  });

  test("the servers stayed healthy", async () => {
    for (const s of servers) {
      assert.equal((await request(`${s.url}/healthz`)).status, 200);
      assertNoPanics(s);
    }
  });
});

// ---------------------------------------------------------------------------
// 4. Restart: interrupt on A, SIGKILL A, resume through B on the same data dir

describe("restart: resume on a new process after the first one was killed", { timeout: TEST_TIMEOUT }, () => {
  const pool = suiteServers();
  let dataDir;
  let a;
  before(async () => {
    dataDir = makeDataDir();
    a = await pool.start({ dataDir, label: "A" });
  });

  test("interrupts survive SIGKILL; the reused agent and a rehydrated fresh agent both resume through B", async () => {
    const reused = await officialRefundInterrupt(a, "A4001");
    const rehydrated = await officialRefundInterrupt(a, "A4002");

    const exit = await a.kill();
    assert.equal(exit.signal, "SIGKILL");
    const b = await pool.start({ dataDir, label: "B" });

    // The agent object from the first run, pointed at B.
    {
      const runId = uid("run-resume");
      reused.agent.url = `${b.url}/agent`;
      const resume = buildResumeArray(reused.agent.pendingInterrupts, {
        [reused.interrupt.id]: { status: "resolved", payload: { approved: true } },
      });
      const run = await officialRun(reused.agent, reused.recorder, { runId, resume });
      await assertCleanOfficialRun(run, { threadId: reused.threadId, runId });
      assert.equal(run.outcome?.outcome, "success");
      assert.deepEqual(reused.agent.pendingInterrupts, []);
      const results = toolResults(run.events);
      assert.equal(results.length, 1);
      assert.equal(results[0].toolCallId, reused.refundCallId);
      assert.equal((await ledger(b, "A4001")).refunds, 1);
    }

    // A fresh HttpAgent rebuilt from GET /threads/{id} on B.
    {
      const view = await request(`${b.url}/threads/${rehydrated.threadId}`);
      assert.equal(view.status, 200, view.text);
      assert.deepEqual(view.json.pendingInterrupts, rehydrated.agent.pendingInterrupts);
      const recorder = new Recorder();
      const agent = makeAgent(`${b.url}/agent`, {
        recorder,
        threadId: rehydrated.threadId,
        state: view.json.state,
        messages: view.json.messages,
      });
      agent.pendingInterrupts = view.json.pendingInterrupts;
      const runId = uid("run-resume");
      const resume = buildResumeArray(agent.pendingInterrupts, {
        [rehydrated.interrupt.id]: { status: "resolved", payload: { approved: true } },
      });
      const run = await officialRun(agent, recorder, { runId, resume });
      await assertCleanOfficialRun(run, { threadId: rehydrated.threadId, runId });
      assert.equal(run.outcome?.outcome, "success");
      assert.deepEqual(agent.pendingInterrupts, []);
      assert.equal(toolResults(run.events)[0]?.toolCallId, rehydrated.refundCallId);
      assert.equal((await ledger(b, "A4002")).refunds, 1);
      assert.equal(agent.state.step, "refunded");
    }
    assertNoPanics(b);
  });
});

// ---------------------------------------------------------------------------
// 5. Bad input on POST /agent: answered before any stream

describe("bad input: 4xx with {code, message} before any stream", { timeout: TEST_TIMEOUT }, () => {
  const pool = suiteServers();
  let server;
  let small;
  let shortTtl;
  before(async () => {
    [server, small, shortTtl] = await Promise.all([
      pool.start({ label: "bad-input" }),
      pool.start({ label: "body-limit", env: { HANDOFF_BODY_LIMIT: "1024" } }),
      pool.start({ label: "short-ttl", env: { DEMO_INTERRUPT_TTL_SECS: "1" } }),
    ]);
  });

  const validInput = (text = "hello") => ({ threadId: uid("thread"), runId: uid("run"), messages: [userMessage(text)] });

  test("malformed JSON -> 400 INVALID_INPUT", async () => {
    const res = await request(`${server.url}/agent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"threadId": "t", "runId": ',
    });
    assertApiError(res, 400, "INVALID_INPUT", "malformed JSON");
  });

  test("missing threadId / runId / messages -> 400 INVALID_INPUT", async () => {
    for (const field of ["threadId", "runId", "messages"]) {
      const body = validInput();
      delete body[field];
      const res = await postJson(`${server.url}/agent`, body);
      assertApiError(res, 400, "INVALID_INPUT", `missing ${field}`);
      assert.match(res.json.message, new RegExp(field), `the message names ${field}`);
    }
  });

  test("wrong content-type -> 415 UNSUPPORTED_MEDIA_TYPE", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      const res = await request(`${server.url}/agent`, {
        method: "POST",
        headers: { "content-type": type },
        body: JSON.stringify(validInput()),
      });
      assertApiError(res, 415, "UNSUPPORTED_MEDIA_TYPE", type);
    }
  });

  test("body over HANDOFF_BODY_LIMIT=1024 -> 413 BODY_TOO_LARGE (declared and chunked); under the limit works", async () => {
    const padded = (size) => {
      const body = validInput("x");
      const base = JSON.stringify(body).length;
      body.messages[0].content = "x".repeat(size - base + 1);
      const text = JSON.stringify(body);
      assert.equal(text.length, size);
      return { body, text };
    };
    const big = padded(2048);
    const declared = await request(`${small.url}/agent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: big.text,
    });
    assertApiError(declared, 413, "BODY_TOO_LARGE", "with content-length");

    // Chunked, no Content-Length: 1536 bytes sent, request left open; the
    // answer must not wait for the end of the body.
    const bytes = Buffer.from(padded(4096).text);
    const chunks = [0, 512, 1024].map((o) => bytes.subarray(o, o + 512));
    const chunked = await postChunked(`${small.url}/agent`, chunks, {
      headers: { "content-type": "application/json" },
      end: false,
    });
    assertApiError(chunked, 413, "BODY_TOO_LARGE", "chunked, no content-length");

    const fits = padded(1000);
    const res = await request(`${small.url}/agent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: fits.text,
    });
    assert.equal(res.status, 200, `a 1000-byte body must be accepted: ${res.text}`);
    await assertStrict(res.bytes, { threadId: fits.body.threadId, runId: fits.body.runId });
  });

  test("30 oversized (2 MiB) posts each get 413 BODY_TOO_LARGE, no EPIPE or reset; the run after each succeeds", async () => {
    await assertOversizedBodiesRefusedCleanly(small, { rounds: 30 });
    assertNoPanics(small);
  });

  test("409s: RESUME_INCOMPLETE, INTERRUPT_NOT_PENDING, RUN_ID_CONFLICT; nothing is lost", async () => {
    const orderId = "A5001";
    const first = await rawRefundInterrupt(server, orderId);
    const { threadId, interrupt } = first;

    // A new input while an interrupt is pending.
    const incomplete = await postJson(`${server.url}/agent`, {
      threadId,
      runId: uid("run"),
      messages: [userMessage("Refund order A5001 again")],
    });
    assertApiError(incomplete, 409, "RESUME_INCOMPLETE", "new input with a pending interrupt");
    assert.match(incomplete.json.message, new RegExp(interrupt.id), "names the pending interrupt");

    // An unknown interrupt id, alone and next to the real one.
    const unknown = uid("int-unknown");
    for (const resume of [
      [{ interruptId: unknown, status: "resolved", payload: { approved: true } }],
      [
        { interruptId: interrupt.id, status: "resolved", payload: { approved: true } },
        { interruptId: unknown, status: "resolved", payload: { approved: true } },
      ],
    ]) {
      const res = await postJson(`${server.url}/agent`, { threadId, runId: uid("run"), messages: [], resume });
      assertApiError(res, 409, "INTERRUPT_NOT_PENDING", `resume ${JSON.stringify(resume.map((r) => r.interruptId))}`);
    }
    // On a thread that does not exist.
    const nothread = await postJson(`${server.url}/agent`, {
      threadId: uid("thread"),
      runId: uid("run"),
      messages: [],
      resume: [{ interruptId: unknown, status: "resolved", payload: { approved: true } }],
    });
    // Answered like a thread the caller may not see (404), so existence never leaks.
    assertApiError(nothread, 404, "THREAD_NOT_FOUND", "unknown thread");

    // The same runId with a different body.
    const conflict = await postJson(`${server.url}/agent`, {
      threadId,
      runId: first.runId,
      messages: [userMessage("Refund order A5002")],
    });
    assertApiError(conflict, 409, "RUN_ID_CONFLICT", "reused runId");

    // Nothing was executed or lost: the interrupt is still pending and answerable.
    assert.equal((await ledger(server, orderId)).refunds, 0);
    const view = await request(`${server.url}/threads/${threadId}`);
    assert.deepEqual(view.json.pendingInterrupts.map((i) => i.id), [interrupt.id]);
    const runId = uid("run");
    const ok = await postJson(`${server.url}/agent`, {
      threadId,
      runId,
      messages: [],
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }],
    });
    assert.equal(ok.status, 200, ok.text);
    await assertStrict(ok.bytes, { threadId, runId });
    assert.equal((await ledger(server, orderId)).refunds, 1);
    const [applied] = toolResults(sseEvents(ok.bytes));
    assert.equal(applied?.toolCallId, interrupt.toolCallId);

    // A retried POST (same runId, same body) replays the recorded result.
    const retry = await postJson(`${server.url}/agent`, {
      threadId,
      runId,
      messages: [],
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }],
    });
    assert.equal(retry.status, 200, retry.text);
    await assertStrict(retry.bytes, { threadId, runId }, "retried POST");
    const [replayed] = toolResults(sseEvents(retry.bytes));
    assert.equal(replayed?.messageId, applied.messageId);
    assert.equal(replayed?.content, applied.content);
    assert.equal((await ledger(server, orderId)).refunds, 1, "a retried POST never refunds again");

    // Once applied, the interrupt is no longer pending for a different answer.
    const late = await postJson(`${server.url}/agent`, {
      threadId,
      runId: uid("run"),
      messages: [],
      resume: [{ interruptId: interrupt.id, status: "cancelled" }],
    });
    assertApiError(late, 409, "INTERRUPT_NOT_PENDING", "a different answer after the interrupt was applied");
    assert.equal((await ledger(server, orderId)).refunds, 1, "a later answer never refunds again");
  });

  test("expired interrupt: resolved -> 422 INTERRUPT_EXPIRED, cancelled accepted (official client)", async () => {
    const orderId = "A5003";
    const ctx = await officialRefundInterrupt(shortTtl, orderId);
    const expiresAt = Date.parse(ctx.interrupt.expiresAt);
    assert.ok(Number.isFinite(expiresAt), `expiresAt: ${ctx.interrupt.expiresAt}`);
    assert.ok(expiresAt - Date.now() < 5_000, "TTL of 1 s");
    await waitFor(() => Date.now() > expiresAt + 300, { timeoutMs: 10_000, what: "the interrupt to expire" });

    const expired = await postJson(`${shortTtl.url}/agent`, {
      threadId: ctx.threadId,
      runId: uid("run"),
      messages: [],
      resume: [{ interruptId: ctx.interrupt.id, status: "resolved", payload: { approved: true } }],
    });
    assertApiError(expired, 422, "INTERRUPT_EXPIRED", "resolved after expiresAt");
    assert.equal((await ledger(shortTtl, orderId)).refunds, 0);

    const runId = uid("run-cancel");
    const resume = buildResumeArray(ctx.agent.pendingInterrupts, { [ctx.interrupt.id]: { status: "cancelled" } });
    const run = await officialRun(ctx.agent, ctx.recorder, { runId, resume });
    await assertCleanOfficialRun(run, { threadId: ctx.threadId, runId });
    assert.equal(run.outcome?.outcome, "success");
    assert.deepEqual(ctx.agent.pendingInterrupts, []);
    assert.equal((await ledger(shortTtl, orderId)).refunds, 0);
  });

  test("an edit the approval policy forbids is refused before the stream; the interrupt stays answerable", async () => {
    const orderId = "A5004";
    const ctx = await officialRefundInterrupt(server, orderId);
    // editedArgs replaces the arguments: dropping amountCents is a change the policy
    // does not allow (only a lower amount of the same order is).
    const bad = await postJson(`${server.url}/agent`, {
      threadId: ctx.threadId,
      runId: uid("run-bad-args"),
      messages: [],
      resume: [{ interruptId: ctx.interrupt.id, status: "resolved", payload: { approved: true, editedArgs: { orderId } } }],
    });
    assert.equal(bad.status, 422, bad.text);
    assert.equal(bad.json?.code, "RESUME_PAYLOAD_INVALID", bad.text);
    assert.match(bad.json?.message ?? "", /editedArgs\.amountCents/, bad.text);
    assert.equal(ctx.agent.pendingInterrupts.length, 1, "the client's interrupt is still pending");
    const view = await request(`${server.url}/threads/${ctx.threadId}`);
    assert.deepEqual(view.json.pendingInterrupts.map((i) => i.id), [ctx.interrupt.id], "and the server's");
    assert.equal((await ledger(server, orderId)).refunds, 0);

    const runId = uid("run-good");
    const good = await officialRun(ctx.agent, ctx.recorder, {
      runId,
      resume: buildResumeArray(ctx.agent.pendingInterrupts, {
        [ctx.interrupt.id]: { status: "resolved", payload: { approved: true } },
      }),
    });
    await assertCleanOfficialRun(good, { threadId: ctx.threadId, runId });
    assert.equal(good.outcome?.outcome, "success");
    assert.equal((await ledger(server, orderId)).refunds, 1);
  });

  // AG-UI 1.0's coverage rule is "every open interrupt, each exactly once": two
  // contradictory answers are a 4xx before the stream, nothing executed, still pending.
  test(
    "two answers for one interrupt are rejected before the stream",
    async () => {
      const orderId = "A5005";
      const { threadId, interrupt } = await rawRefundInterrupt(server, orderId);
      const res = await postJson(`${server.url}/agent`, {
        threadId,
        runId: uid("run"),
        messages: [],
        resume: [
          { interruptId: interrupt.id, status: "resolved", payload: { approved: true } },
          { interruptId: interrupt.id, status: "cancelled" },
        ],
      });
      assert.ok(
        [400, 409, 422].includes(res.status),
        `contradictory duplicate answers: expected a 4xx, got ${res.status} ${res.text.slice(0, 300)}`,
      );
      assert.equal(typeof res.json?.code, "string");
      assert.equal((await ledger(server, orderId)).refunds, 0);
      const view = await request(`${server.url}/threads/${threadId}`);
      assert.deepEqual(view.json.pendingInterrupts.map((i) => i.id), [interrupt.id]);
    },
  );

  test("the servers stayed healthy and never answered 5xx", async () => {
    for (const s of [server, small, shortTtl]) {
      assert.equal((await request(`${s.url}/healthz`)).status, 200);
      const body = validInput();
      const res = await postJson(`${s.url}/agent`, body);
      assert.equal(res.status, 200);
      await assertStrict(res.bytes, body);
      assertNoPanics(s);
      assert.doesNotMatch(s.stderr, /request failed/, `${s.label} logged a server error\n${s.logs()}`);
    }
  });
});

// ---------------------------------------------------------------------------
// 6. Rehydration, replay, A2UI, Superagent

describe("rehydration, replay, A2UI and Superagent routes", { timeout: TEST_TIMEOUT }, () => {
  const pool = suiteServers();
  let server;
  before(async () => {
    server = await pool.start({ label: "rehydrate" });
  });

  test("GET /threads/{id} and GET /threads/{id}/runs/{runId}/events after an interrupt and a resume", async () => {
    const ctx = await officialRefundInterrupt(server, "A6001");
    const view = await request(`${server.url}/threads/${ctx.threadId}`);
    assert.equal(view.status, 200, view.text);
    assert.equal(view.json.threadId, ctx.threadId);
    assert.deepEqual(view.json.pendingInterrupts, ctx.agent.pendingInterrupts);
    assert.deepEqual(view.json.state, ctx.agent.state);
    assert.equal(view.json.state.step, "await_decision");
    assert.equal(view.json.state.order.orderId, "A6001");
    assert.deepEqual(view.json.messages, ctx.agent.messages);
    const refundCall = view.json.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.function.name === "refund_order");
    assert.equal(refundCall?.id, ctx.interrupt.toolCallId);
    assert.equal(view.json.lastRun?.runId, ctx.runId);

    // Replay of the interrupted run.
    const replay = await request(`${server.url}/threads/${ctx.threadId}/runs/${ctx.runId}/events`);
    assert.equal(replay.status, 200, replay.text);
    assert.match(replay.headers["content-type"] ?? "", /^text\/event-stream/);
    const report = await assertStrict(replay.bytes, { threadId: ctx.threadId, runId: ctx.runId }, "replay");
    assert.deepEqual(report.runs, [{ runId: ctx.runId, outcome: "interrupt", interruptIds: [ctx.interrupt.id] }]);
    const official = await runOfficial(replay.bytes, { threadId: ctx.threadId, runId: ctx.runId });
    assert.equal(official.accepted, true, describeRun(official));
    assert.deepEqual(official.warnings, [], describeRun(official));
    assert.equal(official.outcome?.outcome, "interrupt");
    assert.deepEqual(official.agent.pendingInterrupts, ctx.agent.pendingInterrupts);
    assert.deepEqual(official.agent.state, ctx.agent.state);

    // Resume, then replay the resume run.
    const runId = uid("run-resume");
    const run = await officialRun(ctx.agent, ctx.recorder, {
      runId,
      resume: buildResumeArray(ctx.agent.pendingInterrupts, {
        [ctx.interrupt.id]: { status: "resolved", payload: { approved: true } },
      }),
    });
    await assertCleanOfficialRun(run, { threadId: ctx.threadId, runId });
    const after = await request(`${server.url}/threads/${ctx.threadId}`);
    assert.deepEqual(after.json.pendingInterrupts ?? [], []);
    assert.equal(after.json.state.step, "refunded");
    assert.equal(after.json.lastRun?.runId, runId);

    const replay2 = await request(`${server.url}/threads/${ctx.threadId}/runs/${runId}/events`);
    assert.equal(replay2.status, 200, replay2.text);
    await assertStrict(replay2.bytes, { threadId: ctx.threadId, runId }, "replay of the resume run");
    const replayed = toolResults(sseEvents(replay2.bytes));
    assert.deepEqual(
      replayed.map(({ messageId, toolCallId, content }) => ({ messageId, toolCallId, content })),
      toolResults(run.events).map(({ messageId, toolCallId, content }) => ({ messageId, toolCallId, content })),
    );
    const official2 = await runOfficial(replay2.bytes, {
      threadId: ctx.threadId,
      runId,
      state: view.json.state,
      messages: view.json.messages,
    });
    assert.equal(official2.accepted, true, describeRun(official2));
    assert.deepEqual(official2.warnings, [], describeRun(official2));
    assert.equal(official2.outcome?.outcome, "success");

    const missingRun = await request(`${server.url}/threads/${ctx.threadId}/runs/${uid("run")}/events`);
    assertApiError(missingRun, 404, "RUN_NOT_FOUND", "unknown run");
    const missingThread = await request(`${server.url}/threads/${uid("thread")}`);
    assertApiError(missingThread, 404, "THREAD_NOT_FOUND", "unknown thread");
  });

  function assertA2uiRefundStream(bytes, what) {
    const frames = sseFrames(bytes);
    assert.ok(frames.length > 0, what);
    for (const f of frames) {
      assert.ok(f.event, `${what}: every A2UI frame is named: ${JSON.stringify(f)}`);
      const data = JSON.parse(f.data);
      assert.equal(data.type, f.event, `${what}: data.type matches the event name`);
      assert.equal(typeof data.timestamp, "number");
    }
    assert.equal(frames.at(-1).event, "done", `${what}: ends with event: done`);
    assert.equal(JSON.parse(frames.at(-1).data).data, null);
    assert.equal(frames.filter((f) => f.event === "done").length, 1, `${what}: one done`);
    return frames.map((f) => ({ event: f.event, data: JSON.parse(f.data).data }));
  }

  test("A2UI: ?a2ui=true and X-A2UI: true give named frames ending with event: done", async () => {
    for (const [how, suffix, headers] of [
      ["query", "?a2ui=true", {}],
      ["header", "", { "X-A2UI": "true" }],
    ]) {
      const orderId = how === "query" ? "A6002" : "A6003";
      const threadId = uid("thread-a2ui");
      const res = await postJson(
        `${server.url}/agent${suffix}`,
        { threadId, runId: uid("run"), messages: [userMessage(`Refund order ${orderId}`)] },
        { headers },
      );
      assert.equal(res.status, 200, `${how}: ${res.text}`);
      assert.match(res.headers["content-type"] ?? "", /^text\/event-stream/);
      const frames = assertA2uiRefundStream(res.bytes, how);
      const kinds = new Set(frames.map((f) => f.event));
      for (const k of ["progress", "tool_call", "tool_result", "text", "interrupt", "done"]) {
        assert.ok(kinds.has(k), `${how}: expected a ${k} frame, got ${[...kinds]}`);
      }
      const texts = frames.filter((f) => f.event === "text");
      assert.match(texts.at(-1).data.content, new RegExp(`Order ${orderId} .* once you approve\\.$`));
      assert.equal(texts.map((t) => t.data.delta).join(""), texts.at(-1).data.content);
      const calls = frames.filter((f) => f.event === "tool_call").map((f) => f.data.name);
      assert.deepEqual(calls, ["get_order", "refund_order"]);
      const interrupt = frames.find((f) => f.event === "interrupt").data;
      assert.equal(frames.at(-2).event, "interrupt", `${how}: the interrupt comes right before done`);

      // The interrupt is real: resume it (A2UI again) and the refund executes.
      const view = await request(`${server.url}/threads/${threadId}`);
      assert.deepEqual(view.json.pendingInterrupts.map((i) => i.id), [interrupt.id]);
      const resumed = await postJson(
        `${server.url}/agent${suffix}`,
        {
          threadId,
          runId: uid("run"),
          messages: [],
          resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }],
        },
        { headers },
      );
      assert.equal(resumed.status, 200, resumed.text);
      const rframes = assertA2uiRefundStream(resumed.bytes, `${how} resume`);
      const result = rframes.find((f) => f.event === "tool_result");
      assert.ok(result, `${how} resume: a tool_result frame`);
      assert.equal(result.data.id, view.json.pendingInterrupts[0].toolCallId);
      assert.equal(JSON.parse(result.data.result).status, "refunded");
      assert.equal((await ledger(server, orderId)).refunds, 1);
    }
  });

  // A resume stream has no TOOL_CALL_START for the call; the name comes from the thread's history.
  test(
    "the A2UI tool_result of a resumed call names the tool",
    async () => {
      const threadId = uid("thread-a2ui-name");
      const first = await rawRefundInterrupt(server, "A6005", { threadId });
      const res = await postJson(
        `${server.url}/agent?a2ui=true`,
        {
          threadId,
          runId: uid("run"),
          messages: [],
          resume: [{ interruptId: first.interrupt.id, status: "resolved", payload: { approved: true } }],
        },
      );
      assert.equal(res.status, 200, res.text);
      const result = assertA2uiRefundStream(res.bytes, "resume").find((f) => f.event === "tool_result");
      assert.equal(result?.data.name, "refund_order");
    },
  );

  test("Superagent: /api/v1/chat/stream (legacy) ends with [DONE]; /api/v1/chat/resume executes the refund", async () => {
    const orderId = "A6004";
    const session = uid("session");
    const res = await postJson(`${server.url}/api/v1/chat/stream`, {
      agent_id: "refund-demo",
      session_id: session,
      message: `Refund order ${orderId}`,
    });
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers["content-type"] ?? "", /^text\/event-stream/);
    const frames = sseFrames(res.bytes);
    assert.ok(frames.every((f) => f.event === undefined), "legacy frames are unnamed");
    assert.equal(frames.at(-1).data, "[DONE]");
    assert.equal(frames.filter((f) => f.data === "[DONE]").length, 1);
    // Legacy framing: raw text tokens, `{"type","data"}` JSON for the other frames.
    const body = frames.slice(0, -1);
    const isJsonFrame = (f) => f.data.startsWith("{");
    const json = body.filter(isJsonFrame).map((f) => JSON.parse(f.data));
    const text = body
      .filter((f) => !isJsonFrame(f))
      .map((f) => f.data)
      .join("");
    assert.match(text, new RegExp(`Order ${orderId} .* once you approve\\.`), `raw text tokens: ${text}`);
    assert.ok(json.some((j) => j.type === "interrupt"), "an interrupt frame");
    const view = await request(`${server.url}/threads/${session}`);
    assert.equal(view.json.pendingInterrupts.length, 1);
    assert.equal((await ledger(server, orderId)).refunds, 0);

    // A new chat message while the approval is pending.
    const busy = await postJson(`${server.url}/api/v1/chat/stream`, {
      agent_id: "refund-demo",
      session_id: session,
      message: "hello?",
    });
    assertApiError(busy, 409, "RESUME_INCOMPLETE", "chat/stream with a pending interrupt");
    // A payload against the schema.
    const invalid = await postJson(`${server.url}/api/v1/chat/resume`, {
      agent_id: "refund-demo",
      session_id: session,
      input: { approved: "yes" },
    });
    assertApiError(invalid, 422, "RESUME_PAYLOAD_INVALID", "chat/resume with a bad payload");

    const resumed = await postJson(`${server.url}/api/v1/chat/resume`, {
      agent_id: "refund-demo",
      session_id: session,
      input: { approved: true },
    });
    assert.equal(resumed.status, 200, resumed.text);
    const rframes = sseFrames(resumed.bytes);
    assert.equal(rframes.at(-1).data, "[DONE]");
    const result = rframes
      .map((f) => {
        try {
          return JSON.parse(f.data);
        } catch {
          return undefined;
        }
      })
      .find((v) => v?.type === "tool_result");
    assert.ok(result, `a tool_result frame: ${resumed.text}`);
    assert.equal(result.data.id, view.json.pendingInterrupts[0].toolCallId);
    assert.equal(JSON.parse(result.data.result).status, "refunded");
    assert.equal((await ledger(server, orderId)).refunds, 1);
    const after = await request(`${server.url}/threads/${session}`);
    assert.deepEqual(after.json.pendingInterrupts ?? [], []);

    // Nothing left to resume: a clear 409, and no second refund.
    const again = await postJson(`${server.url}/api/v1/chat/resume`, {
      agent_id: "refund-demo",
      session_id: session,
      input: { approved: true },
    });
    assertApiError(again, 409, "INTERRUPT_NOT_PENDING", "resume with nothing pending");
    assert.equal((await ledger(server, orderId)).refunds, 1);
  });

  test("the server stayed healthy", async () => {
    assert.equal((await request(`${server.url}/healthz`)).status, 200);
    assertNoPanics(server);
  });
});

// ---------------------------------------------------------------------------
// 7. Keep-alive

describe("keep-alive comments during quiet periods", { timeout: TEST_TIMEOUT }, () => {
  const { start } = suiteServers();
  test("pauses longer than HANDOFF_KEEP_ALIVE_MS carry `: keep-alive` comments", async () => {
    const server = await start({ label: "keep-alive", env: { DEMO_TOKEN_DELAY_MS: "300", HANDOFF_KEEP_ALIVE_MS: "100" } });
    await assertKeepAlivesInQuietPeriods(server, "A8101");
  });
});

// ---------------------------------------------------------------------------

test("no dev-server left running", { timeout: 30_000 }, async () => {
  await waitFor(() => liveServers().length === 0, {
    timeoutMs: 20_000,
    what: `servers to stop: ${liveServers().map((s) => s.label)}`,
  });
});

describe("a client that disconnects mid-run", { timeout: TEST_TIMEOUT }, () => {
  const { start } = suiteServers();
  let server;
  before(async () => {
    server = await start({ label: "slow", env: { DEMO_TOKEN_DELAY_MS: "150" } });
  });

  test("does not stop the run: it finishes, commits its interrupt and releases the thread", async () => {
    await assertAbandonedRunCompletes(server, "A8001");
  });
});

describe("reconnecting with Last-Event-ID", { timeout: TEST_TIMEOUT }, () => {
  const pool = suiteServers();

  test("a finished run rejoins at any frame, valid from its first frame for the official client", async () => {
    const server = await pool.start({ label: "rejoin" });
    await assertReconnectRejoinsTheRun(server, "A8201");
  });

  test("a client that dropped mid-run rejoins the live run through another process on the same store", async () => {
    const dataDir = makeDataDir();
    const env = { DEMO_TOKEN_DELAY_MS: "150" };
    const a = await pool.start({ dataDir, label: "follow-runner", env });
    const b = await pool.start({ dataDir, label: "follow-reader", env });
    await assertReconnectFollowsALiveRun(a, "A8202", { reader: b });
  });
});

describe("POST /threads/{id}/runs/{runId}/stop", { timeout: TEST_TIMEOUT }, () => {
  const pool = suiteServers();

  test("on the instance running the run: it ends cancelled and releases the thread", async () => {
    const server = await pool.start({ label: "stop-local", env: { DEMO_TOKEN_DELAY_MS: "150" } });
    await assertStopEndsTheRun(server, "A8101");
  });

  test("sent to another process on the same store: the running one finds it at its next poll", async () => {
    const dataDir = makeDataDir();
    const env = { DEMO_TOKEN_DELAY_MS: "150" };
    const a = await pool.start({ dataDir, label: "stop-runner", env });
    const b = await pool.start({ dataDir, label: "stop-sender", env });
    await assertStopEndsTheRun(a, "A8102", { stopper: b });
  });
});

// ---------------------------------------------------------------------------
// kill -9 inside the refund: the money moved, the outcome is not recorded. The same
// answer on another process re-drives the refund under the same idempotency key (a
// payment API that honours keys executes once); a different answer is refused.

describe("kill -9 in the middle of an effect", { timeout: TEST_TIMEOUT }, () => {
  const pool = suiteServers();

  test("the same answer on another process re-drives the same key; another answer is refused; the thread is not stuck", async () => {
    const dataDir = makeDataDir();
    const lease = { HANDOFF_LEASE_MS: "2000" };
    const a = await pool.start({ dataDir, label: "dies", env: { ...lease, HANDOFF_TEST_FAULT: "hang-after-refund" } });
    const orderId = "K5001";
    const { threadId, interrupt } = await rawRefundInterrupt(a, orderId);
    const resume = [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }];

    // The resume reaches the refund and hangs there, after the ledger moved the money.
    const inFlight = postJson(`${a.url}/agent`, { threadId, runId: uid("dying"), messages: [], resume }).catch((e) => e);
    await waitFor(async () => (await ledger(a, orderId)).refunds === 1, { what: "the refund to execute on A" });
    assert.equal((await a.kill()).signal, "SIGKILL");
    await inFlight;

    const b = await pool.start({ dataDir, label: "survivor", env: lease });
    const [key] = (await ledger(b, orderId)).idempotencyKeys;
    assert.ok(key, "A's refund key is in the ledger");

    // Once A's lease lapses, a different answer is refused: the refund may have happened.
    const deny = [{ interruptId: interrupt.id, status: "resolved", payload: { approved: false } }];
    const refused = await waitFor(
      async () => {
        const res = await postJson(`${b.url}/agent`, { threadId, runId: uid("deny"), messages: [], resume: deny });
        return res.json?.code === "THREAD_BUSY" ? undefined : res;
      },
      { what: "A's lease to lapse" },
    );
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.json?.code, "ANSWER_IN_DOUBT", refused.text);

    // The same answer re-drives the refund under A's key, and the run completes.
    const runId = uid("retry");
    const res = await postJson(`${b.url}/agent`, { threadId, runId, messages: [], resume });
    assert.equal(res.status, 200, res.text);
    await assertStrict(res.bytes, { threadId, runId });
    const events = sseEvents(res.bytes);
    assert.equal(events.at(-1).outcome?.type, "success", JSON.stringify(events.at(-1)));
    const account = await ledger(b, orderId);
    assert.deepEqual(account.idempotencyKeys, [key, key], "the re-drive used a new key");

    const view = await request(`${b.url}/threads/${threadId}`);
    assert.equal(view.json.status, "idle", view.text);
    assert.deepEqual(view.json.pendingInterrupts, []);
    // From now on the answer replays; the ledger sees nothing more.
    const again = await postJson(`${b.url}/agent`, { threadId, runId: uid("again"), messages: [], resume });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual((await ledger(b, orderId)).idempotencyKeys, [key, key]);
    assertNoPanics(b);
  });
});
