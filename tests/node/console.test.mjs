// The web console (issue 15) in headless Chromium, against the console each host
// serves at `/`: the dev server (memory store) and the Worker in workerd
// (Miniflare; needs `make build-worker`). Elements are selected only through the
// DOM contract of the console (roles, labels, data-testids). Chromium comes from
// CHROMIUM_PATH or /usr/bin/chromium (`make setup`); a missing browser fails.
//
//   CONSOLE_TEST_HOSTS=dev,worker (default: both) runs only the named hosts.
//
// Screenshots go to target/console/ (the approval card per host, and a
// screenshot of the page whenever a test fails).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { assertBinaries, request, startDevServer, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { ledger, uid } from "./lib/flows.mjs";
import { startWorker, stopAllWorkers } from "./lib/worker.mjs";
import { assertBrowser, assertPngNotBlank, launchBrowser, openConsole, saveScreenshot } from "./lib/browser.mjs";
import { WAIT, amountCents, freshOrder, formatCents, conversation, status, errorBanner, approvalCard, button, threadOf, textOf, waitForText, send, refundUntilCard, refundArgs, refundResult, assertCardFocused, threadView, recordAssistantTexts, watchAgentPosts, browserFixture, EXPECTED_HTTP_ERRORS } from "./lib/console-page.mjs";

assertBinaries();
assertBrowser();

const TEST_TIMEOUT = 240_000;
const HOSTS = new Set((process.env.CONSOLE_TEST_HOSTS ?? "dev,worker").split(",").map((h) => h.trim()));
const only = (host) => ({ timeout: 900_000, skip: HOSTS.has(host) ? false : `CONSOLE_TEST_HOSTS excludes ${host}` });
// Words stream this far apart, so the page has time to show the text growing.
const TOKEN_DELAY_MS = "40";
const UUID = /^thread-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;


// ---------------------------------------------------------------------------
// Scenarios, for every host

/**
 * `host`: {name, start(vars) → server with .url}. `stopAll` stops its servers.
 */
function consoleScenarios(host) {
  const fx = browserFixture(host.name);
  let server;

  before(async () => {
    fx.browser = await launchBrowser();
    server = await host.start({ DEMO_TOKEN_DELAY_MS: TOKEN_DELAY_MS }, "console");
  });
  after(async () => {
    await fx.browser?.close();
    await host.stopAll();
  });

  test("refund approved: thread minted, text streams, tool call, focused card, one refund", { timeout: TEST_TIMEOUT }, async () => {
    await fx.withPage("approve", async ({ page }) => {
      const orderId = freshOrder();
      await openConsole(page, server.url);
      await recordAssistantTexts(page);
      const posts = watchAgentPosts(page);
      const { card, interruptId } = await refundUntilCard(page, orderId);

      // The thread id was minted into the URL before the first run.
      const threadId = threadOf(page);
      assert.match(threadId ?? "", UUID, `the URL carries no minted thread id: ${page.url()}`);
      assert.equal(JSON.parse(posts[0].postData()).threadId, threadId, "the first run used another thread id");
      const link = await page.getByTestId("thread-link").getAttribute("href");
      assert.equal(new URL(link, page.url()).searchParams.get("thread"), threadId, `thread link ${link}`);

      // The assistant's text streamed in: the page showed it growing.
      const texts = await page.evaluate(() => window.__assistantTexts);
      const grown = Object.values(texts).filter((seen) => seen.filter((t) => t.trim() !== "").length >= 3);
      assert.ok(grown.length > 0, `no assistant message was seen growing: ${JSON.stringify(texts)}`);
      const proposal = await textOf(conversation(page).locator('[data-testid="message"][data-role="assistant"]').first());
      assert.match(proposal, new RegExp(orderId));

      // The refund_order call with its arguments.
      assert.deepEqual(await refundArgs(page), { orderId, amountCents: amountCents(orderId), currency: "USD" });

      // The card, its heading focused, its message and countdown.
      await assertCardFocused(page);
      assert.match(await textOf(card.getByTestId("card-message")), new RegExp(`${formatCents(amountCents(orderId))} USD`));
      assert.match(await textOf(card.getByTestId("countdown")), /Expires in \d+:\d\d/);
      const view = await threadView(server, threadId);
      assert.equal(view.status, "interrupted");
      assert.deepEqual(view.pendingInterrupts.map((i) => i.id), [interruptId]);
      assert.equal((await ledger(server, orderId)).refunds, 0, "nothing is refunded before the approval");

      await button(card, "Approve").click();
      await card.waitFor({ state: "hidden", timeout: WAIT });
      await waitForText(status(page), /^\s*Idle\s*$/, "the status line after the resume");
      const account = await ledger(server, orderId);
      assert.equal(account.refunds, 1, JSON.stringify(account));
      assert.equal(account.refundedCents, amountCents(orderId));

      // The conversation shows the refund's result.
      const receipt = await refundResult(page);
      assert.equal(receipt.status, "refunded", JSON.stringify(receipt));
      assert.equal(receipt.orderId, orderId);
      assert.equal(receipt.amountCents, amountCents(orderId));
      await waitForText(conversation(page), new RegExp(`Done: ${formatCents(amountCents(orderId)).replace(".", "\\.")} was refunded for order ${orderId}`), "the conversation");
      assert.equal(await errorBanner(page).isHidden(), true, "an error banner after a clean approval");
      assert.deepEqual((await threadView(server, threadId)).pendingInterrupts, []);
    });
  });

  test("refund denied: the card goes, nothing is refunded", { timeout: TEST_TIMEOUT }, async () => {
    await fx.withPage("deny", async ({ page }) => {
      const orderId = freshOrder();
      await openConsole(page, server.url, { thread: uid("thread-console-deny") });
      const { card } = await refundUntilCard(page, orderId);
      await button(card, "Deny").click();
      await card.waitFor({ state: "hidden", timeout: WAIT });
      await waitForText(conversation(page), /the refund was declined/, "the conversation");
      await waitForText(status(page), /^\s*Idle\s*$/, "the status line");
      assert.equal((await ledger(server, orderId)).refunds, 0);
      assert.deepEqual((await threadView(server, threadOf(page))).pendingInterrupts, []);
    });
  });

  test("refund cancelled: the card goes, nothing is refunded, the conversation says so", { timeout: TEST_TIMEOUT }, async () => {
    await fx.withPage("cancel", async ({ page }) => {
      const orderId = freshOrder();
      const posts = watchAgentPosts(page);
      await openConsole(page, server.url, { thread: uid("thread-console-cancel") });
      const { card, interruptId } = await refundUntilCard(page, orderId);
      const sent = posts.length;
      await button(card, "Cancel").click();
      await card.waitFor({ state: "hidden", timeout: WAIT });
      await waitForText(conversation(page), /the refund was cancelled/, "the conversation");
      await waitForText(status(page), /^\s*Idle\s*$/, "the status line");
      const resume = JSON.parse(posts[sent].postData()).resume;
      assert.deepEqual(resume, [{ interruptId, status: "cancelled" }], "Cancel sends a cancelled resume");
      assert.equal((await ledger(server, orderId)).refunds, 0);
      assert.deepEqual((await threadView(server, threadOf(page))).pendingInterrupts, []);
    });
  });

  test("an expired approval: countdown reaches Expired, Approve shows INTERRUPT_EXPIRED, the page keeps working", { timeout: TEST_TIMEOUT }, async () => {
    const shortLived = await host.start({ DEMO_INTERRUPT_TTL_SECS: "3" }, "console-ttl");
    await fx.withPage(
      "expired",
      async ({ page }) => {
        const orderId = freshOrder();
        await openConsole(page, shortLived.url, { thread: uid("thread-console-expired") });
        const { card } = await refundUntilCard(page, orderId);
        const countdown = card.getByTestId("countdown");
        assert.match(await textOf(countdown), /Expires in \d+:\d\d|Expired/);
        await waitForText(countdown, /^\s*Expired\s*$/, "the countdown");
        const view = await threadView(shortLived, threadOf(page));
        const expiresAt = Date.parse(view.pendingInterrupts[0].expiresAt);
        await waitFor(() => Date.now() > expiresAt + 500, { timeoutMs: WAIT, what: "the interrupt's expiry" });

        const approve = button(card, "Approve");
        assert.equal(await approve.isEnabled(), true, "buttons stay enabled after expiry: the server decides");
        await approve.click();
        const banner = errorBanner(page);
        await banner.waitFor({ state: "visible", timeout: WAIT });
        await waitForText(banner, /INTERRUPT_EXPIRED/, "the error banner");
        // The page is not broken: the card stays with the error, nothing ran.
        await card.waitFor({ state: "visible", timeout: WAIT });
        await waitForText(card.getByTestId("card-error"), /INTERRUPT_EXPIRED/, "the card error");
        assert.doesNotMatch(await textOf(status(page)), /Running/);
        assert.equal((await ledger(shortLived, orderId)).refunds, 0);
        await button(banner, "Dismiss").click();
        await banner.waitFor({ state: "hidden", timeout: WAIT });
        await page.getByLabel("Message", { exact: true }).waitFor({ state: "visible" });
      },
      { allow: EXPECTED_HTTP_ERRORS },
    );
  });

  test("reload mid-flow: the card, messages and state come back; approving after the reload refunds once", { timeout: TEST_TIMEOUT }, async () => {
    await fx.withPage("reload", async ({ page }) => {
      const orderId = freshOrder();
      await openConsole(page, server.url);
      const { card, interruptId } = await refundUntilCard(page, orderId);
      const threadId = threadOf(page);
      assert.match(threadId ?? "", UUID);
      const texts = async (role) =>
        (await conversation(page).locator(`[data-testid="message"][data-role="${role}"]`).allTextContents()).map((t) => t.trim());
      const userBefore = await texts("user");
      const assistantBefore = await texts("assistant");
      assert.ok(userBefore.some((t) => t.includes(`Refund order ${orderId}`)), JSON.stringify(userBefore));

      await page.reload({ waitUntil: "load" });
      assert.equal(threadOf(page), threadId, "the reload kept the thread");
      await card.waitFor({ state: "visible", timeout: WAIT });
      assert.equal(await card.getAttribute("data-interrupt-id"), interruptId, "the same interrupt after the reload");
      await waitForText(status(page), /^\s*Waiting for approval\s*$/, "the status line after the reload");
      await waitFor(async () => (await texts("user")).length === userBefore.length, { timeoutMs: WAIT, what: "the user messages" });
      assert.deepEqual(await texts("user"), userBefore);
      const assistantAfter = await texts("assistant");
      for (const text of assistantBefore.filter((t) => t !== "")) {
        assert.ok(assistantAfter.includes(text), `assistant message lost in the reload: ${text}\nafter: ${JSON.stringify(assistantAfter)}`);
      }
      assert.deepEqual(await refundArgs(page), { orderId, amountCents: amountCents(orderId), currency: "USD" });
      const view = await threadView(server, threadId);
      const shownState = JSON.parse(await textOf(page.getByTestId("state")));
      assert.deepEqual(shownState, view.state, "the State panel shows the thread's state");
      assert.equal(shownState.order?.orderId, orderId, JSON.stringify(shownState));

      await button(card, "Approve").click();
      await card.waitFor({ state: "hidden", timeout: WAIT });
      await waitForText(conversation(page), new RegExp(`refunded for order ${orderId}`), "the conversation");
      assert.equal((await ledger(server, orderId)).refunds, 1);
    });
  });

  test("a schema violation is blocked in the page; a valid lower amount is refunded", { timeout: TEST_TIMEOUT }, async () => {
    await fx.withPage("schema", async ({ page }) => {
      const orderId = freshOrder();
      const paid = amountCents(orderId);
      const posts = watchAgentPosts(page);
      await openConsole(page, server.url, { thread: uid("thread-console-schema") });
      const { card, interruptId } = await refundUntilCard(page, orderId);
      const amount = card.getByLabel("amountCents", { exact: true });
      assert.equal(await amount.getAttribute("type"), "number");
      assert.equal(await amount.getAttribute("max"), String(paid));

      await amount.fill("99999");
      const sent = posts.length;
      await button(card, "Approve").click();
      const cardError = card.getByTestId("card-error");
      await cardError.waitFor({ state: "visible", timeout: WAIT });
      assert.notEqual((await textOf(cardError)).trim(), "", "the card error is empty");
      await waitFor(async () => (await amount.getAttribute("aria-invalid")) === "true", { timeoutMs: WAIT, what: "amountCents aria-invalid" });
      const describedBy = await amount.getAttribute("aria-describedby");
      assert.ok(describedBy, "the invalid field has no aria-describedby");
      const message = await page.evaluate(
        (ids) => ids.split(/\s+/).map((id) => document.getElementById(id)?.textContent ?? "").join(" "),
        describedBy,
      );
      assert.notEqual(message.trim(), "", "aria-describedby points at no message");
      // Nothing left the page, nothing changed on the server.
      await page.waitForTimeout(1_000);
      assert.equal(posts.length, sent, `the invalid answer was sent: ${posts.slice(sent).map((r) => r.postData()).join("\n")}`);
      assert.equal((await ledger(server, orderId)).refunds, 0);
      const view = await threadView(server, threadOf(page));
      assert.equal(view.status, "interrupted");
      assert.deepEqual(view.pendingInterrupts.map((i) => i.id), [interruptId]);
      assert.equal(await card.isVisible(), true);

      // A valid, lower amount goes through and is what gets refunded.
      const lower = 500;
      await amount.fill(String(lower));
      await button(card, "Approve").click();
      await card.waitFor({ state: "hidden", timeout: WAIT });
      const resume = JSON.parse(posts[sent].postData()).resume;
      assert.deepEqual(resume, [
        { interruptId, status: "resolved", payload: { approved: true, editedArgs: { orderId, amountCents: lower, currency: "USD" } } },
      ]);
      await waitForText(conversation(page), new RegExp(`Done: ${formatCents(lower).replace(".", "\\.")} was refunded for order ${orderId}`), "the conversation");
      const account = await ledger(server, orderId);
      assert.equal(account.refunds, 1, JSON.stringify(account));
      assert.equal(account.refundedCents, lower, JSON.stringify(account));
    });
  });

  test("a screenshot of the approval card is not blank", { timeout: TEST_TIMEOUT }, async () => {
    await fx.withPage("screenshot", async ({ page }) => {
      const orderId = freshOrder();
      await openConsole(page, server.url, { thread: uid("thread-console-shot") });
      const { card } = await refundUntilCard(page, orderId);
      await waitForText(card.getByTestId("countdown"), /Expires in/, "the countdown");
      // The card's text is rendered (laid out, visible) ...
      const heading = card.getByRole("heading", { name: "Approval needed", exact: true });
      await heading.waitFor({ state: "visible" });
      const box = await heading.boundingBox();
      assert.ok(box && box.width > 0 && box.height > 0, `heading box ${JSON.stringify(box)}`);
      const shown = await card.innerText();
      for (const part of ["Approval needed", orderId, "Approve", "Deny", "Cancel"]) {
        assert.ok(shown.includes(part), `the card does not show ${part}: ${shown}`);
      }
      // ... and the pixels are not blank.
      const { file, png } = await saveScreenshot(card, `approval-card-${host.name}`);
      const stats = assertPngNotBlank(png, { what: file });
      assert.ok(stats.width >= 200 && stats.height >= 100, `a tiny card: ${JSON.stringify(stats)}`);
    });
  });

  test("phone width (375×740): the card is usable and nothing scrolls sideways", { timeout: TEST_TIMEOUT }, async () => {
    await fx.withPage(
      "phone",
      async ({ page }) => {
        const orderId = freshOrder();
        const scrollWidth = () => page.evaluate(() => document.scrollingElement.scrollWidth);
        await openConsole(page, server.url, { thread: uid("thread-console-phone") });
        assert.ok((await scrollWidth()) <= 375, `empty page scrollWidth ${await scrollWidth()}`);
        const { card } = await refundUntilCard(page, orderId);
        await refundArgs(page);
        assert.ok((await scrollWidth()) <= 375, `scrollWidth ${await scrollWidth()} with the card`);
        const within = async (locator, what) => {
          await locator.scrollIntoViewIfNeeded();
          const b = await locator.boundingBox();
          assert.ok(b && b.width > 0 && b.height > 0, `${what} has no box`);
          assert.ok(b.x >= 0 && b.x + b.width <= 375 + 0.5, `${what} sticks out: ${JSON.stringify(b)}`);
        };
        await within(card, "the card");
        for (const name of ["Approve", "Deny", "Cancel"]) await within(button(card, name), name);
        const amount = card.getByLabel("amountCents", { exact: true });
        await within(amount, "amountCents");
        await amount.fill("700");
        await button(card, "Approve").click();
        await card.waitFor({ state: "hidden", timeout: WAIT });
        await waitForText(conversation(page), new RegExp(`refunded for order ${orderId}`), "the conversation");
        await refundResult(page);
        assert.ok((await scrollWidth()) <= 375, `scrollWidth ${await scrollWidth()} after the refund`);
        const account = await ledger(server, orderId);
        assert.equal(account.refunds, 1);
        assert.equal(account.refundedCents, 700);
      },
      { viewport: { width: 375, height: 740 } },
    );
  });
}

// ---------------------------------------------------------------------------
// Hosts

describe("console on the dev server", only("dev"), () => {
  consoleScenarios({
    name: "dev",
    start: (vars, label) => startDevServer({ label, env: { HANDOFF_STORE: "memory", ...vars } }),
    stopAll: stopAllServers,
  });
});

describe("console on the Worker (workerd)", only("worker"), () => {
  consoleScenarios({
    name: "worker",
    start: (vars, label) => startWorker({ label, vars }),
    stopAll: stopAllWorkers,
  });
});

// ---------------------------------------------------------------------------
// Dev server: api-key auth, the console on another origin (CORS)

describe("console on another origin: api-key auth and CORS (dev server)", only("dev"), () => {
  const fx = browserFixture("dev-cors");
  const apiKey = `console-${uid("key")}`;
  let api; // the Handoff endpoint, HANDOFF_AUTH=api-key
  let site; // the second origin serving the console

  before(async () => {
    fx.browser = await launchBrowser();
    site = await startDevServer({ label: "console-site", env: { HANDOFF_STORE: "memory" } });
    api = await startDevServer({
      label: "console-api",
      env: {
        HANDOFF_STORE: "memory",
        HANDOFF_AUTH: "api-key",
        // Roles only matter with DEMO_APPROVER_ABOVE_CENTS (unset here); the owner may answer.
        HANDOFF_API_KEYS: `acme/console+approver=${apiKey}`,
        HANDOFF_CORS_ORIGINS: new URL(site.url).origin,
      },
    });
  });
  after(async () => {
    await fx.browser?.close();
    await stopAllServers();
  });

  test("without a token UNAUTHENTICATED; with the key in Access token the run and approval work; the key stays in sessionStorage", { timeout: TEST_TIMEOUT }, async () => {
    await fx.withPage(
      "cors",
      async ({ page }) => {
        const orderId = freshOrder();
        const auth = { authorization: `Bearer ${apiKey}` };
        const posts = watchAgentPosts(page);
        await openConsole(page, site.url, { endpoint: api.url });
        assert.equal(new URL(page.url()).origin, new URL(site.url).origin);

        // No token: the server's 401 shows as an error banner.
        await send(page, `Refund order ${orderId}`);
        const banner = errorBanner(page);
        await banner.waitFor({ state: "visible", timeout: WAIT });
        await waitForText(banner, /UNAUTHENTICATED/, "the error banner");
        assert.ok(posts.length >= 1 && posts.every((r) => r.url().startsWith(api.url)), "the run did not go to the endpoint");
        await button(banner, "Dismiss").click();
        await banner.waitFor({ state: "hidden", timeout: WAIT });

        // The key, entered in the Connection panel.
        const connection = page.getByTestId("connection");
        if ((await connection.getAttribute("open")) === null) await connection.locator("summary").click();
        const endpointField = page.getByLabel("Endpoint", { exact: true });
        assert.equal((await endpointField.inputValue()).replace(/\/$/, ""), api.url);
        const tokenField = page.getByLabel("Access token", { exact: true });
        assert.equal(await tokenField.getAttribute("type"), "password");
        await tokenField.fill(apiKey);
        await button(page, "Save").click();
        const tokenKey = `handoff.token@${new URL(api.url).origin}`;
        await waitFor(async () => (await page.evaluate((key) => sessionStorage.getItem(key), tokenKey)) === apiKey, {
          timeoutMs: WAIT,
          what: "the token in sessionStorage",
        });

        const sent = posts.length;
        const { card } = await refundUntilCard(page, orderId);
        const headers = await posts[sent].allHeaders();
        assert.equal(headers.authorization, `Bearer ${apiKey}`);
        const threadId = threadOf(page);
        assert.equal((await threadView(api, threadId, auth)).status, "interrupted");
        await button(card, "Approve").click();
        await card.waitFor({ state: "hidden", timeout: WAIT });
        await waitForText(conversation(page), new RegExp(`refunded for order ${orderId}`), "the conversation");
        const account = await request(`${api.url}/demo/orders/${orderId}`, { headers: auth });
        assert.equal(account.status, 200, account.text);
        assert.equal(account.json.refunds, 1);

        // The key lives in sessionStorage only: not in localStorage, not in the URL.
        const storage = await page.evaluate((key) => ({
          session: sessionStorage.getItem(key),
          local: JSON.stringify(Object.fromEntries(Object.entries(localStorage))),
          href: location.href,
          link: document.querySelector('[data-testid="thread-link"]')?.href ?? "",
        }), tokenKey);
        assert.equal(storage.session, apiKey);
        assert.ok(!storage.local.includes(apiKey), `the key is in localStorage: ${storage.local}`);
        assert.ok(!storage.href.includes(apiKey) && !page.url().includes(apiKey), `the key is in the URL: ${storage.href}`);
        assert.ok(!storage.link.includes(apiKey), `the key is in the thread link: ${storage.link}`);
        assert.ok(!storage.href.includes(encodeURIComponent(apiKey)), "the key is in the URL (encoded)");
      },
      { allow: EXPECTED_HTTP_ERRORS },
    );
  });

  // Before, the token was one sessionStorage entry sent to whatever ?endpoint= named: a
  // link to the console with another origin's endpoint collected it on load.
  test("a token saved for one endpoint is never sent to another origin named in ?endpoint=", { timeout: TEST_TIMEOUT }, async () => {
    const seen = [];
    const trap = http.createServer((req, res) => {
      seen.push({ url: req.url, authorization: req.headers.authorization ?? null });
      res.writeHead(404, { "content-type": "application/json", "access-control-allow-origin": "*" });
      res.end(JSON.stringify({ code: "THREAD_NOT_FOUND", message: "no such thread" }));
    });
    await new Promise((r) => trap.listen(0, "127.0.0.1", r));
    const trapUrl = `http://127.0.0.1:${trap.address().port}`;
    try {
      await fx.withPage(
        "token-origin",
        async ({ page }) => {
          await openConsole(page, site.url, { endpoint: api.url });
          const connection = page.getByTestId("connection");
          if ((await connection.getAttribute("open")) === null) await connection.locator("summary").click();
          await page.getByLabel("Access token", { exact: true }).fill(apiKey);
          await button(page, "Save").click();
          const tokenKey = `handoff.token@${new URL(api.url).origin}`;
          await waitFor(async () => (await page.evaluate((key) => sessionStorage.getItem(key), tokenKey)) === apiKey, {
            timeoutMs: WAIT,
            what: "the token saved for the endpoint",
          });
          // The same tab opens a link naming another endpoint (and a thread, so it loads at once).
          await openConsole(page, site.url, { endpoint: trapUrl, thread: "thread-lure" });
          await waitFor(async () => seen.length > 0, { timeoutMs: WAIT, what: "the page to call the other endpoint" });
          assert.deepEqual(seen.map((r) => r.authorization), seen.map(() => null), JSON.stringify(seen));
          assert.equal(await page.getByLabel("Access token", { exact: true }).inputValue(), "");
          // Back on the saved endpoint, its token is there again.
          await openConsole(page, site.url, { endpoint: api.url });
          assert.equal(await page.getByLabel("Access token", { exact: true }).inputValue(), apiKey);
        },
        { allow: [...EXPECTED_HTTP_ERRORS, /thread-lure|THREAD_NOT_FOUND|404/] },
      );
    } finally {
      await new Promise((r) => trap.close(r));
    }
  });
});
