// Processes sharing one store: concurrent resumes, a resume after SIGKILL, a client that
// disconnects or reconnects, a stop sent to another process, kill -9 inside an effect.
//
// End-to-end tests against real dev-server processes, driven by the OFFICIAL
// @ag-ui/client (HttpAgent) and by raw fetch (shared helpers: lib/e2e.mjs).
//
//   cargo build -p dev-server -p handoff-tests
//   HANDOFF_BIN_DIR=<target/debug> node --test e2e-*.test.mjs
//
// Every SSE response the official client consumes is also recorded raw (a
// teeing `fetch` passed to HttpAgent) and checked with `agui-verify` in strict
// mode against the expected threadId/runId. Every raw request fails the test
// on a 5xx. Servers are stopped (SIGTERM, then SIGKILL) in `after` hooks.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { buildResumeArray } from "@ag-ui/client";
import {
  assertAbandonedRunCompletes,
  assertReconnectFollowsALiveRun,
  assertReconnectRejoinsTheRun,
  assertStopEndsTheRun,
  assertNoPanics,
  assertCleanOfficialRun,
  assertStrict,
  ledger,
  officialRefundInterrupt,
  officialRun,
  rawRefundInterrupt,
  uid,
} from "./lib/flows.mjs";
import {
  Recorder,
  assertBinaries,
  makeAgent,
  makeDataDir,
  postJson,
  request,
  sseEvents,
  stopAllServers,
  waitFor,
} from "./lib/devserver.mjs";
import {
  TEST_TIMEOUT,
  suiteServers,
  assertApiError,
  toolResults,
} from "./lib/e2e.mjs";

assertBinaries();
after(stopAllServers); // safety net; each suite stops its own servers too

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
