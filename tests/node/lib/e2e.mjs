// Helpers shared by the e2e-*.test.mjs files (dev-server processes, official client).

import { after } from "node:test";
import assert from "node:assert/strict";
import { startDevServer } from "./devserver.mjs";

export const TEST_TIMEOUT = 180_000;

/** Starts servers for a suite and stops them in its `after` hook. */
export function suiteServers() {
  const servers = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });
  return {
    servers,
    async start(opts) {
      const s = await startDevServer(opts);
      servers.push(s);
      return s;
    },
  };
}

export function assertApiError(res, status, code, what = "") {
  assert.equal(res.status, status, `${what}: expected ${status} ${code}, got ${res.status} ${res.text}`);
  assert.match(res.headers["content-type"] ?? "", /^application\/json/, `${what}: error body must be JSON`);
  assert.ok(res.json, `${what}: body is not JSON: ${res.text}`);
  assert.equal(res.json.code, code, `${what}: ${res.text}`);
  assert.equal(typeof res.json.message, "string", `${what}: message must be a string`);
  assert.ok(res.json.message.length > 0, `${what}: empty message`);
  assert.doesNotMatch(res.text, /^(id|data):/, `${what}: a stream started before the error`);
}

export const toolResults = (events) => events.filter((e) => e.type === "TOOL_CALL_RESULT");
