// The demo's flows through the official client: a long conversation whose resent history
// is recognised, the refund interrupt (approve, deny, edit, cancel), the return flow.
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
  assertNoPanics,
  assertCleanOfficialRun,
  describeRun,
  ledger,
  officialRefundInterrupt,
  officialRun,
  uid,
  userMessage,
} from "./lib/flows.mjs";
import {
  Recorder,
  assertBinaries,
  makeAgent,
  request,
  stopAllServers,
  waitFor,
} from "./lib/devserver.mjs";
import { TEST_TIMEOUT, suiteServers, toolResults } from "./lib/e2e.mjs";

assertBinaries();
after(stopAllServers); // safety net; each suite stops its own servers too

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
