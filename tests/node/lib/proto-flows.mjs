// The AG-UI protobuf encoding seen from a client: length-prefixed frames, decoded
// with the official @ag-ui/proto and compared with the SSE replay of the same run.
import assert from "node:assert/strict";
import { AGUI_MEDIA_TYPE, decode, encode } from "@ag-ui/proto";
import { request, sseEvents } from "./devserver.mjs";
import { assertStrict, ledger, uid } from "./flows.mjs";

export const PROTO = "application/vnd.ag-ui.event+proto";

/** Splits a length-prefixed body into message bodies; fails on a torn tail. */
export function protoFrames(bytes) {
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
export async function postProto(server, body) {
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
export async function assertMatchesReplay(server, { threadId, runId }, proto) {
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

/**
 * The refund run and its approved resume over protobuf on `server`, frame by frame:
 * each frame the official encoding of the event the SSE replay carries.
 */
export async function assertProtoRefundFlow(server, orderId) {
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
}
