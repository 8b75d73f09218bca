// The web console's files as every host serves them: the bytes `make console` built into
// shared/handoff-console/assets, with their content types, revalidation and (on the native
// hosts) the deflate coding and the content security policy.
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { inflateSync } from "node:zlib";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const CONSOLE_ASSETS = path.resolve(here, "../../../shared/handoff-console/assets");

const FILES = [
  ["/", "index.html", "text/html"],
  ["/console/app.js", "console/app.js", "text/javascript"],
  ["/console/app.css", "console/app.css", "text/css"],
];

/** A raw GET (no automatic decompression, unlike fetch). */
export function rawGet(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
  });
}

/**
 * Checks `base` serves the console. `native`: the dev server and Lambda (the embedded copy:
 * deflate for browsers, plain otherwise, a CSP); the Worker's come from Workers static assets.
 */
export async function assertConsoleServed(base, { native = true } = {}) {
  for (const [route, file, type] of FILES) {
    const expected = fs.readFileSync(path.join(CONSOLE_ASSETS, file));
    const plain = await rawGet(`${base}${route}`);
    assert.equal(plain.status, 200, `${route}: ${plain.body}`);
    assert.ok(plain.headers["content-type"]?.startsWith(type), `${route}: ${plain.headers["content-type"]}`);
    assert.ok(plain.headers.etag, `${route} has an ETag`);
    const again = await rawGet(`${base}${route}`, { "if-none-match": plain.headers.etag });
    assert.equal(again.status, 304, `${route} revalidates`);
    if (!native) {
      assert.ok(plain.body.equals(expected), `${route} is the built ${file}`);
      continue;
    }
    assert.equal(plain.headers["content-encoding"], undefined);
    assert.ok(plain.body.equals(expected), `${route} is the built ${file}`);
    assert.match(plain.headers["content-security-policy"] ?? "", /script-src 'self'/);
    assert.equal(plain.headers["x-content-type-options"], "nosniff");
    const browser = await rawGet(`${base}${route}`, { "accept-encoding": "gzip, deflate, br, zstd" });
    assert.equal(browser.headers["content-encoding"], "deflate", route);
    assert.ok(inflateSync(browser.body).equals(expected), `${route} inflates to the built ${file}`);
  }
}
