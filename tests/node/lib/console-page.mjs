// The console's page, driven through its DOM contract only (roles, labels, data-testids):
// what console*.test.mjs share. Demo order ids and amounts follow shared/handoff-demo.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { request, waitFor } from "./devserver.mjs";
import { SCREENSHOT_DIR, saveScreenshot, watchPage } from "./browser.mjs";

/** A generous bound for anything the page shows. */
export const WAIT = 60_000;
// ---------------------------------------------------------------------------
// Demo orders (shared/handoff-demo/src/orders.rs): every id of a letter and
// 2..11 digits exists, with a deterministic amount of at least 1000 cents.

export function amountCents(orderId) {
  if (orderId === "A1024") return 12_800;
  const seed = [...Buffer.from(orderId)].reduce((a, b) => a + b, 0);
  return 1_000 + ((seed * 7919) % 40_000);
}

/** A fresh order id per test, so ledgers never collide (the hosts outlive tests). */
export const freshOrder = () => `C${String(Math.floor(Math.random() * 1e9)).padStart(9, "0")}`;
export const formatCents = (c) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, "0")}`;

// ---------------------------------------------------------------------------
// Page helpers (contract selectors only)

export const conversation = (page) => page.getByTestId("conversation");
export const status = (page) => page.getByTestId("status");
export const errorBanner = (page) => page.getByTestId("error");
export const approvalCard = (page) => page.getByTestId("approval-card");
export const button = (scope, name) => scope.getByRole("button", { name, exact: true });
export const threadOf = (page) => new URL(page.url()).searchParams.get("thread");
export const refundCall = (page) => page.locator('[data-testid="tool-call"][data-tool-name="refund_order"]');

export async function textOf(locator) {
  return (await locator.textContent({ timeout: WAIT })) ?? "";
}

/** Waits until `locator`'s text matches `re`; returns the text. */
export async function waitForText(locator, re, what) {
  return waitFor(
    async () => {
      const t = await locator.textContent({ timeout: 1_000 });
      return t !== null && re.test(t) ? t : undefined;
    },
    { timeoutMs: WAIT, intervalMs: 100, what: `${what} to match ${re}` },
  );
}

/** Types `text` in **Message** and presses **Send**. */
export async function send(page, text) {
  const box = page.getByLabel("Message", { exact: true });
  await box.fill(text);
  const sendButton = button(page.getByTestId("composer"), "Send");
  await waitFor(() => sendButton.isEnabled(), { timeoutMs: WAIT, what: "Send to be enabled" });
  await sendButton.click();
}

/**
 * Sends "Refund order <orderId>" and waits for the approval card (the heading
 * focused, the status waiting). Returns the card locator and its interrupt id.
 */
export async function refundUntilCard(page, orderId) {
  await send(page, `Refund order ${orderId}`);
  const card = approvalCard(page);
  await card.waitFor({ state: "visible", timeout: WAIT });
  assert.equal(await card.count(), 1, "one pending interrupt, one card");
  await waitForText(card.getByTestId("card-message"), new RegExp(orderId), "the card message");
  await waitForText(status(page), /^\s*Waiting for approval\s*$/, "the status line");
  const interruptId = await card.getAttribute("data-interrupt-id");
  assert.ok(interruptId, "the card has no data-interrupt-id");
  return { card, interruptId };
}

/** The refund_order tool call's arguments, once they are complete JSON. */
export async function refundArgs(page) {
  const pre = refundCall(page).first().getByTestId("tool-args");
  return waitFor(
    async () => {
      try {
        const args = JSON.parse(await pre.textContent({ timeout: 1_000 }));
        return args?.currency ? args : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: WAIT, intervalMs: 100, what: "the refund_order arguments" },
  );
}

/** The refund receipt shown as the refund_order tool result. */
export async function refundResult(page) {
  const pre = page.locator('[data-testid="tool-call"][data-tool-name="refund_order"] [data-testid="tool-result"]').last();
  await pre.waitFor({ state: "visible", timeout: WAIT });
  return JSON.parse(await textOf(pre));
}

export async function assertCardFocused(page) {
  await page.waitForFunction(
    () => {
      const el = document.activeElement;
      return el?.tagName === "H2" && el.closest('[data-testid="approval-card"]') && el.textContent.trim() === "Approval needed";
    },
    undefined,
    { timeout: WAIT },
  );
}

export async function threadView(server, threadId, headers = {}) {
  const r = await request(`${server.url}/threads/${encodeURIComponent(threadId)}`, { headers });
  assert.equal(r.status, 200, `GET /threads/${threadId}: ${r.status} ${r.text}`);
  return r.json;
}

/** Records, in the page, every distinct text each assistant message shows. */
export async function recordAssistantTexts(page) {
  await page.evaluate(() => {
    window.__assistantTexts = {};
    const sample = () => {
      document.querySelectorAll('[data-testid="message"][data-role="assistant"]').forEach((li, i) => {
        const key = li.getAttribute("data-message-id") || `#${i}`;
        const seen = (window.__assistantTexts[key] ??= []);
        const text = li.textContent ?? "";
        if (seen.at(-1) !== text) seen.push(text);
      });
    };
    new MutationObserver(sample).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

/** Every request the page makes that posts to an `/agent` endpoint. */
export function watchAgentPosts(page) {
  const posts = [];
  page.on("request", (req) => {
    if (req.method() === "POST" && new URL(req.url()).pathname.endsWith("/agent")) posts.push(req);
  });
  return posts;
}

// ---------------------------------------------------------------------------
// Shared browser; one fresh context (storage, viewport) per test

export function browserFixture(hostName) {
  const fixture = { browser: undefined };
  /**
   * Runs `fn({page, context, watch})` in a fresh context. Afterwards the page
   * must have had no uncaught errors and no console errors except `allow`.
   * A failing test leaves target/console/failed-<host>-<name>.png.
   */
  fixture.withPage = async (name, fn, { viewport, allow = [] } = {}) => {
    const context = await fixture.browser.newContext(viewport ? { viewport } : {});
    context.setDefaultTimeout(WAIT);
    const page = await context.newPage();
    const watch = watchPage(page);
    const failed = `failed-${hostName}-${name}`;
    fs.rmSync(path.join(SCREENSHOT_DIR, `${failed}.png`), { force: true });
    try {
      await fn({ page, context, watch });
      watch.assertClean({ allow });
    } catch (err) {
      await saveScreenshot(page, failed).catch(() => {});
      const extra = [
        watch.pageErrors.length ? `page errors:\n${watch.pageErrors.join("\n")}` : "",
        watch.consoleErrors.length ? `console errors:\n${watch.consoleErrors.join("\n")}` : "",
      ].filter(Boolean);
      if (extra.length) err.message += `\n${extra.join("\n")}`;
      throw err;
    } finally {
      await context.close().catch(() => {});
    }
  };
  return fixture;
}

// What the app may log when a server answer it was provoked into on purpose fails.
export const EXPECTED_HTTP_ERRORS = [/\b(401|422)\b|UNAUTHENTICATED|INTERRUPT_EXPIRED/];
