// Bad input on POST /agent: every refusal a 4xx {code, message} before any stream, and
// nothing lost (409s, expired interrupts, edits the policy forbids, bodies over the limit).
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
  assertOversizedBodiesRefusedCleanly,
  assertNoPanics,
  assertCleanOfficialRun,
  assertStrict,
  ledger,
  officialRefundInterrupt,
  officialRun,
  rawRefundInterrupt,
  uid,
  userMessage,
} from "./lib/flows.mjs";
import {
  assertBinaries,
  postChunked,
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
