// Issue 53 on Cloudflare Workers (workerd via Miniflare): a background run (`Prefer:
// respond-async`) is answered 202 and driven under the request's `waitUntil`; a run that
// outlives its budget is handed over, not cancelled, and the sweep of the next request to
// the Worker finishes it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { assertBinaries, waitFor } from "./lib/devserver.mjs";
import { assertNoPanics, uid, userMessage } from "./lib/flows.mjs";
import { startWorker, stopAllWorkers } from "./lib/worker.mjs";

const TIMEOUT = 300_000;

assertBinaries();

describe("background runs on Workers (workerd)", { timeout: TIMEOUT }, () => {
  let worker;
  before(async () => {
    worker = await startWorker({
      label: "background",
      // Slow words make the refund's reply take about 2 s; a run gets 1.2 s of a request
      // before it is handed over; the request sweep runs at most once a second.
      vars: { DEMO_TOKEN_DELAY_MS: "120", HANDOFF_RUN_BUDGET_MS: "1200", HANDOFF_OUTBOX_POLL_MS: "1000" },
    });
  });
  after(async () => {
    if (worker) assertNoPanics(worker);
    await stopAllWorkers();
  });

  async function background(text) {
    const threadId = uid("thread-bg");
    const runId = uid("run");
    const res = await fetch(`${worker.url}/agent`, {
      method: "POST",
      headers: { "content-type": "application/json", prefer: "respond-async" },
      body: JSON.stringify({ threadId, runId, messages: [userMessage(text)] }),
    });
    assert.equal(res.status, 202, await res.clone().text());
    assert.equal(res.headers.get("preference-applied"), "respond-async");
    return { threadId, runId };
  }

  const status = async ({ threadId, runId }) => (await fetch(`${worker.url}/threads/${threadId}/runs/${runId}`)).json();

  test("202, then the run goes on under waitUntil, handed over at its budget, finished by the next request's sweep", async () => {
    const run = await background("Refund order A1024");
    assert.equal((await status(run)).status, "running");
    // Past its 1.2 s the run is handed over (not cancelled): still running, its lease ended.
    await new Promise((r) => setTimeout(r, 2_500));
    const handed = await status(run);
    assert.equal(handed.status, "running", JSON.stringify(handed));
    // Requests to the Worker sweep (at most once a second): one of them finishes it.
    const view = await waitFor(
      async () => {
        await fetch(`${worker.url}/healthz`);
        const now = await status(run);
        return now.status === "interrupted" ? now : undefined;
      },
      { what: "a request's sweep to finish the run", timeoutMs: 60_000, intervalMs: 1_100 },
    );
    assert.equal(view.interrupts.length, 1);
    assert.match(worker.logs(), /run handed over for a re-drive/);
  });
});
