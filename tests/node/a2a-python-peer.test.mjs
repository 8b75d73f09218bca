// Issue 51: a second A2A peer, the official Python SDK (`a2a-sdk`, pinned in
// tests/python/requirements.txt, installed by `make python-peer` into target/python-peer/venv).
// tests/python/a2a_peer.py resolves the dev server's card and, over its JSON-RPC interface,
// sends a refund (input-required), answers it (completed), then sends a streamed message;
// it prints what it saw and this test checks it, and the ledger: one refund.
// Skipped only when the venv is missing and PyPI cannot be reached (an offline machine).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { ledger } from "./lib/flows.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const PYTHON = path.join(REPO, "target/python-peer/venv/bin/python");
const INSTALLED = path.join(REPO, "target/python-peer/venv/.installed");
const PEER = path.join(REPO, "tests/python/a2a_peer.py");
const KEY = "python-peer-key-0123456789";

/** Why the test cannot run here, or null: no venv is an error unless PyPI is unreachable. */
async function unavailable() {
  if (fs.existsSync(INSTALLED)) return null;
  const pypi = await fetch("https://pypi.org/simple/a2a-sdk/", { signal: AbortSignal.timeout(10_000) }).catch(() => null);
  if (!pypi) return "PyPI is unreachable and target/python-peer/venv is missing (run `make python-peer` online)";
  throw new Error(`${INSTALLED} not found: run \`make python-peer\` (installs a2a-sdk from tests/python/requirements.txt)`);
}

const skip = await unavailable();

describe("the official Python a2a-sdk as an A2A peer (dev server)", { skip: skip ?? false, timeout: 120_000 }, () => {
  let server;
  before(async () => {
    server = await startDevServer({
      label: "a2a-python-peer",
      env: { HANDOFF_AUTH: "api-key", HANDOFF_API_KEYS: `acme/alice=${KEY}` },
    });
  });
  after(stopAllServers);

  test("send, input-required, answer, completed (one refund); a streamed send", async () => {
    const orderId = `P${Math.floor(5000 + Math.random() * 4999)}`;
    const { stdout } = await promisify(execFile)(PYTHON, [PEER, server.url, orderId, KEY], { timeout: 90_000 })
      .catch((err) => assert.fail(`a2a_peer.py failed: ${err.stderr || err.message}`));
    const seen = JSON.parse(stdout);
    assert.equal(seen.card.name, "refund-demo");
    assert.deepEqual(seen.card.interfaces, [{ url: `${server.url}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }]);

    assert.equal(seen.asked.state, "TASK_STATE_INPUT_REQUIRED", stdout);
    assert.equal(seen.interrupt.reason, "tool_call");
    assert.match(seen.interrupt.interruptId, /^int-/);
    assert.deepEqual(seen.interrupt.responseSchema.required, ["approved"]);
    assert.equal(seen.answered.id, seen.asked.id, "the answer went to the same task");
    assert.equal(seen.answered.state, "TASK_STATE_COMPLETED", stdout);
    assert.match(seen.answered.artifactText, new RegExp(`refunded for order ${orderId}`));
    assert.equal((await ledger(server, orderId, { authorization: `Bearer ${KEY}` })).refunds, 1, "one refund");

    const kinds = seen.stream.map((e) => (e.state ? `${e.kind}:${e.state}` : e.kind));
    assert.equal(kinds[0], "task", kinds.join(","));
    assert.equal(kinds[1], "status_update:TASK_STATE_WORKING", kinds.join(","));
    assert.ok(kinds.includes("artifact_update"), kinds.join(","));
    assert.equal(kinds.at(-1), "status_update:TASK_STATE_COMPLETED", kinds.join(","));
    assert.match(seen.stream.filter((e) => e.text).map((e) => e.text).join(""), /refund/i);
  });
});
