// Issue 51 on Cloudflare Workers: the demo Worker (wasm) in workerd through Miniflare, state
// in Durable Objects and KV, served over A2A 1.0 and driven by the official @a2a-js/sdk client
// through the same flows as the dev server (a2a-server.test.mjs). The Worker authenticates
// (HANDOFF_AUTH=api-key): every request, the card fetch included, carries the key; the card
// itself is public and its URL comes from the request's origin (no HANDOFF_PUBLIC_URL).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { assertBinaries } from "./lib/devserver.mjs";
import { assertNeedsKey, startWorkerHost, stopWorkerHost } from "./lib/served-hosts.mjs";
import {
  assertCancel,
  assertCard,
  assertRaceWithAgUi,
  assertRefundRoundTrip,
  assertStreamedTask,
} from "./lib/a2a-server-flows.mjs";

const TIMEOUT = 300_000;
const KEY = "worker-a2a-key-0123456789";
const orderId = () => `W${Math.floor(5000 + Math.random() * 4999)}`;

assertBinaries();

describe("A2A server on Workers (workerd via Miniflare, @a2a-js/sdk)", { timeout: TIMEOUT }, () => {
  let served;
  let host;
  before(async () => {
    // Slow tokens keep the race's winning run in flight while the other answer arrives (a
    // finished answer sent again is a replay of its run, not a second winner).
    served = await startWorkerHost({ label: "a2a-server", key: KEY, vars: { DEMO_TOKEN_DELAY_MS: "60" } });
    host = served.host;
  });
  after(() => stopWorkerHost(served));

  test("the agent card names the Worker's own URL; POST /a2a needs the key", async () => {
    const card = await assertCard(host);
    assert.deepEqual(Object.keys(card.securitySchemes), ["bearer"]);
    await assertNeedsKey(host, "/a2a", { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t" } });
  });
  test("send, input-required, answer, completed: one refund, a retried answer is a replay", () =>
    assertRefundRoundTrip(host, orderId()));
  test("a streamed task", () => assertStreamedTask(host));
  test("cancel an input-required task", () => assertCancel(host, orderId()));
  test("an A2A answer racing an AG-UI answer: one refund", () => assertRaceWithAgUi(host, orderId()));
});
