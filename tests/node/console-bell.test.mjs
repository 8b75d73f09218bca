// The console's bell (issue 53) in headless Chromium against the dev server: an approval
// raised by another user's run rings the bell of the approver who may answer it (count 1,
// its list opens the thread's approval card), never the requester's under four eyes; the
// bell goes away once it is answered, in this console or anywhere else (AG-UI here).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { assertBinaries, postJson, request, startDevServer, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { uid, userMessage } from "./lib/flows.mjs";
import { assertBrowser, launchBrowser, openConsole } from "./lib/browser.mjs";
import { WAIT, approvalCard, browserFixture, button, conversation, freshOrder, threadOf, waitForText, EXPECTED_HTTP_ERRORS } from "./lib/console-page.mjs";

assertBinaries();
assertBrowser();

const TEST_TIMEOUT = 240_000;
const bell = (page) => page.getByTestId("bell");
const bellItem = (page, threadId) => page.locator(`[data-testid="bell-item"][data-thread-id="${threadId}"]`);

describe("console: the bell (dev server, api-key, four eyes)", () => {
  const fx = browserFixture("dev-bell");
  const keys = { alice: `alice-${uid("key")}`, carol: `carol-${uid("key")}`, erin: `erin-${uid("key")}` };
  const bearer = (who) => ({ authorization: `Bearer ${keys[who]}` });
  let server;

  before(async () => {
    fx.browser = await launchBrowser();
    server = await startDevServer({
      label: "console-bell",
      env: {
        HANDOFF_STORE: "memory",
        HANDOFF_AUTH: "api-key",
        HANDOFF_API_KEYS: `acme/alice=${keys.alice},acme/carol+approver=${keys.carol},acme/erin+approver=${keys.erin}`,
        // Every refund needs role approver and someone other than the requester.
        DEMO_APPROVER_ABOVE_CENTS: "0",
      },
    });
  });
  after(async () => {
    await fx.browser?.close();
    await stopAllServers();
  });

  /** Alice asks for a refund on a new thread (her run, over plain HTTP); its thread id. */
  async function aliceAsks() {
    const threadId = uid("thread-bell");
    const res = await postJson(
      `${server.url}/agent`,
      { threadId, runId: uid("run"), messages: [userMessage(`Refund order ${freshOrder()}`)] },
      { headers: bearer("alice") },
    );
    assert.equal(res.status, 200, res.text);
    assert.match(res.text, /"type":"interrupt"/);
    return threadId;
  }

  /** Opens the console signed in as `who` (the token saved in Connection); the bell's first answer. */
  async function signIn(page, who) {
    await openConsole(page, server.url);
    const connection = page.getByTestId("connection");
    if ((await connection.getAttribute("open")) === null) await connection.locator("summary").click();
    await page.getByLabel("Access token", { exact: true }).fill(keys[who]);
    const asked = page.waitForResponse((r) => new URL(r.url()).pathname === "/approvals/waiting" && r.request().headers().authorization === `Bearer ${keys[who]}`);
    await button(page, "Save").click();
    const answer = await asked;
    assert.equal(answer.status(), 200);
    return answer.json();
  }

  test("the approver's bell rings with count 1, opens the approval card and goes away once approved", { timeout: TEST_TIMEOUT }, async () => {
    await fx.withPage(
      "approve",
      async ({ page }) => {
        await signIn(page, "carol");
        assert.equal(await bell(page).isVisible(), false, "nothing waits yet");

        // Alice's run, elsewhere, raises the approval; the bell follows without a reload.
        const threadId = await aliceAsks();
        await bell(page).waitFor({ state: "visible", timeout: WAIT });
        await waitForText(page.getByTestId("bell-count"), /^1$/, "the bell's count");
        assert.equal(await bell(page).getAttribute("aria-label"), "Approvals waiting for you: 1");

        await bell(page).click();
        const item = bellItem(page, threadId);
        await item.waitFor({ state: "visible", timeout: WAIT });
        await waitForText(item, /Asked by alice/, "who asked");
        await button(item, `Open thread ${threadId}`).click();
        await waitFor(() => threadOf(page) === threadId, { timeoutMs: WAIT, what: "the URL to name the thread" });
        const card = approvalCard(page);
        await card.waitFor({ state: "visible", timeout: WAIT });
        await button(card, "Approve").click();
        await card.waitFor({ state: "hidden", timeout: WAIT });
        await waitForText(conversation(page), /refunded for order/, "the conversation");
        await bell(page).waitFor({ state: "hidden", timeout: WAIT });
      },
      { allow: EXPECTED_HTTP_ERRORS },
    );
  });

  test("the requester's bell stays silent; an answer given elsewhere silences the approver's", { timeout: TEST_TIMEOUT }, async () => {
    const threadId = await aliceAsks();
    await fx.withPage(
      "requester",
      async ({ page }) => {
        // Her own request, under four eyes: the server's answer lists nothing for her.
        assert.deepEqual(await signIn(page, "alice"), { count: 0, approvals: [] });
        assert.equal(await bell(page).isVisible(), false, "the requester's bell rang");
      },
      { allow: EXPECTED_HTTP_ERRORS },
    );
    await fx.withPage(
      "elsewhere",
      async ({ page }) => {
        await signIn(page, "carol");
        await waitForText(page.getByTestId("bell-count"), /^1$/, "the bell's count");
        await bell(page).waitFor({ state: "visible", timeout: WAIT });

        // Erin, another approver, answers over AG-UI: carol's page hears it by itself.
        const waiting = await request(`${server.url}/approvals/waiting`, { headers: bearer("erin") });
        const entry = waiting.json.approvals.find((a) => a.threadId === threadId);
        assert.ok(entry, JSON.stringify(waiting.json));
        const resume = { threadId, runId: uid("run"), messages: [], resume: [{ interruptId: entry.interruptId, status: "resolved", payload: { approved: true } }] };
        const res = await postJson(`${server.url}/agent`, resume, { headers: bearer("erin") });
        assert.equal(res.status, 200, res.text);
        assert.match(res.text, /RUN_FINISHED/);
        await bell(page).waitFor({ state: "hidden", timeout: WAIT });
        assert.equal((await request(`${server.url}/approvals/waiting`, { headers: bearer("carol") })).json.count, 0);
      },
      { allow: EXPECTED_HTTP_ERRORS },
    );
  });
});
