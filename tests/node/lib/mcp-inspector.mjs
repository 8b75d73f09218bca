// @modelcontextprotocol/inspector-cli (npm devDependency) as a second MCP client: its CLI
// mode (`mcp-inspector-cli --cli URL --transport http --method …`, flags from its --help),
// run through npx against a host's /mcp. Host-agnostic: `host = {url, headers?, ledger}`.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TOOL } from "./mcp-server-flows.mjs";

// The CLI finds its own package.json through a path it checks against the working directory
// and imports relative to its module: run it from a directory whose parent holds a
// package.json (this one's, tests/node), so both resolve to the same file.
const CWD = path.dirname(fileURLToPath(import.meta.url));

/** Runs the inspector CLI against `host` with `args`; its JSON output. */
export function inspect(host, args) {
  const headers = Object.entries(host.headers ?? {}).flatMap(([k, v]) => ["--header", `${k}: ${v}`]);
  const argv = ["--no-install", "mcp-inspector-cli", "--cli", `${host.url}/mcp`, "--transport", "http", ...headers, ...args];
  return new Promise((resolve, reject) => {
    execFile("npx", argv, { cwd: CWD, timeout: 120_000, maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`inspector-cli ${args.join(" ")}: ${err.message}\n${stderr}\n${stdout}`));
      try {
        resolve(JSON.parse(stdout));
      } catch {
        reject(new Error(`inspector-cli printed no JSON: ${stdout}\n${stderr}`));
      }
    });
  });
}

/** List, a call that completes, and a refund call that waits for an approver. */
export async function assertInspectorListAndCall(host, orderId) {
  const listed = await inspect(host, ["--method", "tools/list"]);
  assert.deepEqual(listed.tools.map((t) => t.name), [TOOL], JSON.stringify(listed));
  assert.equal(listed.tools[0].inputSchema.properties.message.type, "string");
  const call = (message) =>
    inspect(host, ["--method", "tools/call", "--tool-name", TOOL, "--tool-arg", `message=${message}`]);
  const hello = await call("hello");
  assert.ok(!hello.isError, JSON.stringify(hello));
  assert.equal(hello.structuredContent.status, "completed", JSON.stringify(hello));
  assert.match(hello.content[0].text, /refund/i);
  const asked = await call(`Refund order ${orderId}`);
  assert.equal(asked.structuredContent.status, "input_required", JSON.stringify(asked));
  assert.match(asked.content[0].text, /waits for an approver/);
  assert.match(asked.content[0].text, new RegExp(orderId));
  assert.equal((await host.ledger(orderId)).refunds, 0, "the inspector cannot answer: nothing refunded");
}
