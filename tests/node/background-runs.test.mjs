// Background runs on a real dev-server process (issue 53, part 1): `POST /agent` with
// `Prefer: respond-async` answers 202 with the run's Location once it is claimed, the run
// goes on with nobody reading it, `GET /threads/{id}/runs/{runId}` says where it stands,
// and its stream can be joined while it runs.
//
//   cargo build -p dev-server -p handoff-tests
//   cd tests/node && node --test background-runs.test.mjs

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  assertCleanOfficialRun,
  assertNoPanics,
  assertStrict,
  describeRun,
  ledger,
  officialRun,
  uid,
  userMessage,
} from "./lib/flows.mjs";
import { Recorder, assertBinaries, makeAgent, postJson, request, sseEvents, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { runOfficial } from "./lib/official.mjs";
import { TEST_TIMEOUT, assertApiError, suiteServers } from "./lib/e2e.mjs";

assertBinaries();
after(stopAllServers);

const ASYNC = { prefer: "respond-async, wait=5" };

/** Starts a background run: asserts the 202 and its headers, returns the status URL. */
async function startInBackground(server, { threadId, runId, text }) {
  const res = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage(text)] }, { headers: ASYNC });
  assert.equal(res.status, 202, res.text);
  assert.deepEqual(res.json, { threadId, runId });
  assert.equal(res.headers.location, `/threads/${threadId}/runs/${runId}`);
  assert.equal(res.headers["preference-applied"], "respond-async");
  return `${server.url}${res.headers.location}`;
}

/** Polls a run's status URL until `done(view)`; returns every view seen, in order. */
async function pollStatus(url, done, what) {
  const seen = [];
  await waitFor(
    async () => {
      const r = await request(url);
      assert.equal(r.status, 200, r.text);
      seen.push(r.json);
      return done(r.json);
    },
    { timeoutMs: 30_000, intervalMs: 20, what },
  );
  return seen;
}

describe("background runs on the dev server", { timeout: TEST_TIMEOUT }, () => {
  const pool = suiteServers();
  let server;
  let slow;
  before(async () => {
    server = await pool.start({ label: "background" });
    // Words 80 ms apart: a refund run lasts long enough to be joined while it runs.
    slow = await pool.start({ label: "background-slow", env: { DEMO_TOKEN_DELAY_MS: "80" } });
  });
  after(() => {
    assertNoPanics(server);
    assertNoPanics(slow);
  });

  test("a 202, polled to interrupted without reading the run, resumed by the official client to succeeded", async () => {
    const orderId = "A5301";
    const threadId = uid("thread-bg");
    const runId = uid("run-bg");
    const statusUrl = await startInBackground(server, { threadId, runId, text: `Refund order ${orderId}` });

    const seen = await pollStatus(statusUrl, (v) => v.status !== "running", "the background run to end");
    const view = seen.at(-1);
    assert.equal(view.status, "interrupted", JSON.stringify(view));
    assert.equal(view.outcome, "interrupt");
    assert.equal(view.threadId, threadId);
    assert.equal(view.runId, runId);
    assert.ok(Number.isInteger(view.startedAt) && Number.isInteger(view.finishedAt), JSON.stringify(view));
    assert.ok(view.finishedAt >= view.startedAt);
    for (const key of ["error", "usage"]) assert.ok(!(key in view), `${key} omitted: ${JSON.stringify(view)}`);
    assert.equal(view.interrupts.length, 1);
    const interrupt = view.interrupts[0];
    assert.equal(interrupt.reason, "tool_call");
    assert.equal((await ledger(server, orderId)).refunds, 0, "nothing executes before approval");

    // The thread agrees: its pending interrupt is the one the status lists.
    const thread = await request(`${server.url}/threads/${threadId}`);
    assert.equal(thread.json.status, "interrupted");
    assert.deepEqual(thread.json.pendingInterrupts.map((i) => i.id), [interrupt.id]);

    // A client that was never connected rehydrates, then answers with the official client.
    const recorder = new Recorder();
    const agent = makeAgent(`${server.url}/agent`, { recorder, threadId, messages: thread.json.messages, state: thread.json.state });
    const resumeRun = uid("run-resume");
    const resume = [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }];
    const run = await officialRun(agent, recorder, { runId: resumeRun, resume });
    await assertCleanOfficialRun(run, { threadId, runId: resumeRun });
    assert.equal(run.outcome?.outcome, "success", describeRun(run));

    const resumed = await request(`${server.url}/threads/${threadId}/runs/${resumeRun}`);
    assert.equal(resumed.status, 200, resumed.text);
    assert.equal(resumed.json.status, "succeeded", resumed.text);
    assert.equal(resumed.json.outcome, "success");
    assert.ok(!("interrupts" in resumed.json));
    assert.equal((await ledger(server, orderId)).refunds, 1);
    // The background run ended interrupted, and says so still.
    assert.equal((await request(statusUrl)).json.status, "interrupted");
  });

  test("a background run's stream is joined while it runs: complete, valid, and what its status reports", async () => {
    const threadId = uid("thread-join");
    const runId = uid("run-join");
    const statusUrl = await startInBackground(slow, { threadId, runId, text: "Refund order A5302" });
    const first = await request(statusUrl);
    assert.equal(first.json.status, "running", first.text);
    assert.ok(!("finishedAt" in first.json), first.text);

    const joined = await request(`${slow.url}/threads/${threadId}/runs/${runId}/events`);
    assert.equal(joined.status, 200, joined.text);
    await assertStrict(joined.bytes, { threadId, runId }, "the joined background run");
    const official = await runOfficial(joined.bytes, { threadId, runId });
    assert.equal(official.accepted, true, describeRun(official));
    assert.deepEqual(official.warnings, [], describeRun(official));
    assert.equal(official.outcome?.outcome, "interrupt", describeRun(official));

    const events = sseEvents(joined.bytes);
    assert.equal(events[0].type, "RUN_STARTED");
    const finished = events.at(-1);
    assert.equal(finished.type, "RUN_FINISHED");
    const view = (await request(statusUrl)).json;
    assert.equal(view.status, "interrupted", JSON.stringify(view));
    assert.deepEqual(view.interrupts, finished.outcome.interrupts);
    assert.equal(view.finishedAt, finished.timestamp);
  });

  test("a stopped background run reads cancelled; bad input and unknown runs are 4xx", async () => {
    const threadId = uid("thread-stop");
    const runId = uid("run-stop");
    const statusUrl = await startInBackground(slow, { threadId, runId, text: "Refund order A5303" });
    const stop = await request(`${statusUrl}/stop`, { method: "POST" });
    assert.equal(stop.status, 202, stop.text);
    const seen = await pollStatus(statusUrl, (v) => v.status !== "running", "the stopped run to end");
    assert.equal(seen.at(-1).status, "cancelled", JSON.stringify(seen.at(-1)));
    assert.equal(seen.at(-1).outcome, "cancelled");

    const bad = await postJson(`${server.url}/agent`, { threadId: uid("thread") }, { headers: ASYNC });
    assertApiError(bad, 400, "INVALID_INPUT", "a background run without runId");
    assert.equal(bad.headers.location, undefined);
    const missing = await request(`${slow.url}/threads/${threadId}/runs/${uid("run")}`);
    assertApiError(missing, 404, "RUN_NOT_FOUND", "an unknown run of a known thread");
  });
});
