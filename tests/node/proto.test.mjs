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
import { AGUI_MEDIA_TYPE, decode } from "@ag-ui/proto";
import { PROTO, assertMatchesReplay, assertProtoRefundFlow, postProto, protoFrames } from "./lib/proto-flows.mjs";
import { HttpAgent, buildResumeArray } from "@ag-ui/client";
import { Recorder, request, sseEvents, startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { assertStrict, describeRun, ledger, officialRun, uid } from "./lib/flows.mjs";

const TEST_TIMEOUT = 120_000;

after(stopAllServers);

describe("protobuf encoding: raw frames against the official codec", { timeout: TEST_TIMEOUT }, () => {
  let server;
  before(async () => {
    server = await startDevServer({ label: "proto-raw" });
  });
  after(() => server?.stop());

  test("the refund run and its approved resume, frame by frame", async () => {
    await assertProtoRefundFlow(server, "A1024");
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
