// Schedules on workerd (issue 53, part 3): a schedule every 2 s on the built Worker runs
// each tick exactly once over 20 s. Ticks come from the ScheduleTicker Durable Object's
// alarm (armed by POST /schedules, then by each alarm) while the Cron Trigger's
// `scheduled` handler is fired twice at once every few seconds, racing it for the same
// ticks: none may run twice, none may be skipped.
//
//   make build-worker   (or WORKER_OPT=--no-opt)
//   cd tests/node && node --test worker-schedules.test.mjs

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { postJson, request, waitFor } from "./lib/devserver.mjs";
import { startWorker, stopAllWorkers } from "./lib/worker.mjs";
import { scheduledThreads, assertEachTickOnce } from "./lib/schedules.mjs";

after(stopAllWorkers);

const MESSAGES = [{ role: "user", content: "What can you do?" }];

describe("schedules on workerd: the ticker's alarm and the Cron Trigger", { timeout: 180_000 }, () => {
  let worker;
  before(async () => {
    worker = await startWorker({ label: "schedules" });
  });

  test("every 2 s for 20 s: each tick runs exactly once", async () => {
    const created = await postJson(`${worker.url}/schedules`, {
      everySeconds: 2,
      agentId: "refund-demo",
      messages: MESSAGES,
      thread: "new",
    });
    assert.equal(created.status, 201, created.text);
    const schedule = created.json;

    const end = Date.now() + 20_000;
    let fired = 0;
    while (Date.now() < end) {
      await sleep(2_700);
      // Two Cron Trigger events at once, racing each other and the alarm.
      await Promise.all([worker.scheduled(), worker.scheduled()]);
      fired += 2;
    }
    const removed = await request(`${worker.url}/schedules/${schedule.id}`, { method: "DELETE" });
    assert.equal(removed.status, 200, removed.text);
    const stoppedAt = Date.now();

    const threads = await waitFor(
      async () => {
        const found = await scheduledThreads(worker.url, schedule.id);
        return found.every((t) => t.status !== "running") && found;
      },
      { timeoutMs: 20_000, what: "the scheduled runs to end" },
    );
    const detail = `${fired} trigger events; threads ${threads.map((t) => t.id).join(" ")}\n${worker.logs().slice(-3_000)}`;
    const ticks = assertEachTickOnce(threads, schedule, stoppedAt, detail);
    assert.ok(ticks.length >= 9, `about ten ticks in 20 s, got ${ticks.length}: ${detail}`);
    for (const t of threads) assert.equal(t.status, "idle", `${t.id} ended well: ${JSON.stringify(t)}`);
    const last = threads.at(-1);
    const run = await request(`${worker.url}/threads/${last.id}/runs/${last.runId}`);
    assert.equal(run.status, 200, run.text);
    assert.equal(run.json.status, "succeeded", run.text);

    // Deleted: neither the alarm nor the trigger starts another.
    await worker.scheduled();
    await sleep(2_500);
    assert.equal((await scheduledThreads(worker.url, schedule.id)).length, threads.length, "no run after the delete");
  });
});
