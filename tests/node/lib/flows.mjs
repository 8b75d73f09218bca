// Shared flows of the end-to-end tests: official-client runs recorded and
// verified, the refund flow's first run, the demo ledger. `server` is anything
// with a base `url` (a dev server, or the Lambda emulator's function URL).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { runOfficial, runOfficialAgainst } from "./official.mjs";
import http from "node:http";
import { Recorder, makeAgent, postJson, postWhole, request, sseEvents, sseFrames, verifyStream, waitFor } from "./devserver.mjs";

export const uid = (prefix) => `${prefix}-${randomUUID()}`;
export const userMessage = (content) => ({ id: uid("msg-user"), role: "user", content });

export function assertNoPanics(server) {
  assert.doesNotMatch(server.stderr, /panicked|RUST_BACKTRACE/, `${server.label} panicked\n${server.logs()}`);
}

export async function ledger(server, orderId, headers = {}) {
  const r = await request(`${server.url}/demo/orders/${orderId}`, { headers });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

/** Strict agui-verify on a stream, with a readable failure message. */
export async function assertStrict(bytes, { threadId, runId }, what = "stream") {
  const v = await verifyStream(bytes, { threadId, runId });
  assert.ok(
    v.ok,
    `agui-verify (strict) rejected ${what} (thread ${threadId}, run ${runId}): ${JSON.stringify(v.report)}\n--- bytes ---\n${Buffer.from(bytes).toString("utf8").slice(0, 4000)}`,
  );
  return v.report;
}

export function describeRun(r) {
  return [
    `accepted=${r.accepted} failed=${r.failed} error=${r.error ?? "(none)"}`,
    `warnings=${JSON.stringify(r.warnings)}`,
    `runErrors=${JSON.stringify(r.runErrors)}`,
    `outcome=${JSON.stringify(r.outcome?.outcome)}`,
    `events=${r.events.map((e) => e.type).join(",")}`,
    ...(r.records ?? []).map((rec) => `http ${rec.status} ${rec.url}`),
  ].join("\n  ");
}

/**
 * One official-client run through `agent` (its recorder must be `recorder`).
 * Returns runOfficialAgainst()'s result plus `records` (the HTTP exchanges of
 * this run, bodies awaited into `rec.body`).
 */
export async function officialRun(agent, recorder, input) {
  const before = recorder.records.length;
  const r = await runOfficialAgainst(agent.url, input, { agent });
  r.records = recorder.records.slice(before);
  for (const rec of r.records) rec.body = await rec.bytes;
  return r;
}

/**
 * Asserts a run the official client accepted with zero warnings, made exactly
 * one 200 request whose raw stream passes agui-verify strict with the expected
 * ids, and that no RUN_ERROR arrived. Returns the verifier report.
 */
export async function assertCleanOfficialRun(r, { threadId, runId }) {
  assert.equal(r.accepted, true, `official client did not accept the run\n  ${describeRun(r)}`);
  assert.deepEqual(r.warnings, [], `official client warned\n  ${describeRun(r)}`);
  assert.deepEqual(r.runErrors, [], `RUN_ERROR in the stream\n  ${describeRun(r)}`);
  assert.equal(r.records.length, 1, `expected one HTTP request\n  ${describeRun(r)}`);
  const rec = r.records[0];
  assert.equal(rec.status, 200, `HTTP ${rec.status}: ${rec.body.toString("utf8")}`);
  assert.match(rec.headers["content-type"] ?? "", /^text\/event-stream/);
  assert.equal(rec.request.threadId, threadId);
  assert.equal(rec.request.runId, runId);
  return assertStrict(rec.body, { threadId, runId }, "the stream the official client consumed");
}

/**
 * First run of the refund flow with the official client: returns
 * {agent, recorder, threadId, runId, interrupt, refundCallId, run}.
 */
export async function officialRefundInterrupt(server, orderId, { verb = "Refund" } = {}) {
  const recorder = new Recorder();
  const threadId = uid("thread");
  const runId = uid("run");
  const agent = makeAgent(`${server.url}/agent`, {
    recorder,
    threadId,
    messages: [userMessage(`${verb} order ${orderId}`)],
  });
  const run = await officialRun(agent, recorder, { runId });
  const report = await assertCleanOfficialRun(run, { threadId, runId });
  assert.equal(run.outcome?.outcome, "interrupt", describeRun(run));
  assert.equal(report.runs.length, 1);
  assert.equal(report.runs[0].outcome, "interrupt");
  assert.equal(agent.pendingInterrupts.length, 1, "agent.pendingInterrupts must be set after an interrupt");
  const interrupt = agent.pendingInterrupts[0];
  assert.deepEqual(report.runs[0].interruptIds, [interrupt.id]);
  assert.deepEqual(run.outcome.interrupts.map((i) => i.id), [interrupt.id]);
  const refundStart = run.events.find((e) => e.type === "TOOL_CALL_START" && e.toolCallName === "refund_order");
  return { agent, recorder, threadId, runId, interrupt, refundCallId: refundStart?.toolCallId, run };
}

/** The refund flow's first run over raw fetch: {threadId, runId, interrupt, events, bytes}. */
export async function rawRefundInterrupt(server, orderId, { threadId = uid("thread"), verb = "Refund" } = {}) {
  const runId = uid("run");
  const res = await postJson(`${server.url}/agent`, {
    threadId,
    runId,
    messages: [userMessage(`${verb} order ${orderId}`)],
  });
  assert.equal(res.status, 200, res.text);
  await assertStrict(res.bytes, { threadId, runId });
  const events = sseEvents(res.bytes);
  const finished = events.at(-1);
  assert.equal(finished.type, "RUN_FINISHED");
  assert.equal(finished.outcome?.type, "interrupt", JSON.stringify(finished));
  assert.equal(finished.outcome.interrupts.length, 1);
  return { threadId, runId, interrupt: finished.outcome.interrupts[0], events, bytes: res.bytes };
}

/**
 * A refund run against a server whose demo streams words `tokenDelayMs` apart
 * (DEMO_TOKEN_DELAY_MS): asserts the stream is valid and that its chunks
 * arrived spread over time, as produced, rather than buffered and handed over
 * at the end.
 */
export async function assertStreamsIncrementally(server, orderId, tokenDelayMs) {
  const threadId = uid("thread");
  const runId = uid("run");
  const started = Date.now();
  const res = await fetch(`${server.url}/agent`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ threadId, runId, messages: [userMessage(`Refund order ${orderId}`)] }),
  });
  assert.equal(res.status, 200);
  const arrivals = [];
  const chunks = [];
  for await (const chunk of res.body) {
    arrivals.push({ at: Date.now() - started, text: Buffer.from(chunk).toString("utf8") });
    chunks.push(Buffer.from(chunk));
  }
  const bytes = Buffer.concat(chunks);
  await assertStrict(bytes, { threadId, runId });
  const words = sseEvents(bytes).filter((e) => e.type === "TEXT_MESSAGE_CONTENT").length;
  assert.ok(words >= 5, `expected a streamed sentence, got ${words} deltas`);
  const firstText = arrivals.find((a) => a.text.includes("TEXT_MESSAGE_CONTENT"));
  const finished = arrivals.find((a) => a.text.includes("RUN_FINISHED"));
  // Buffered delivery would hand over everything at once; streamed delivery spreads
  // the deltas over roughly (words - 1) * delay. Half of that is a safe floor.
  const spread = finished.at - firstText.at;
  assert.ok(
    spread >= ((words - 1) * tokenDelayMs) / 2,
    `first text at ${firstText.at} ms, RUN_FINISHED at ${finished.at} ms: spread ${spread} ms for ${words} deltas`,
  );
  assert.ok(arrivals.length > words / 2, `only ${arrivals.length} network chunks for ${words} deltas`);
}

/**
 * A client leaves a slow refund run after its first text delta: the run must
 * still finish, commit its interrupt and release the thread; the interrupt then
 * resumes (one refund) and the abandoned run replays.
 */
export async function assertAbandonedRunCompletes(server, orderId) {
  const threadId = uid("thread-disconnect");
  const runId = uid("run");
  const abort = new AbortController();
  const res = await fetch(`${server.url}/agent`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ threadId, runId, messages: [userMessage(`Refund order ${orderId}`)] }),
    signal: abort.signal,
  });
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  let seen = "";
  while (!seen.includes("TEXT_MESSAGE_CONTENT")) {
    const { value, done } = await reader.read();
    assert.ok(!done, "the stream ended before any text");
    seen += Buffer.from(value).toString("utf8");
  }
  assert.ok(!seen.includes("RUN_FINISHED"), "the run must still be going when the client leaves");
  abort.abort();
  await reader.cancel().catch(() => {});

  // A dropped run would keep the thread leased and "running" for the whole lease.
  const view = await waitFor(
    async () => {
      const r = await request(`${server.url}/threads/${threadId}`);
      return r.status === 200 && r.json.status === "interrupted" ? r.json : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: "the abandoned run to commit its interrupt" },
  );
  assert.equal(view.lastRun.runId, runId);
  const resumeRun = uid("run");
  const resumed = await postJson(`${server.url}/agent`, {
    threadId,
    runId: resumeRun,
    messages: [],
    resume: [{ interruptId: view.pendingInterrupts[0].id, status: "resolved", payload: { approved: true } }],
  });
  assert.equal(resumed.status, 200, resumed.text);
  await assertStrict(resumed.bytes, { threadId, runId: resumeRun });
  assert.equal((await ledger(server, orderId)).refunds, 1);
  const replay = await request(`${server.url}/threads/${threadId}/runs/${runId}/events`);
  assert.equal(replay.status, 200);
  await assertStrict(replay.bytes, { threadId, runId }, "the replay of the abandoned run");
}

/**
 * Reconnects to a finished refund run by `Last-Event-ID` at several cuts (mid-text,
 * mid-tool-arguments, after the snapshots, before the terminal event): each rejoined
 * stream is valid for the official client from its first frame, and the frames the
 * client had plus the rejoined ones it had not seen (by id) are the uninterrupted run.
 */
export async function assertReconnectRejoinsTheRun(server, orderId) {
  const threadId = uid("thread-rejoin");
  const runId = uid("run");
  const res = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage(`Refund order ${orderId}`)] });
  assert.equal(res.status, 200, res.text);
  const live = sseFrames(res.bytes);
  assert.deepEqual(live.map((f) => f.id), live.map((_, i) => String(i + 1)), "every frame carries its id, in order");
  const types = live.map((f) => JSON.parse(f.data).type);
  const idOf = (type) => types.indexOf(type) + 1;
  const cuts = [idOf("TEXT_MESSAGE_CONTENT"), idOf("TOOL_CALL_ARGS"), idOf("MESSAGES_SNAPSHOT"), live.length - 1];
  assert.ok(cuts.every((c) => c > 0), `the refund run lacks a cut point: ${types.join(" ")}`);
  const pairs = (frames) => frames.map((f) => [f.id, f.data]);
  for (const cut of cuts) {
    const r = await request(`${server.url}/threads/${threadId}/runs/${runId}/events`, { headers: { "last-event-id": String(cut) } });
    assert.equal(r.status, 200, r.text);
    await assertStrict(r.bytes, { threadId, runId }, `the stream rejoined after frame ${cut}`);
    const official = await runOfficial(r.bytes, { threadId, runId });
    assert.equal(official.accepted, true, `rejoined after ${cut}: ${describeRun(official)}`);
    assert.deepEqual(official.warnings, [], `rejoined after ${cut}: ${describeRun(official)}`);
    const unseen = sseFrames(r.bytes).filter((f) => Number(f.id) > cut);
    assert.deepEqual(pairs([...live.slice(0, cut), ...unseen]), pairs(live), `rejoined after frame ${cut}`);
  }
}

/**
 * A client drops a slow refund run on `runner` mid-text and reconnects to `reader`
 * (another instance on the same store) with `Last-Event-ID`: it is joined to the live
 * run (prelude, the journal, then new frames as they come) up to the run's end; what it
 * had plus what it got (by id) equals the run's recorded stream, and the rejoined stream
 * alone is valid for the official client.
 */
export async function assertReconnectFollowsALiveRun(runner, orderId, { reader = runner } = {}) {
  const threadId = uid("thread-follow");
  const runId = uid("run");
  const abort = new AbortController();
  const res = await fetch(`${runner.url}/agent`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ threadId, runId, messages: [userMessage(`Refund order ${orderId}`)] }),
    signal: abort.signal,
  });
  assert.equal(res.status, 200);
  const body = res.body.getReader();
  let text = "";
  // Two words in, the connection drops (cut at a frame boundary, as a client keeps only whole frames).
  while ((text.match(/TEXT_MESSAGE_CONTENT/g) ?? []).length < 2) {
    const { value, done } = await body.read();
    assert.ok(!done, "the stream ended before any text");
    text += Buffer.from(value).toString("utf8");
  }
  abort.abort();
  await body.cancel().catch(() => {});
  const had = sseFrames(Buffer.from(text.slice(0, text.lastIndexOf("\n\n") + 2)));
  assert.ok(!had.some((f) => f.data?.includes("RUN_FINISHED")), "the run ended before the client dropped");
  const lastId = Number(had.at(-1).id);

  const rejoined = await request(`${reader.url}/threads/${threadId}/runs/${runId}/events`, {
    headers: { "last-event-id": String(lastId) },
  });
  assert.equal(rejoined.status, 200, rejoined.text);
  const frames = sseFrames(rejoined.bytes).filter((f) => f.data !== undefined);
  assert.match(frames.at(-1).data, /"type":"RUN_FINISHED"/, "the rejoined stream did not reach the run's end");
  await assertStrict(rejoined.bytes, { threadId, runId }, "the stream rejoined mid-run");
  const official = await runOfficial(rejoined.bytes, { threadId, runId });
  assert.equal(official.accepted, true, describeRun(official));
  assert.deepEqual(official.warnings, [], describeRun(official));

  const whole = await request(`${reader.url}/threads/${threadId}/runs/${runId}/events`);
  const pairs = (list) => list.map((f) => [f.id, f.data]);
  const merged = [...had, ...frames.filter((f) => Number(f.id) > lastId)];
  assert.deepEqual(pairs(merged), pairs(sseFrames(whole.bytes)), "dropped and rejoined is not the run's stream");
}

/**
 * `POST /threads/{id}/runs/{runId}/stop` sent to `stopper` (another instance on the
 * same store, or the same one) while a slow refund run streams from `server`: the
 * stream ends `RUN_FINISHED{outcome: cancelled}` (valid for the official client), the
 * thread is released at once, and a second stop answers 200 with the final status.
 */
export async function assertStopEndsTheRun(server, orderId, { stopper = server } = {}) {
  const threadId = uid("thread-stop");
  const runId = uid("run");
  const res = await fetch(`${server.url}/agent`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ threadId, runId, messages: [userMessage(`Refund order ${orderId}`)] }),
  });
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  const chunks = [];
  let seen = "";
  while (!seen.includes("TEXT_MESSAGE_CONTENT")) {
    const { value, done } = await reader.read();
    assert.ok(!done, "the stream ended before any text");
    chunks.push(Buffer.from(value));
    seen += Buffer.from(value).toString("utf8");
  }
  assert.ok(!seen.includes("RUN_FINISHED"), "the run must still be going when it is stopped");

  const stop = await postJson(`${stopper.url}/threads/${threadId}/runs/${runId}/stop`, {});
  assert.equal(stop.status, 202, stop.text);
  assert.deepEqual(stop.json, { threadId, runId, status: "stopping" });
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    chunks.push(Buffer.from(value));
  }
  const bytes = Buffer.concat(chunks);
  await assertStrict(bytes, { threadId, runId }, "the stopped run's stream");
  const official = await runOfficial(bytes, { threadId, runId });
  assert.equal(official.accepted, true, describeRun(official));
  assert.deepEqual(official.warnings, [], describeRun(official));
  const finished = sseEvents(bytes).at(-1);
  assert.equal(finished.type, "RUN_FINISHED", JSON.stringify(finished));
  assert.deepEqual(finished.outcome, { type: "cancelled" });

  const view = await request(`${stopper.url}/threads/${threadId}`);
  assert.equal(view.status, 200, view.text);
  assert.equal(view.json.status, "idle", "the stopped run still holds the thread");
  assert.deepEqual(view.json.lastRun, { runId, status: "cancelled" });
  assert.equal((await ledger(server, orderId)).refunds, 0, "a stopped run refunded");
  const again = await postJson(`${stopper.url}/threads/${threadId}/runs/${runId}/stop`, {});
  assert.equal(again.status, 200, again.text);
  assert.equal(again.json.status, "cancelled");
  const unknown = await postJson(`${stopper.url}/threads/${threadId}/runs/${uid("run")}/stop`, {});
  assert.equal(unknown.status, 404, unknown.text);
  assert.equal(unknown.json.code, "RUN_NOT_FOUND");
}

/**
 * A refund run against a server whose demo pauses `tokenDelayMs` between words
 * and whose keep-alive interval (HANDOFF_KEEP_ALIVE_MS) is shorter: the quiet
 * gaps carry `: keep-alive` comments, and the stream stays valid for the strict
 * verifier and the official client.
 */
export async function assertKeepAlivesInQuietPeriods(server, orderId) {
  const threadId = uid("thread-keepalive");
  const runId = uid("run");
  const res = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage(`Refund order ${orderId}`)] });
  assert.equal(res.status, 200, res.text);
  const text = res.bytes.toString("utf8");
  const comments = text.split("\n\n").filter((frame) => frame === ": keep-alive");
  assert.ok(comments.length >= 2, `expected keep-alive comments in the pauses, got ${comments.length}`);
  assert.ok(!text.includes("\r"), "LF-only framing");
  await assertStrict(res.bytes, { threadId, runId }, "a stream with keep-alives");
  const official = await runOfficial(res.bytes, { threadId, runId });
  assert.equal(official.accepted, true, describeRun(official));
  assert.deepEqual(official.warnings, [], describeRun(official));
}

/**
 * `rounds` times: a body of `size` bytes (over the server's HANDOFF_BODY_LIMIT)
 * sent whole with node:http must be answered 413 BODY_TOO_LARGE, with no EPIPE
 * or reset, and a normal run right after it must succeed. Every request goes
 * through one keep-alive agent, as a browser's would, so a connection the
 * server gave up on shows. Every round runs; the failures are reported
 * together (how many of `rounds` went wrong, and how).
 */
export async function assertOversizedBodiesRefusedCleanly(server, { rounds = 30, size = 2 * 1024 * 1024 } = {}) {
  const body = JSON.stringify({ threadId: uid("thread"), runId: uid("run"), messages: [userMessage("x".repeat(size))] });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const failures = [];
  try {
    for (let round = 0; round < rounds; round += 1) {
      try {
        const res = await postWhole(`${server.url}/agent`, body, { headers: { "content-type": "application/json" }, agent });
        if (res.status !== 413 || res.json?.code !== "BODY_TOO_LARGE") {
          failures.push(`round ${round}: oversized post answered ${res.status} ${res.text.slice(0, 200)}`);
        }
      } catch (err) {
        failures.push(`round ${round}: oversized post failed: ${err.code ?? ""} ${err.message}`);
      }
      // The next request goes where a keep-alive client sends it: the same connection.
      const next = JSON.stringify({ threadId: uid("thread"), runId: uid("run"), messages: [userMessage("hello")] });
      try {
        const res = await postWhole(`${server.url}/agent`, next, { headers: { "content-type": "application/json" }, agent });
        const last = res.status === 200 ? sseEvents(Buffer.from(res.text)).at(-1) : undefined;
        if (last?.type !== "RUN_FINISHED") {
          failures.push(`round ${round}: the next run answered ${res.status} ${res.text.slice(0, 200)}`);
        }
      } catch (err) {
        failures.push(`round ${round}: the next run failed: ${err.code ?? ""} ${err.message}`);
      }
    }
  } finally {
    agent.destroy();
  }
  assert.deepEqual(failures, [], `${failures.length} failures in ${rounds} rounds:\n${failures.join("\n")}`);
}
