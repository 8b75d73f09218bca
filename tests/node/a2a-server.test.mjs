// Issue 51: the demo agent served over A2A 1.0 on the dev server, driven by the official
// @a2a-js/sdk client (card, send, stream, get, list, cancel, input-required -> answer ->
// completed, a race with AG-UI), and its approval policy and tenants under HANDOFF_AUTH.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { TaskState } from "@a2a-js/sdk";
import { startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { ledger, uid } from "./lib/flows.mjs";
import { POLICY_KEYS } from "./lib/model-standin.mjs";
import {
  assertCancel,
  assertCard,
  assertRaceWithAgUi,
  assertRefundRoundTrip,
  assertStreamedTask,
  dataPart,
  openInterrupt,
  sdkClient,
  textPart,
  userMessage,
} from "./lib/a2a-server-flows.mjs";

const orderId = () => `A${Math.floor(1000 + Math.random() * 8999)}`;

describe("A2A server on the dev server (@a2a-js/sdk)", { timeout: 180_000 }, () => {
  let host;
  before(async () => {
    // The winning answer's run stays in flight for a moment (as on Lambda and workerd), so
    // the race's two answers overlap: an answer sent after the winner's run ended is the
    // same answer again, and replays it by design (both would "win").
    const server = await startDevServer({ label: "a2a-server", env: { DEMO_TOKEN_DELAY_MS: "60" } });
    host = { url: server.url, ledger: (order) => ledger(server, order) };
  });
  after(stopAllServers);

  test("the agent card", async () => assertCard(host));
  test("send, input-required, answer, completed: one refund, a retried answer is a replay", async () =>
    assertRefundRoundTrip(host, orderId()));
  test("a streamed task", async () => assertStreamedTask(host));
  test("cancel an input-required task", async () => assertCancel(host, orderId()));
  test("an A2A answer racing an AG-UI answer: one refund", async () => assertRaceWithAgUi(host, orderId()));
});

describe("A2A server under HANDOFF_AUTH=api-key: four-eyes and tenants", { timeout: 180_000 }, () => {
  let server;
  const KEYS = { ...POLICY_KEYS, eve: "eve-key-0123456789abcdef" };
  const as = (who) => ({ authorization: `Bearer ${KEYS[who]}` });
  before(async () => {
    server = await startDevServer({
      label: "a2a-server-auth",
      env: {
        HANDOFF_AUTH: "api-key",
        HANDOFF_API_KEYS: `acme/alice=${POLICY_KEYS.alice},acme/bob+approver=${POLICY_KEYS.bob},other/eve=${KEYS.eve}`,
        DEMO_APPROVER_ABOVE_CENTS: "0",
      },
    });
  });
  after(stopAllServers);

  test("the card is public and names the bearer scheme; HANDOFF_PUBLIC_URL sets its URL", async () => {
    const card = await assertCard({ url: server.url });
    assert.deepEqual(Object.keys(card.securitySchemes), ["bearer"]);
    const behind = await startDevServer({ label: "a2a-public-url", env: { HANDOFF_PUBLIC_URL: "https://agents.example.com/" } });
    await assertCard({ url: behind.url, publicUrl: "https://agents.example.com" });
    const refused = await fetch(`${server.url}/a2a`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    assert.equal(refused.status, 401, "POST /a2a needs credentials");
  });

  test("an A2A caller cannot approve its own refund; the approver can, once; another tenant sees nothing", async () => {
    const host = (who) => ({ url: server.url, headers: as(who) });
    const order = orderId();
    const alice = await sdkClient(host("alice"), as("alice"));
    const task = await alice.sendMessage({ message: userMessage([textPart(`Refund order ${order}`)]) });
    const interrupt = openInterrupt(task);
    const answer = (messageId) =>
      userMessage([dataPart({ interruptId: interrupt.interruptId, payload: { approved: true } })], { taskId: task.id, messageId });
    await assert.rejects(alice.sendMessage({ message: answer(uid("self")) }), (err) => /other than its requester|FORBIDDEN|role/i.test(String(err?.message)));
    const bob = await sdkClient(host("bob"), as("bob"));
    const done = await bob.sendMessage({ message: answer(uid("bob")) });
    assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED);
    const book = await ledger(server, order, as("bob"));
    assert.equal(book.refunds, 1);
    const eve = await sdkClient(host("eve"), as("eve"));
    await assert.rejects(eve.getTask({ id: task.id }), (err) => /not found/i.test(String(err?.message)));
    const listed = await eve.listTasks({ pageSize: 50 });
    assert.equal(listed.tasks.length, 0, "another tenant lists nothing");
  });
});
