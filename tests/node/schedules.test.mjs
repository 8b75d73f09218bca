// Schedules (issue 53, part 3) on real dev-server processes: a schedule every 2 s on TWO
// processes sharing one SQLite file runs each tick exactly once over 20 s (no tick twice,
// none skipped), each as a background run on a new thread of the owner's; and the routes'
// bad-input answers.
//
//   cargo build -p dev-server -p handoff-tests
//   cd tests/node && node --test schedules.test.mjs

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { assertBinaries, makeDataDir, postJson, request, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { TEST_TIMEOUT, assertApiError, suiteServers } from "./lib/e2e.mjs";
import { scheduledThreads, assertEachTickOnce } from "./lib/schedules.mjs";

assertBinaries();
after(stopAllServers);

const AGENT = "refund-demo";
const MESSAGES = [{ role: "user", content: "What can you do?" }];

describe("schedules on two dev-server processes sharing one SQLite file", { timeout: TEST_TIMEOUT }, () => {
  const pool = suiteServers();
  let a;
  let b;
  before(async () => {
    const dataDir = makeDataDir("handoff-schedules-");
    // Both look every few milliseconds, so they find each tick due at nearly the same time
    // and race for it (a claim that were not a compare-and-set would run ticks twice here).
    a = await pool.start({ label: "sched-a", dataDir, env: { HANDOFF_SCHEDULE_POLL_MS: "5" } });
    b = await pool.start({ label: "sched-b", dataDir, env: { HANDOFF_SCHEDULE_POLL_MS: "7" } });
  });

  test("every 2 s for 20 s: each tick runs exactly once across both processes", async () => {
    const created = await postJson(`${a.url}/schedules`, { everySeconds: 2, agentId: AGENT, messages: MESSAGES, thread: "new" });
    assert.equal(created.status, 201, created.text);
    const schedule = created.json;
    assert.equal(schedule.everySeconds, 2);
    assert.equal(schedule.nextDueAt, schedule.createdAt + 2_000);
    // Both processes see it: the store is the only thing they share.
    const listed = await request(`${b.url}/schedules`);
    assert.deepEqual(listed.json.schedules.map((s) => s.id), [schedule.id]);

    await sleep(20_000);
    const removed = await request(`${b.url}/schedules/${schedule.id}`, { method: "DELETE" });
    assert.equal(removed.status, 200, removed.text);
    const stoppedAt = Date.now();

    // Every started run ends (background runs: nobody reads them).
    const threads = await waitFor(
      async () => {
        const found = await scheduledThreads(a.url, schedule.id);
        return found.every((t) => t.status !== "running") && found;
      },
      { timeoutMs: 15_000, what: "the scheduled runs to end" },
    );
    const claims = [a, b].map((s) => (s.stderr.match(new RegExp(`schedule tick claimed.*${schedule.id}|${schedule.id}.*schedule tick claimed`, "g")) ?? []).length);
    const detail = `claims a=${claims[0]} b=${claims[1]}, threads ${threads.map((t) => t.id).join(" ")}\n${a.logs(1500)}\n${b.logs(1500)}`;
    const ticks = assertEachTickOnce(threads, schedule, stoppedAt, detail);
    assert.ok(ticks.length >= 9, `about ten ticks in 20 s, got ${ticks.length}: ${detail}`);
    assert.equal(claims[0] + claims[1], threads.length, `one claim per run: ${detail}`);
    for (const t of threads) assert.equal(t.status, "idle", `${t.id} ended well: ${JSON.stringify(t)}`);
    const last = threads.at(-1);
    const run = await request(`${b.url}/threads/${last.id}/runs/${last.runId}`);
    assert.equal(run.status, 200, run.text);
    assert.equal(run.json.status, "succeeded", run.text);

    // Deleted: no tick after it.
    await sleep(2_500);
    assert.equal((await scheduledThreads(a.url, schedule.id)).length, threads.length, "no run after the delete");
    assert.deepEqual((await request(`${a.url}/schedules`)).json.schedules, []);
  });

  test("bad definitions get 4xx with stable codes", async () => {
    const rows = [
      [{ cron: "*/5 * * * * *", agentId: AGENT, messages: MESSAGES, thread: "new" }, 400, "INVALID_SCHEDULE"],
      [{ everySeconds: 2, cron: "* * * * *", agentId: AGENT, messages: MESSAGES, thread: "new" }, 400, "INVALID_SCHEDULE"],
      [{ everySeconds: 2, agentId: "nobody", messages: MESSAGES, thread: "new" }, 404, "AGENT_NOT_FOUND"],
      [{ everySeconds: 2, agentId: AGENT, messages: [], thread: "new" }, 400, "INVALID_SCHEDULE"],
    ];
    for (const [body, status, code] of rows) {
      assertApiError(await postJson(`${a.url}/schedules`, body), status, code, JSON.stringify(body));
    }
    assertApiError(await request(`${a.url}/schedules/nope`, { method: "DELETE" }), 404, "SCHEDULE_NOT_FOUND", "DELETE");
  });
});
