// What the schedule tests share (schedules.test.mjs, worker-schedules.test.mjs): the threads
// a schedule's ticks ran on, read back through `GET /threads`, and the exactly-once check.

import assert from "node:assert/strict";
import { request } from "./devserver.mjs";

/**
 * The threads schedule `scheduleId` started (`{scheduleId}-{tickMs}-{runId}`), oldest tick
 * first: [{id, tick, runId, status}], read page by page from `GET /threads`.
 */
export async function scheduledThreads(url, scheduleId, headers = {}) {
  const prefix = `${scheduleId}-`;
  const found = [];
  let cursor;
  do {
    const query = cursor ? `?limit=100&cursor=${encodeURIComponent(cursor)}` : "?limit=100";
    const page = await request(`${url}/threads${query}`, { headers });
    assert.equal(page.status, 200, page.text);
    for (const t of page.json.threads) {
      if (!t.id.startsWith(prefix)) continue;
      const rest = t.id.slice(prefix.length);
      const cut = rest.indexOf("-");
      found.push({ id: t.id, tick: Number(rest.slice(0, cut)), runId: rest.slice(cut + 1), status: t.status });
    }
    cursor = page.json.nextCursor;
  } while (cursor);
  return found.sort((x, y) => x.tick - y.tick);
}

/**
 * Asserts that each tick of `schedule` (everySeconds) due before `stoppedAt` ran exactly
 * once: no tick twice, none skipped, each on the schedule's grid. Returns the ticks.
 */
export function assertEachTickOnce(threads, schedule, stoppedAt, detail = "") {
  const period = schedule.everySeconds * 1_000;
  const ticks = threads.map((t) => t.tick);
  const twice = ticks.filter((tick, i) => ticks.indexOf(tick) !== i);
  assert.deepEqual(twice, [], `ticks that ran more than once: ${detail}`);
  const steps = ticks.map((tick) => (tick - schedule.createdAt) / period);
  for (const [i, step] of steps.entries()) {
    assert.ok(Number.isInteger(step) && step >= 1, `tick ${ticks[i]} is off the schedule's grid: ${detail}`);
  }
  const expected = Array.from({ length: ticks.length }, (_, i) => i + 1);
  assert.deepEqual(steps, expected, `every tick from the first, none skipped: ${detail}`);
  // The tick due as the delete landed may or may not have been claimed before it.
  const due = Math.floor((stoppedAt - schedule.createdAt) / period);
  assert.ok(ticks.length >= due - 1 && ticks.length <= due, `${ticks.length} ticks, ${due} were due: ${detail}`);
  return ticks;
}
