// The other routes: rehydration (GET /threads), replay, A2UI, Superagent, and keep-alive
// comments; then every server of this file stopped.
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
import { runOfficial } from "./lib/official.mjs";
import {
  assertKeepAlivesInQuietPeriods,
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
  assertBinaries,
  liveServers,
  postJson,
  request,
  sseEvents,
  sseFrames,
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
