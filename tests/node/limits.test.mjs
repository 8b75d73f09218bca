// Rate limits and token budgets across instances: two dev-server processes on one SQLite
// file share the principal's run bucket and the tenant's token budget. Over the limit is
// 429 before any stream (Retry-After and the IETF RateLimit fields); a spent budget ends a
// running run at its next model call with RUN_ERROR BUDGET_EXCEEDED and its usage, and
// refuses new runs; a malformed limit refuses to start, naming the variable.
import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { makeDataDir, postJson, sseEvents, startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { assertStrict, uid, userMessage } from "./lib/flows.mjs";
import { dialects, llmEnv, standIn } from "./lib/model-standin.mjs";

const TIMEOUT = 180_000;
const { openai } = dialects;

function post(server, text = "hello") {
  const threadId = uid("thread-limits");
  const runId = uid("run");
  return postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage(text)] }).then((res) => ({ ...res, threadId, runId }));
}

describe("limits across two dev-server processes on one SQLite file", { timeout: TIMEOUT }, () => {
  after(stopAllServers);

  test("HANDOFF_RATE_LIMIT: the principal's bucket is shared; the refusal carries Retry-After and RateLimit fields", async () => {
    const dataDir = makeDataDir();
    const env = { HANDOFF_RATE_LIMIT: "3/min" };
    const a = await startDevServer({ label: "limits-a", dataDir, env });
    const b = await startDevServer({ label: "limits-b", dataDir, env });
    for (const server of [a, b, a]) assert.equal((await post(server)).status, 200);
    const refused = await post(b);
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.json.code, "RATE_LIMITED");
    assert.equal(refused.headers["retry-after"], "20");
    assert.equal(refused.headers["ratelimit-policy"], '"runs";q=3;w=60');
    assert.match(refused.headers["ratelimit"], /^"runs";r=0;t=(59|60)$/);
  });

  test("HANDOFF_TOKEN_BUDGET: a run in progress ends at its next model call with its usage; new runs are refused", async () => {
    // Run 1 (on a): one answer, 64 tokens. Run 2 (on b): the order lookup (59 tokens),
    // then the budget (100) is spent before its second model call.
    const model = await standIn([openai.text("Hello there."), openai.tools([["get_order", JSON.stringify({ orderId: "L9101" })]]), openai.text("never sent")]);
    const dataDir = makeDataDir();
    const env = { ...llmEnv(model), HANDOFF_TOKEN_BUDGET: "100/day" };
    const a = await startDevServer({ label: "budget-a", dataDir, env });
    const b = await startDevServer({ label: "budget-b", dataDir, env });

    const first = await post(a, "hi");
    assert.equal(first.status, 200, first.text);
    assert.equal(sseEvents(first.bytes).at(-1).type, "RUN_FINISHED");

    const second = await post(b, "what about order L9101?");
    assert.equal(second.status, 200, second.text);
    await assertStrict(second.bytes, { threadId: second.threadId, runId: second.runId });
    const last = sseEvents(second.bytes).at(-1);
    assert.equal(last.type, "RUN_ERROR");
    assert.equal(last.code, "BUDGET_EXCEEDED");
    assert.deepEqual(last.usage, [{ provider: "openai", model: "stand-in-1", inputTokens: 50, outputTokens: 9, totalTokens: 59 }]);
    assert.equal(model.requests.length, 2, "the third model call was never made");

    const third = await post(a, "hi again");
    assert.equal(third.status, 429, third.text);
    assert.equal(third.json.code, "BUDGET_EXCEEDED");
    assert.ok(Number(third.headers["retry-after"]) > 0);
    await model.close();
  });

  test("a malformed limit (or HANDOFF_SQLITE_SYNC) refuses to start, naming the variable", async () => {
    await assert.rejects(
      startDevServer({ env: { HANDOFF_SQLITE_SYNC: "off" }, startTimeoutMs: 20_000 }),
      /HANDOFF_SQLITE_SYNC/,
    );
    await assert.rejects(
      startDevServer({ env: { HANDOFF_STORE: "memory", HANDOFF_RATE_LIMIT: "60 per minute" }, startTimeoutMs: 20_000 }),
      /HANDOFF_RATE_LIMIT/,
    );
    await assert.rejects(
      startDevServer({ env: { HANDOFF_STORE: "memory", HANDOFF_TOKEN_BUDGET: "1000/week" }, startTimeoutMs: 20_000 }),
      /HANDOFF_TOKEN_BUDGET/,
    );
  });
});
