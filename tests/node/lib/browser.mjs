// Headless Chromium for the web console tests (issue 15), through playwright-core.
//
//   CHROMIUM_PATH=<chromium binary> (default /usr/bin/chromium; `make setup`
//   installs it with apt-get install chromium)
//
// * launchBrowser() starts one headless Chromium (--no-sandbox). A missing
//   browser is an error naming `make setup`: these tests never skip.
// * openConsole(page, baseUrl, {thread, endpoint}) opens the console at
//   `${baseUrl}/?thread=…&endpoint=…` and waits for its composer.
// * watchPage(page) records uncaught page errors and console errors;
//   `assertClean({allow})` fails the test on any of them (console errors
//   matching `allow` excepted). Chromium's own log lines for non-2xx answers
//   ("Failed to load resource: the server responded with a status of …", e.g.
//   the 404 of a new thread's GET /threads/{id}) are not the page's errors and
//   are kept apart in `httpErrors`.
// * saveScreenshot(locator, name) writes target/console/<name>.png and returns
//   {file, png}; assertPngNotBlank(png) decodes it with node:zlib (IHDR, IDAT,
//   filters undone) and asserts many distinct colours over many rows.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO_DIR = path.resolve(here, "../../..");
export const SCREENSHOT_DIR = path.join(REPO_DIR, "target", "console");
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/** Throws a clear error when Chromium is not installed. */
export function assertBrowser() {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM_PATH}. Install it with \`make setup\` ` +
        `(apt-get install chromium), or point CHROMIUM_PATH at a Chromium binary.`,
    );
  }
}

/** One headless Chromium. Close it with `browser.close()` in an `after` hook. */
export async function launchBrowser() {
  assertBrowser();
  try {
    return await chromium.launch({ executablePath: CHROMIUM_PATH, args: ["--no-sandbox"], headless: true });
  } catch (err) {
    err.message = `could not launch Chromium (${CHROMIUM_PATH}); \`make setup\` installs it: ${err.message}`;
    throw err;
  }
}

/** The console's URL on `baseUrl` (a host's origin) with optional thread and endpoint params. */
export function consoleUrl(baseUrl, { thread, endpoint } = {}) {
  const url = new URL(`${baseUrl.replace(/\/$/, "")}/`);
  if (thread !== undefined) url.searchParams.set("thread", thread);
  if (endpoint !== undefined) url.searchParams.set("endpoint", endpoint);
  return url.toString();
}

/**
 * Opens the console and waits until it is usable (the **Message** box and the
 * **Send** button are there). Returns the Response of the navigation.
 */
export async function openConsole(page, baseUrl, { thread, endpoint, timeout = 30_000 } = {}) {
  const url = consoleUrl(baseUrl, { thread, endpoint });
  const res = await page.goto(url, { waitUntil: "load", timeout });
  assert.ok(res, `no response for ${url}`);
  assert.equal(res.status(), 200, `GET ${url} answered ${res.status()}`);
  await page.getByLabel("Message", { exact: true }).waitFor({ state: "visible", timeout });
  await page.getByRole("button", { name: "Send", exact: true }).waitFor({ state: "visible", timeout });
  return res;
}

/**
 * Records what goes wrong in `page`: uncaught exceptions (`pageerror`) and
 * `console.error` messages. Chromium's log lines for HTTP error statuses go to
 * `httpErrors` instead (the tests check the HTTP answers themselves).
 */
export function watchPage(page) {
  const pageErrors = [];
  const consoleErrors = [];
  const httpErrors = [];
  page.on("pageerror", (err) => pageErrors.push(err?.stack ?? String(err)));
  page.on("console", (msg) => {
    if (msg.type() !== "error") return;
    const where = msg.location()?.url ?? "";
    const line = `${msg.text()}${where ? ` (${where})` : ""}`;
    if (/^Failed to load resource: the server responded with a status of \d+/.test(msg.text())) {
      httpErrors.push(line);
      return;
    }
    consoleErrors.push(line);
  });
  return {
    pageErrors,
    consoleErrors,
    httpErrors,
    /** Fails on any uncaught page error, any 5xx answer, and console errors not matching `allow` (RegExp[]). */
    assertClean({ allow = [] } = {}) {
      assert.deepEqual(pageErrors, [], `uncaught errors in the page:\n${pageErrors.join("\n")}`);
      const serverErrors = httpErrors.filter((line) => /status of 5\d\d/.test(line));
      assert.deepEqual(serverErrors, [], `the page got server errors:\n${serverErrors.join("\n")}`);
      const unexpected = consoleErrors.filter((text) => !allow.some((re) => re.test(text)));
      assert.deepEqual(unexpected, [], `console errors in the page:\n${unexpected.join("\n")}`);
    },
  };
}

/** Screenshots `target` (a Locator or a Page) to target/console/<name>.png. Returns {file, png}. */
export async function saveScreenshot(target, name) {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  const png = await target.screenshot({ path: file, animations: "disabled" });
  return { file, png };
}

// ---------------------------------------------------------------------------
// PNG decoding (8-bit, non-interlaced: what Chromium writes)

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CHANNELS = { 0: 1, 2: 3, 4: 2, 6: 4 }; // gray, RGB, gray+alpha, RGBA

/** Decodes a PNG into {width, height, channels, pixels (Buffer, rows without filter bytes)}. */
export function decodePng(buf) {
  buf = Buffer.from(buf);
  assert.ok(buf.subarray(0, 8).equals(PNG_SIGNATURE), "not a PNG (bad signature)");
  let offset = 8;
  let header;
  const idat = [];
  while (offset < buf.length) {
    const length = buf.readUInt32BE(offset);
    const type = buf.toString("latin1", offset + 4, offset + 8);
    const data = buf.subarray(offset + 8, offset + 8 + length);
    offset += 12 + length;
    if (type === "IHDR") {
      header = {
        width: data.readUInt32BE(0),
        height: data.readUInt32BE(4),
        bitDepth: data[8],
        colorType: data[9],
        interlace: data[12],
      };
    } else if (type === "IDAT") {
      idat.push(data);
    } else if (type === "IEND") {
      break;
    }
  }
  assert.ok(header, "PNG without IHDR");
  assert.ok(idat.length > 0, "PNG without IDAT");
  const { width, height, bitDepth, colorType, interlace } = header;
  const channels = CHANNELS[colorType];
  assert.ok(channels && bitDepth === 8 && interlace === 0, `unsupported PNG: ${JSON.stringify(header)}`);
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  assert.equal(raw.length, height * (stride + 1), "PNG data length does not match its header");
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = pixels.subarray(y * stride, (y + 1) * stride);
    const prev = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : Buffer.alloc(stride);
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? row[x - channels] : 0; // left
      const b = prev[x]; // up
      const c = x >= channels ? prev[x - channels] : 0; // up-left
      let predictor;
      switch (filter) {
        case 0: predictor = 0; break;
        case 1: predictor = a; break;
        case 2: predictor = b; break;
        case 3: predictor = (a + b) >> 1; break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default:
          throw new Error(`PNG row ${y} has an unknown filter ${filter}`);
      }
      row[x] = (src[x] + predictor) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

/** Colour statistics of a decoded PNG: distinct colours, rows with more than one colour, share of the commonest colour. */
export function pngStats(buf) {
  const { width, height, channels, pixels } = decodePng(buf);
  const counts = new Map();
  let busyRows = 0;
  for (let y = 0; y < height; y++) {
    const rowColours = new Set();
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * channels;
      const key = pixels.toString("hex", i, i + channels);
      rowColours.add(key);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    if (rowColours.size > 1) busyRows += 1;
  }
  const dominant = Math.max(...counts.values());
  return { width, height, distinctColours: counts.size, busyRows, dominantShare: dominant / (width * height) };
}

/**
 * Asserts a screenshot shows something: many distinct colours (text is
 * antialiased), several rows with detail, and no single colour covering
 * (nearly) everything.
 */
export function assertPngNotBlank(buf, { minColours = 16, minBusyRows = 10, maxDominantShare = 0.995, what = "screenshot" } = {}) {
  const stats = pngStats(buf);
  const about = `${what}: ${JSON.stringify(stats)}`;
  assert.ok(stats.width > 0 && stats.height > 0, `empty image; ${about}`);
  assert.ok(stats.distinctColours >= minColours, `only ${stats.distinctColours} distinct colours; ${about}`);
  assert.ok(stats.busyRows >= minBusyRows, `only ${stats.busyRows} rows with detail; ${about}`);
  assert.ok(stats.dominantShare <= maxDominantShare, `one colour covers ${(stats.dominantShare * 100).toFixed(2)}%; ${about}`);
  return stats;
}
