// Issue 51 on AWS Lambda: the demo's agent-lambda under `cargo lambda watch` (response
// streaming) with its DynamoDB store on moto, served over A2A 1.0 and driven by the official
// @a2a-js/sdk client through the same flows as the dev server (a2a-server.test.mjs).
// The function authenticates (HANDOFF_AUTH=api-key): every request, the card fetch
// included, carries the key; the card itself is public.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { assertBinaries } from "./lib/devserver.mjs";
import { assertNeedsKey, startLambdaHost, stopLambdaHost } from "./lib/served-hosts.mjs";
import {
  assertCancel,
  assertCard,
  assertRaceWithAgUi,
  assertRefundRoundTrip,
  assertStreamedTask,
} from "./lib/a2a-server-flows.mjs";

const TIMEOUT = 900_000;
const KEY = "lambda-a2a-key-0123456789";
const orderId = () => `L${Math.floor(5000 + Math.random() * 4999)}`;

assertBinaries();

describe("A2A server on AWS Lambda (cargo lambda watch + moto_server, @a2a-js/sdk)", { timeout: TIMEOUT }, () => {
  let served;
  let host;
  before(async () => {
    served = await startLambdaHost({
      key: KEY,
      table: `handoff_a2a_server_${Date.now()}`,
      label: "agent-lambda (a2a server)",
      // The card names the function URL through HANDOFF_PUBLIC_URL, as a deployment behind
      // a path prefix would set it. Two instances, so the two answers of the race can be in
      // flight at once (a finished answer sent again is a replay of its run, not a second
      // winner); slow tokens keep the winning run in flight.
      concurrency: 2,
      env: { DEMO_TOKEN_DELAY_MS: "60" },
    });
    host = served.host;
  });
  after(() => stopLambdaHost(served));

  test("the agent card names the function URL; POST /a2a needs the key", { timeout: TIMEOUT }, async () => {
    const card = await assertCard(host);
    assert.deepEqual(Object.keys(card.securitySchemes), ["bearer"]);
    await assertNeedsKey(host, "/a2a", { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t" } });
  });
  test("send, input-required, answer, completed: one refund, a retried answer is a replay", { timeout: TIMEOUT }, () =>
    assertRefundRoundTrip(host, orderId()));
  test("a streamed task through response streaming", { timeout: TIMEOUT }, () => assertStreamedTask(host));
  test("cancel an input-required task", { timeout: TIMEOUT }, () => assertCancel(host, orderId()));
  test("an A2A answer racing an AG-UI answer: one refund", { timeout: TIMEOUT }, () => assertRaceWithAgUi(host, orderId()));
});
