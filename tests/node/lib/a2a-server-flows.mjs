// The agent served over A2A 1.0 (issue 51), driven by the official @a2a-js/sdk client.
// Host-agnostic: each flow takes `host = {url, headers?, ledger(orderId)}`, so the dev
// server, Lambda and workerd run the same checks.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Role, TaskState } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { postJson, sseEvents } from "./devserver.mjs";

const id = (prefix) => `${prefix}-${randomUUID()}`;

/** An SDK client for `host`, its requests carrying `headers` (credentials). */
export async function sdkClient(host, headers = host.headers ?? {}) {
  const fetchImpl = (url, init = {}) => fetch(url, { ...init, headers: { ...(init.headers ?? {}), ...headers } });
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  // The card's full URL: the SDK resolves its default (relative) card path against the base
  // URL, which drops the last path segment of a host served under a prefix (a Lambda URL).
  return new ClientFactory(options).createFromUrl(`${host.url}/.well-known/agent-card.json`, "");
}

const part = (content) => ({ content, metadata: undefined, filename: "", mediaType: "" });
export const textPart = (value) => part({ $case: "text", value });
export const dataPart = (value) => part({ $case: "data", value });

/** A user message in the SDK's shape. */
export function userMessage(parts, { taskId = "", contextId = "", messageId = id("a2a-msg") } = {}) {
  return { messageId, role: Role.ROLE_USER, parts, contextId, taskId, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** The interrupt an input-required task asks about (its status message's data part). */
export function openInterrupt(task) {
  assert.equal(task.status.state, TaskState.TASK_STATE_INPUT_REQUIRED, JSON.stringify(task));
  const data = task.status.message.parts.find((p) => p.content.$case === "data");
  assert.ok(data?.content.value.interruptId, JSON.stringify(task.status.message));
  return data.content.value;
}

const answerOf = (interruptId, payload) => [dataPart({ interruptId, payload })];
const stateName = (state) => TaskState[state];

/** The card: public, naming the JSON-RPC URL, protocol 1.0, streaming, the agent's skill. */
export async function assertCard(host) {
  const res = await fetch(`${host.url}/.well-known/agent-card.json`);
  assert.equal(res.status, 200, "the card is readable without credentials");
  const card = await res.json();
  assert.equal(card.name, "refund-demo");
  assert.deepEqual(card.supportedInterfaces, [
    { url: `${host.publicUrl ?? host.url}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
  ]);
  assert.equal(card.capabilities.streaming, true);
  assert.ok(card.skills.length >= 1 && card.skills[0].id === "refund-demo", JSON.stringify(card.skills));
  return card;
}

/**
 * Send, input-required, answer, completed: one refund; the answer sent again (same
 * messageId) is a replay; get and list show the task; a new message on the finished task is
 * refused with UnsupportedOperation.
 */
export async function assertRefundRoundTrip(host, orderId) {
  const client = await sdkClient(host);
  const asked = await client.sendMessage({ message: userMessage([textPart(`Refund order ${orderId}`)]) });
  const task = asked;
  const interrupt = openInterrupt(task);
  assert.ok(interrupt.responseSchema, "the interrupt's responseSchema travels as data");
  assert.equal((await host.ledger(orderId)).refunds, 0, "nothing refunded before the answer");
  const answer = userMessage(answerOf(interrupt.interruptId, { approved: true }), { taskId: task.id });
  const done = await client.sendMessage({ message: answer });
  assert.equal(stateName(done.status.state), "TASK_STATE_COMPLETED", JSON.stringify(done.status));
  assert.ok(
    done.artifacts.some((a) => a.parts.some((p) => p.content.$case === "text" && /refund/i.test(p.content.value))),
    JSON.stringify(done.artifacts),
  );
  assert.equal((await host.ledger(orderId)).refunds, 1, "exactly one refund");
  const again = await client.sendMessage({ message: answer });
  assert.equal(stateName(again.status.state), "TASK_STATE_COMPLETED");
  assert.equal((await host.ledger(orderId)).refunds, 1, "the retried answer refunds nothing more");

  const read = await client.getTask({ id: task.id, historyLength: 1 });
  assert.equal(stateName(read.status.state), "TASK_STATE_COMPLETED");
  assert.equal(read.contextId, task.contextId);
  assert.equal(read.history.length, 1, "historyLength bounds the history");
  const listed = await client.listTasks({ contextId: task.contextId, pageSize: 10, includeArtifacts: false });
  assert.deepEqual(listed.tasks.map((t) => t.id), [task.id]);
  assert.equal(listed.nextPageToken, "");
  await assert.rejects(
    client.sendMessage({ message: userMessage([textPart("one more thing")], { taskId: task.id }) }),
    (err) => /finished task|terminal|COMPLETED/i.test(String(err?.message)),
  );
  return task;
}

/** A streamed task: opens with the task, then working, an artifact, completed; then closes. */
export async function assertStreamedTask(host) {
  const client = await sdkClient(host);
  const kinds = [];
  let artifactText = "";
  for await (const event of client.sendMessageStream({ message: userMessage([textPart("hello")]) })) {
    const { $case, value } = event.payload;
    kinds.push($case === "statusUpdate" ? `status:${stateName(value.status.state)}` : $case);
    if ($case === "artifactUpdate") artifactText += value.artifact.parts.map((p) => p.content.value).join("");
  }
  assert.equal(kinds[0], "task", kinds.join(","));
  assert.equal(kinds[1], "status:TASK_STATE_WORKING", kinds.join(","));
  assert.ok(kinds.includes("artifactUpdate"), kinds.join(","));
  assert.equal(kinds.at(-1), "status:TASK_STATE_COMPLETED", kinds.join(","));
  assert.match(artifactText, /refund/i);
}

/** Cancel an input-required task: canceled, nothing refunded; canceling again is refused. */
export async function assertCancel(host, orderId) {
  const client = await sdkClient(host);
  const task = await client.sendMessage({ message: userMessage([textPart(`Refund order ${orderId}`)]) });
  openInterrupt(task);
  const canceled = await client.cancelTask({ id: task.id });
  assert.equal(stateName(canceled.status.state), "TASK_STATE_CANCELED");
  assert.equal((await host.ledger(orderId)).refunds, 0);
  await assert.rejects(client.cancelTask({ id: task.id }), (err) => /already|cancel/i.test(String(err?.message)));
  await assert.rejects(client.getTask({ id: id("task-unknown") }), (err) => /not found/i.test(String(err?.message)));
}

/**
 * An answer over A2A and one over AG-UI racing on the same interrupt: one refund; the
 * loser is told clearly (AG-UI 409, or an A2A error naming the Handoff code).
 */
export async function assertRaceWithAgUi(host, orderId) {
  const client = await sdkClient(host);
  const task = await client.sendMessage({ message: userMessage([textPart(`Refund order ${orderId}`)]) });
  const interrupt = openInterrupt(task);
  const viaA2a = client
    .sendMessage({ message: userMessage(answerOf(interrupt.interruptId, { approved: true }), { taskId: task.id }) })
    .then((t) => ({ ok: t.status.state === TaskState.TASK_STATE_COMPLETED, what: stateName(t.status.state) }))
    .catch((err) => ({ ok: false, what: String(err?.message) }));
  const viaAgUi = postJson(
    `${host.url}/agent`,
    {
      threadId: task.contextId,
      runId: id("run-agui"),
      messages: [],
      resume: [{ interruptId: interrupt.interruptId, status: "resolved", payload: { approved: true } }],
    },
    { headers: host.headers ?? {} },
  ).then((r) => ({
    ok: r.status === 200 && sseEvents(r.bytes).at(-1)?.type === "RUN_FINISHED",
    what: `${r.status} ${r.text.slice(0, 200)}`,
  }));
  const outcomes = await Promise.all([viaA2a, viaAgUi]);
  assert.equal((await host.ledger(orderId)).refunds, 1, `one refund: ${JSON.stringify(outcomes)}`);
  assert.equal(outcomes.filter((o) => o.ok).length, 1, `one winner: ${JSON.stringify(outcomes)}`);
  const loser = outcomes.find((o) => !o.ok);
  assert.match(loser.what, /INTERRUPT_NOT_PENDING|THREAD_BUSY|not pending|busy|409/i, JSON.stringify(outcomes));
  const read = await client.getTask({ id: task.id });
  assert.equal(stateName(read.status.state), "TASK_STATE_COMPLETED", "the task follows the answer that won");
}
