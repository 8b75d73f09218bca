// The console's threads sidebar and approvals inbox (issue 36) in headless Chromium
// against the dev server: threads appear after runs and open on click; rename, archive
// and delete change what the server lists; "Load more" pages; the Approvals tab lists
// what the caller may answer (who asked, which role answers) and opens its thread; a
// tool's result is shown once, inside its call's card.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { assertBinaries, postJson, request, startDevServer, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { uid, userMessage } from "./lib/flows.mjs";
import { assertBrowser, launchBrowser, openConsole } from "./lib/browser.mjs";
import { WAIT, approvalCard, browserFixture, button, conversation, freshOrder, refundResult, refundUntilCard, send, status, threadOf, waitForText, EXPECTED_HTTP_ERRORS } from "./lib/console-page.mjs";

assertBinaries();
assertBrowser();

const TEST_TIMEOUT = 240_000;
const sidebar = (page) => page.getByTestId("sidebar");
const threadItem = (page, id) => sidebar(page).locator(`[data-testid="thread-item"][data-thread-id="${id}"]`);

async function listed(server, query = "", headers = {}) {
  const res = await request(`${server.url}/threads?limit=100${query}`, { headers });
  assert.equal(res.status, 200, res.text);
  return res.json.threads;
}

async function runOn(server, threadId, text, headers = {}) {
  const res = await postJson(`${server.url}/agent`, { threadId, runId: uid("run"), messages: [userMessage(text)] }, { headers });
  assert.equal(res.status, 200, res.text);
}

describe("console: threads sidebar and single tool results (dev server)", () => {
  const fx = browserFixture("dev-threads");
  let server;

  before(async () => {
    fx.browser = await launchBrowser();
    server = await startDevServer({ label: "console-threads", env: { HANDOFF_STORE: "memory" } });
  });
  after(async () => {
    await fx.browser?.close();
    await stopAllServers();
  });

  test("threads appear after runs and open on click; rename, archive and delete reach the server", { timeout: TEST_TIMEOUT }, async () => {
    await fx.withPage("threads", async ({ page }) => {
      await openConsole(page, server.url);
      await send(page, "Hello there");
      await waitForText(status(page), /^\s*Idle\s*$/, "the status line");
      const first = threadOf(page);
      await threadItem(page, first).waitFor({ state: "visible", timeout: WAIT });

      await button(page, "New thread").click();
      await send(page, "A second conversation");
      await waitForText(status(page), /^\s*Idle\s*$/, "the status line");
      const second = threadOf(page);
      assert.notEqual(first, second);
      await threadItem(page, second).waitFor({ state: "visible", timeout: WAIT });

      // Opening the first from the list loads its history.
      await threadItem(page, first).locator(".thread-open").click();
      await waitFor(() => threadOf(page) === first, { timeoutMs: WAIT, what: "the URL to name the opened thread" });
      await waitForText(conversation(page), /Hello there/, "the opened thread's history");

      // Rename.
      await button(threadItem(page, first), "Rename").click();
      await threadItem(page, first).getByLabel("Thread name").fill("Refund questions");
      await button(threadItem(page, first), "Save name").click();
      await waitForText(threadItem(page, first), /Refund questions/, "the renamed item");
      assert.equal((await listed(server)).find((t) => t.id === first)?.name, "Refund questions");

      // Archive: out of the default list, on the server and in the sidebar.
      await button(threadItem(page, second), "Archive").click();
      await threadItem(page, second).waitFor({ state: "detached", timeout: WAIT });
      assert.ok(!(await listed(server)).some((t) => t.id === second));
      assert.ok((await listed(server, "&includeArchived=true")).find((t) => t.id === second)?.archived);

      // Delete asks once more, then the thread is gone everywhere.
      await button(threadItem(page, first), "Delete").click();
      await button(threadItem(page, first), "Confirm delete").click();
      await threadItem(page, first).waitFor({ state: "detached", timeout: WAIT });
      assert.equal((await request(`${server.url}/threads/${first}`)).status, 404);
      await waitFor(() => threadOf(page) !== first, { timeoutMs: WAIT, what: "the page to leave the deleted thread" });
    });
  });

  test("Load more pages through the list", { timeout: TEST_TIMEOUT }, async () => {
    const ids = [];
    for (let i = 0; i < 22; i += 1) {
      const id = uid("thread-many");
      ids.push(id);
      await runOn(server, id, `message ${i}`);
    }
    await fx.withPage("load-more", async ({ page }) => {
      await openConsole(page, server.url);
      const items = sidebar(page).getByTestId("thread-item");
      await waitFor(async () => (await items.count()) === 20, { timeoutMs: WAIT, what: "the first page of 20" });
      await button(sidebar(page), "Load more").click();
      await waitFor(async () => (await items.count()) > 20, { timeoutMs: WAIT, what: "the next page" });
      const shown = await items.evaluateAll((els) => els.map((el) => el.dataset.threadId));
      for (const id of ids) assert.ok(shown.includes(id), `${id} is not listed`);
      assert.equal(new Set(shown).size, shown.length, "no thread is listed twice");
    });
  });

  test("a tool's result is shown once, in its call's card", { timeout: TEST_TIMEOUT }, async () => {
    await fx.withPage("tool-result-once", async ({ page }) => {
      const orderId = freshOrder();
      await openConsole(page, server.url, { thread: uid("thread-console-once") });
      const { card } = await refundUntilCard(page, orderId);
      await button(card, "Approve").click();
      await card.waitFor({ state: "hidden", timeout: WAIT });
      const receipt = await refundResult(page);
      assert.equal(receipt.orderId, orderId);
      await waitForText(status(page), /^\s*Idle\s*$/, "the status line");
      const log = conversation(page);
      assert.equal(await log.locator('[data-testid="message"][data-role="tool"]').count(), 0, "a separate tool result box");
      const receiptText = receipt.refundId;
      assert.ok(receiptText, JSON.stringify(receipt));
      const mentions = await log.evaluate((el, needle) => {
        const texts = [...el.querySelectorAll("li")].map((li) => li.textContent.replace(/\s+/g, ""));
        return texts.filter((t) => t.includes(needle.replace(/\s+/g, "")));
      }, receiptText);
      assert.equal(mentions.length, 1, `the receipt appears in one place only: ${JSON.stringify(mentions)}`);
      // After a reload (history from the server) it is still shown once.
      await page.reload();
      await refundResult(page);
      assert.equal(await log.locator('[data-testid="message"][data-role="tool"]').count(), 0);
    });
  });
});

describe("console: the approvals inbox (dev server, api-key, approvers)", () => {
  const fx = browserFixture("dev-inbox");
  const aliceKey = `alice-${uid("key")}`;
  const carolKey = `carol-${uid("key")}`;
  let server;

  before(async () => {
    fx.browser = await launchBrowser();
    server = await startDevServer({
      label: "console-inbox",
      env: {
        HANDOFF_STORE: "memory",
        HANDOFF_AUTH: "api-key",
        HANDOFF_API_KEYS: `acme/alice=${aliceKey},acme/carol+approver=${carolKey}`,
        DEMO_APPROVER_ABOVE_CENTS: "0",
      },
    });
  });
  after(async () => {
    await fx.browser?.close();
    await stopAllServers();
  });

  test("the Approvals tab shows who asked and who may answer, and opens the thread to answer it", { timeout: TEST_TIMEOUT }, async () => {
    const orderId = freshOrder();
    const threadId = uid("thread-inbox");
    await runOn(server, threadId, `Refund order ${orderId}`, { authorization: `Bearer ${aliceKey}` });
    await fx.withPage(
      "inbox",
      async ({ page }) => {
        await openConsole(page, server.url);
        const connection = page.getByTestId("connection");
        if ((await connection.getAttribute("open")) === null) await connection.locator("summary").click();
        await page.getByLabel("Access token", { exact: true }).fill(carolKey);
        await button(page, "Save").click();

        await page.getByRole("tab", { name: "Approvals" }).click();
        const item = sidebar(page).locator(`[data-testid="approval-item"][data-thread-id="${threadId}"]`);
        await item.waitFor({ state: "visible", timeout: WAIT });
        await waitForText(item.getByTestId("approval-who"), /Asked by alice · answerable by role approver/, "who asked");
        await waitForText(item, new RegExp(orderId), "the proposed arguments");

        await button(item, "Open thread").click();
        await waitFor(() => threadOf(page) === threadId, { timeoutMs: WAIT, what: "the URL to name the thread" });
        const card = approvalCard(page);
        await card.waitFor({ state: "visible", timeout: WAIT });
        await button(card, "Approve").click();
        await card.waitFor({ state: "hidden", timeout: WAIT });
        await waitForText(conversation(page), new RegExp(`refunded for order ${orderId}`), "the conversation");
        await item.waitFor({ state: "detached", timeout: WAIT });
      },
      { allow: EXPECTED_HTTP_ERRORS },
    );
  });
});
