// The web console with a thread that waits on an A2A task (issue 15), in headless Chromium
// against the dev server: the demo delegates a fraud review to a remote agent on the official
// @a2a-js/sdk, whose pushes reach the dev server's receiver. The page lists the task with its
// state, shows the server's INTERRUPT_NOT_READY when the card is answered too early, follows
// the task to COMPLETED, and the answer then leads to the refund approval.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { assertBinaries, startDevServer, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { ledger } from "./lib/flows.mjs";
import { startFraudAgent } from "./lib/a2a-remote.mjs";
import { assertBrowser, launchBrowser, openConsole } from "./lib/browser.mjs";
import { WAIT, approvalCard, browserFixture, button, errorBanner, freshOrder, send, threadView, waitForText } from "./lib/console-page.mjs";

assertBinaries();
assertBrowser();

const fx = browserFixture("dev-a2a");
let remote;
let server;

before(async () => {
  fx.browser = await launchBrowser();
  remote = await startFraudAgent();
  server = await startDevServer({
    env: { HANDOFF_STORE: "memory", DEMO_FRAUD_AGENT_URL: remote.url, HANDOFF_A2A_ALLOW_LOOPBACK: "true" },
    label: "dev-server (console a2a)",
  });
});

after(async () => {
  await fx.browser?.close();
  await stopAllServers();
  await remote?.close();
});

test("an A2A task the thread waits on: listed with its state, answered once it completed", { timeout: 240_000 }, async () => {
  // The early answer is refused on purpose: the app logs that refusal.
  await fx.withPage("a2a", async ({ page }) => {
    const orderId = freshOrder();
    await openConsole(page, server.url);
    await send(page, `Refund order ${orderId}`);

    // The run ends waiting on the delegated review: a card for the a2a:task interrupt and
    // the task in the A2A panel, WORKING once the remote's push arrived.
    const card = approvalCard(page);
    await card.waitFor({ state: "visible", timeout: WAIT });
    const threadId = new URL(page.url()).searchParams.get("thread");
    const view = await threadView(server, threadId);
    assert.equal(view.pendingInterrupts[0].reason, "a2a:task", JSON.stringify(view.pendingInterrupts));
    const taskId = view.pendingInterrupts[0].metadata["a2a.taskId"];
    const task = page.locator(`[data-testid="a2a-task"][data-task-id="${taskId}"]`);
    await page.reload(); // the panel is filled from GET /threads, the remote pushed by now or soon
    await waitFor(async () => (await task.getAttribute("data-state", { timeout: 1_000 }).catch(() => null)) === "TASK_STATE_WORKING", {
      timeoutMs: WAIT,
      what: "the task listed as TASK_STATE_WORKING",
    });

    // Answering before the task is done: the server's 409 is shown, the card stays.
    await button(card, "Approve").click();
    await waitForText(errorBanner(page), /INTERRUPT_NOT_READY/, "the error banner");
    await waitForText(card.getByTestId("card-error"), /INTERRUPT_NOT_READY/, "the card error");
    assert.equal((await threadView(server, threadId)).pendingInterrupts.length, 1, "the refused answer changed nothing");

    // The remote finishes; the page follows the task to COMPLETED on its own (it polls
    // while a task works), then the same answer goes through and the refund is proposed.
    remote.complete(taskId, { verdict: `No fraud signals for ${orderId}: approve.` });
    await waitFor(async () => (await task.getAttribute("data-state", { timeout: 1_000 }).catch(() => null)) === "TASK_STATE_COMPLETED", {
      timeoutMs: WAIT,
      what: "the task listed as TASK_STATE_COMPLETED",
    });
    await button(errorBanner(page), "Dismiss").click();
    await errorBanner(page).waitFor({ state: "hidden", timeout: WAIT });
    await button(card, "Approve").click();
    const refundCard = page.locator('[data-testid="approval-card"]').filter({ hasText: orderId });
    await waitFor(async () => {
      const id = await refundCard.getAttribute("data-interrupt-id", { timeout: 1_000 }).catch(() => null);
      return id && id !== view.pendingInterrupts[0].id;
    }, { timeoutMs: WAIT, what: "the refund approval card" });
    await button(refundCard, "Approve").click();
    await refundCard.waitFor({ state: "hidden", timeout: WAIT });
    await waitFor(async () => (await ledger(server, orderId)).refunds === 1, { timeoutMs: WAIT, what: "one refund" });
  }, { allow: [/\b409\b|INTERRUPT_NOT_READY/] });
});
