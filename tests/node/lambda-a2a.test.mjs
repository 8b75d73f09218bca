// The A2A webhook as its own Lambda function: agent-lambda delegates a fraud review to a
// remote agent (official @a2a-js/sdk) with a push URL on a2a-webhook-lambda; both functions
// run under `cargo lambda watch` on one DynamoDB table on moto. The remote's pushes and our
// own token-authenticated notification go through the webhook function; the agent function's
// resume run then reads what it stored.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { assertBinaries, postJson, request, sseEvents, waitFor } from "./lib/devserver.mjs";
import { assertStrict, rawRefundInterrupt, uid } from "./lib/flows.mjs";
import { startFraudAgent } from "./lib/a2a-remote.mjs";
import { startLambda, startMoto, stopAll } from "./lib/lambda.mjs";

const TIMEOUT = 900_000;

assertBinaries();

describe("A2A webhook Lambda (cargo lambda watch + moto_server)", { timeout: TIMEOUT }, () => {
  let remote;
  let webhook;
  let agent;
  before(async () => {
    const moto = await startMoto();
    const table = `handoff_a2a_${Date.now()}`;
    remote = await startFraudAgent();
    webhook = await startLambda({ moto, table, pkg: "a2a-webhook-lambda", label: "webhook-lambda" });
    agent = await startLambda({
      moto,
      table,
      label: "agent-lambda (a2a)",
      env: { DEMO_FRAUD_AGENT_URL: remote.url, HANDOFF_A2A_WEBHOOK_URL: webhook.url, HANDOFF_A2A_ALLOW_LOOPBACK: "true" },
    });
  });
  after(async () => {
    for (const fn of [webhook, agent]) if (fn) assert.doesNotMatch(fn.logs(50_000), /panicked/);
    await stopAll();
    await remote?.close();
  });

  test("pushes through the webhook function reach the agent function's resume", { timeout: TIMEOUT }, async () => {
    const sent = remote.requests.length;
    const { threadId, interrupt } = await rawRefundInterrupt(agent, "W4001");
    assert.equal(interrupt.reason, "a2a:task", JSON.stringify(interrupt));
    const taskId = interrupt.metadata?.["a2a.taskId"];
    const send = remote.requests.slice(sent).find((r) => r.method === "SendMessage");
    const push = send.body.params.configuration.taskPushNotificationConfig;
    assert.ok(push.url.startsWith(`${webhook.url}/a2a/push/`), push.url);

    const notify = (token, state, timestamp) =>
      request(push.url, {
        method: "POST",
        headers: { "content-type": "application/a2a+json", "x-a2a-notification-token": token },
        body: JSON.stringify({ statusUpdate: { taskId, contextId: "ctx", status: { state, timestamp } } }),
      });
    // Stamped in the past, so it cannot outrank the remote's own later pushes.
    const stamp = new Date(Date.now() - 60_000).toISOString();
    // A forged token is refused before anything is stored.
    const forged = await notify("forged-token-0123456789abcdef", "TASK_STATE_COMPLETED", new Date().toISOString());
    assert.equal(forged.status, 401, forged.text);
    assert.equal(forged.json?.code, "UNAUTHORIZED");
    // Our own notification with the subscription's token is acknowledged, once.
    const first = await notify(push.token, "TASK_STATE_WORKING", stamp);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.json.taskId, taskId);
    assert.equal(first.json.duplicate, false);
    const again = await notify(push.token, "TASK_STATE_WORKING", stamp);
    assert.equal(again.json?.duplicate, true, again.text);

    // Before the review is done the agent function refuses the answer (it reads the stored task).
    const body = { threadId, runId: uid("run"), messages: [], resume: [{ interruptId: interrupt.id, status: "resolved", payload: {} }] };
    const early = await postJson(`${agent.url}/agent`, body);
    assert.equal(early.status, 409, early.text);
    assert.equal(early.json?.code, "INTERRUPT_NOT_READY");

    // The remote finishes; its own pushes go through the webhook function.
    remote.complete(taskId, { verdict: "No fraud signals for W4001: approve." });
    const res = await waitFor(
      async () => {
        const r = await postJson(`${agent.url}/agent`, body);
        return r.status === 409 && r.json?.code === "INTERRUPT_NOT_READY" ? undefined : r;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: "the pushed completion" },
    );
    assert.equal(res.status, 200, res.text);
    await assertStrict(res.bytes, { threadId, runId: body.runId });
    const events = sseEvents(res.bytes);
    const text = events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
    assert.match(text, /Fraud review TASK_STATE_COMPLETED: No fraud signals for W4001: approve\./);
    assert.equal(events.at(-1).outcome?.interrupts?.[0]?.reason, "tool_call");

    // The agent function's thread view shows the task snapshot the webhook function stored.
    const view = await request(`${agent.url}/threads/${threadId}`);
    assert.equal(view.status, 200, view.text);
    const task = view.json.a2aTasks?.find((t) => t.task.id === taskId);
    assert.equal(task?.task.status.state, "TASK_STATE_COMPLETED", view.text);
  });
});
