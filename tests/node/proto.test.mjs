// The AG-UI protobuf encoding (Accept: application/vnd.ag-ui.event+proto)
// against the official @ag-ui/proto 1.0.0 and @ag-ui/client 1.0.0:
//
// * raw: the refund run and its resume, POSTed with the proto Accept header.
//   Every frame is a 4-byte big-endian length plus one message (what the
//   official client's reader splits on); each message decodes with the
//   official `decode` to exactly the event the SSE replay of the same run
//   carries, and is byte-identical to the official `encode` of that event.
//   The proto replay (GET .../events with the proto Accept) is the POST's
//   bytes again. Quiet periods add no keep-alive bytes to a proto stream.
// * official client: HttpAgent always asks for SSE but picks its parser from
//   the response content type, so a subclass that asks for proto runs the
//   refund flow (interrupt, approve) through the client's own proto reader,
//   verification and state application.
//
// Needs `cargo build -p dev-server -p handoff-tests` (see lib/devserver.mjs).
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { AGUI_MEDIA_TYPE, decode, encode } from "@ag-ui/proto";
import { HttpAgent, buildResumeArray } from "@ag-ui/client";
import { Recorder, request, sseEvents, startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { assertStrict, describeRun, ledger, officialRun, uid } from "./lib/flows.mjs";

const TEST_TIMEOUT = 120_000;
const PROTO = "application/vnd.ag-ui.event+proto";

after(stopAllServers);

/** Splits a length-prefixed body into message bodies; fails on a torn tail. */
function protoFrames(bytes) {
  const buf = Buffer.from(bytes);
  const frames = [];
  let at = 0;
  while (at < buf.length) {
    assert.ok(buf.length - at >= 4, `a torn length prefix at byte ${at} of ${buf.length}`);
    const len = buf.readUInt32BE(at);
    assert.ok(at + 4 + len <= buf.length, `frame at byte ${at} claims ${len} bytes, ${buf.length - at - 4} left`);
    frames.push(buf.subarray(at + 4, at + 4 + len));
    at += 4 + len;
  }
  return frames;
}

/** POST /agent asking for proto; returns {res, frames, events}. */
async function postProto(server, body) {
  const res = await request(`${server.url}/agent`, {
    method: "POST",
    body,
    headers: { accept: PROTO },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers["content-type"], AGUI_MEDIA_TYPE, "the client compares the content type verbatim");
  const frames = protoFrames(res.bytes);
  return { res, frames, events: frames.map((f) => decode(f)) };
}

/**
 * The same run replayed as SSE (strictly verified) and as proto: the decoded
 * events equal the SSE events, and each frame is the official encoding of the
 * SSE event, byte for byte.
 */
async function assertMatchesReplay(server, { threadId, runId }, proto) {
  const path = `${server.url}/threads/${threadId}/runs/${runId}/events`;
  const sse = await request(path);
  assert.equal(sse.status, 200, sse.text);
  assert.match(sse.headers["content-type"] ?? "", /^text\/event-stream/);
  await assertStrict(sse.bytes, { threadId, runId }, "the SSE replay");
  const expected = sseEvents(sse.bytes);
  assert.ok(expected.length > 3, `a real run, not ${expected.length} events`);
  assert.deepEqual(proto.events, expected);
  proto.frames.forEach((frame, i) => {
    assert.ok(
      Buffer.from(encode(expected[i])).equals(frame),
      `frame ${i} (${expected[i].type}) differs from the official encoding`,
    );
  });

  const replay = await request(path, { headers: { accept: PROTO } });
  assert.equal(replay.status, 200, replay.text);
  assert.equal(replay.headers["content-type"], AGUI_MEDIA_TYPE);
  assert.ok(replay.bytes.equals(proto.res.bytes), "the proto replay is the POST's bytes");
  return expected;
}

describe("protobuf encoding: raw frames against the official codec", { timeout: TEST_TIMEOUT }, () => {
  let server;
  before(async () => {
    server = await startDevServer({ label: "proto-raw" });
  });
  after(() => server?.stop());

  test("the refund run and its approved resume, frame by frame", async () => {
    const orderId = "A1024";
    const threadId = uid("thread");
    const runId = uid("run");
    const first = await postProto(server, {
      threadId,
      runId,
      messages: [{ id: "m1", role: "user", content: `Refund order ${orderId}` }],
    });
    const events = await assertMatchesReplay(server, { threadId, runId }, first);
    const finished = events.at(-1);
    assert.equal(finished.type, "RUN_FINISHED");
    assert.equal(finished.outcome?.type, "interrupt", JSON.stringify(finished));
    assert.equal(typeof events[0].timestamp, "number", "timestamps are integer ms");
    const interrupt = finished.outcome.interrupts[0];
    const refundsBefore = (await ledger(server, orderId)).refunds;

    const resumeRun = uid("run-resume");
    const resumed = await postProto(server, {
      threadId,
      runId: resumeRun,
      messages: [],
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }],
    });
    const after = await assertMatchesReplay(server, { threadId, runId: resumeRun }, resumed);
    assert.equal(after.at(-1).type, "RUN_FINISHED");
    assert.equal(after.at(-1).outcome?.type, "success", JSON.stringify(after.at(-1)));
    const result = after.find((e) => e.type === "TOOL_CALL_RESULT");
    assert.equal(result?.toolCallId, interrupt.toolCallId, "the resume answers the original call");
    assert.equal((await ledger(server, orderId)).refunds, refundsBefore + 1);
  });

  test("without the proto Accept header the stream stays SSE", async () => {
    const res = await request(`${server.url}/agent`, {
      method: "POST",
      body: { threadId: uid("thread"), runId: uid("run"), messages: [{ id: "m1", role: "user", content: "hello" }] },
      headers: { accept: "text/event-stream" },
    });
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers["content-type"] ?? "", /^text\/event-stream/);
    assert.ok(sseEvents(res.bytes).length > 0);
  });
});

describe("protobuf encoding: quiet periods", { timeout: TEST_TIMEOUT }, () => {
  let server;
  before(async () => {
    server = await startDevServer({
      label: "proto-quiet",
      env: { DEMO_TOKEN_DELAY_MS: "300", HANDOFF_KEEP_ALIVE_MS: "100" },
    });
  });
  after(() => server?.stop());

  test("pauses that put keep-alive comments in SSE put nothing in a proto stream", async () => {
    const sse = await request(`${server.url}/agent`, {
      method: "POST",
      body: { threadId: uid("thread"), runId: uid("run"), messages: [{ id: "m1", role: "user", content: "Refund order A1026" }] },
    });
    const comments = sse.text.split("\n\n").filter((frame) => frame === ": keep-alive");
    assert.ok(comments.length >= 2, `the SSE run must have quiet periods, got ${comments.length} keep-alives`);

    const threadId = uid("thread");
    const runId = uid("run");
    const proto = await postProto(server, {
      threadId,
      runId,
      messages: [{ id: "m1", role: "user", content: "Refund order A1027" }],
    });
    // Every byte belongs to a frame, and the frames are the run's events.
    await assertMatchesReplay(server, { threadId, runId }, proto);
  });
});

/** The official HttpAgent, asking for proto instead of SSE. */
class ProtoHttpAgent extends HttpAgent {
  requestInit(input) {
    const init = super.requestInit(input);
    return { ...init, headers: { ...init.headers, Accept: AGUI_MEDIA_TYPE } };
  }
}

describe("protobuf encoding: the official client's own proto pipeline", { timeout: TEST_TIMEOUT }, () => {
  let server;
  before(async () => {
    server = await startDevServer({ label: "proto-official" });
  });
  after(() => server?.stop());

  function assertCleanProtoRun(run, { threadId, runId }) {
    assert.equal(run.accepted, true, `the official client did not accept the run\n  ${describeRun(run)}`);
    assert.deepEqual(run.warnings, [], `the official client warned\n  ${describeRun(run)}`);
    assert.deepEqual(run.runErrors, [], describeRun(run));
    assert.equal(run.records.length, 1, describeRun(run));
    const rec = run.records[0];
    assert.equal(rec.status, 200, rec.body.toString("utf8"));
    assert.equal(rec.headers["content-type"], AGUI_MEDIA_TYPE, "the client read protobuf, not SSE");
    assert.equal(rec.request.threadId, threadId);
    assert.equal(rec.request.runId, runId);
  }

  test("refund interrupt, then approve", async () => {
    const orderId = "A1025";
    const recorder = new Recorder();
    const threadId = uid("thread");
    const agent = new ProtoHttpAgent({
      url: `${server.url}/agent`,
      threadId,
      initialMessages: [{ id: "m1", role: "user", content: `Refund order ${orderId}` }],
      fetch: recorder.fetch,
    });
    const runId = uid("run");
    const run = await officialRun(agent, recorder, { runId });
    assertCleanProtoRun(run, { threadId, runId });
    assert.equal(run.outcome?.outcome, "interrupt", describeRun(run));
    assert.equal(agent.pendingInterrupts.length, 1);
    const interrupt = agent.pendingInterrupts[0];
    const decoded = protoFrames(run.records[0].body).map((f) => decode(f));
    assert.deepEqual(decoded.at(-1).outcome.interrupts, [interrupt]);

    const resumeRun = uid("run-resume");
    const resume = buildResumeArray(agent.pendingInterrupts, {
      [interrupt.id]: { status: "resolved", payload: { approved: true } },
    });
    const resumed = await officialRun(agent, recorder, { runId: resumeRun, resume });
    assertCleanProtoRun(resumed, { threadId, runId: resumeRun });
    assert.equal(resumed.outcome?.outcome, "success", describeRun(resumed));
    assert.deepEqual(agent.pendingInterrupts, []);
    const result = resumed.events.find((e) => e.type === "TOOL_CALL_RESULT");
    assert.equal(result?.toolCallId, interrupt.toolCallId);
    assert.equal(JSON.parse(result.content).status, "refunded");
    assert.equal((await ledger(server, orderId)).refunds, 1);
    assert.equal(agent.state.step, "refunded");
  });
});
