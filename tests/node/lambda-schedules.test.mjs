// Schedules on Lambda (issue 53, part 3), under cargo lambda watch + moto: the invocation
// infra/template.yaml's ScheduleTick rule sends (EventBridge Scheduler, every minute) claims
// the due ticks and answers once their runs ended. Two such invocations at once, on two
// instances, run each tick once; ticks missed between invocations collapse into one run.
//
//   cd tests/node && node --test lambda-schedules.test.mjs

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { postJson, request } from "./lib/devserver.mjs";
import { startLambda, startMoto, stopAll } from "./lib/lambda.mjs";
import { scheduledThreads } from "./lib/schedules.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

describe("schedules on Lambda: the template's ScheduleTick invocation", { timeout: 900_000 }, () => {
  let lambda;
  let input;
  before(async () => {
    const template = fs.readFileSync(path.join(REPO, "infra/template.yaml"), "utf8");
    input = /ScheduleTick:[\s\S]*?Type: ScheduleV2[\s\S]*?Input: '([^']+)'/.exec(template)?.[1];
    assert.ok(input, "infra/template.yaml has a ScheduleTick rule (ScheduleV2) with an input");
    const moto = await startMoto();
    lambda = await startLambda({ moto, table: `handoff_schedules_${Date.now()}`, concurrency: 2, label: "agent-lambda (schedules)" });
  });
  after(async () => {
    const output = lambda?.logs(200_000) ?? "";
    await stopAll();
    assert.doesNotMatch(output, /panicked/, output.slice(-4000));
  });

  test("each due tick runs once, its run ended when the invocation answers", async () => {
    const created = await postJson(`${lambda.url}/schedules`, {
      everySeconds: 2,
      agentId: "refund-demo",
      messages: [{ role: "user", content: "What can you do?" }],
      thread: "new",
    });
    assert.equal(created.status, 201, created.text);
    const schedule = created.json;
    // The emulator's Invoke API, as EventBridge calls the function (no Function URL).
    const invoke = new URL(lambda.url).origin + "/2015-03-31/functions/agent-lambda/invocations";
    const tick = async () => {
      const res = await fetch(invoke, { method: "POST", body: input, signal: AbortSignal.timeout(60_000) });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      assert.match(text, /"status":\s*"ok"/, "the rule's input is answered as GET /healthz");
    };

    await sleep(5_000); // two ticks pass with nobody invoking the function
    const rounds = 4;
    for (let round = 1; round <= rounds; round++) {
      // Two invocations at once, on two instances, race for the same tick.
      await Promise.all([tick(), tick()]);
      const threads = await scheduledThreads(lambda.url, schedule.id);
      const detail = `round ${round}: ${threads.map((t) => t.id).join(" ")}\n${lambda.logs(3000)}`;
      assert.equal(threads.length, round, `one run per round, however many ticks were missed: ${detail}`);
      const last = threads.at(-1);
      const status = await request(`${lambda.url}/threads/${last.id}/runs/${last.runId}`);
      assert.equal(status.json?.status, "succeeded", `ended before the invocation answered: ${status.text}`);
      const ticks = threads.map((t) => t.tick);
      assert.equal(new Set(ticks).size, ticks.length, `no tick twice: ${detail}`);
      for (const t of ticks) assert.ok(Number.isInteger((t - schedule.createdAt) / 2_000), `on the grid: ${detail}`);
      if (round < rounds) await sleep(2_500);
    }
    const [first] = await scheduledThreads(lambda.url, schedule.id);
    assert.equal(first.tick, schedule.createdAt + 2_000, "the first invocation ran the oldest missed tick, once");
    const listed = await request(`${lambda.url}/schedules`);
    assert.equal(listed.json.schedules[0].ticks, rounds);
  });
});
