// Issue 52 on Cloudflare Workers: the demo Worker (wasm) in workerd through Miniflare, state
// in Durable Objects and KV, served as an MCP server at POST /mcp and driven by the official
// @modelcontextprotocol/sdk client and inspector-cli through the same flows as the dev server
// (mcp-server.test.mjs).
import { after, before, describe } from "node:test";
import { assertBinaries } from "./lib/devserver.mjs";
import { mcpHostSuite } from "./lib/mcp-host-suite.mjs";
import { startWorkerHost, stopWorkerHost } from "./lib/served-hosts.mjs";

const TIMEOUT = 300_000;
// Nine random digits: a collision between two tests of a run (one ledger) would read as a
// refund that should not be there.
const orderId = () => `W${String(Math.floor(Math.random() * 1e9)).padStart(9, "0")}`;

assertBinaries();

describe("MCP server on Workers (workerd via Miniflare)", { timeout: TIMEOUT }, () => {
  let served;
  before(async () => {
    served = await startWorkerHost({ label: "mcp-server", key: "worker-mcp-key-0123456789" });
  });
  after(() => stopWorkerHost(served));

  mcpHostSuite(() => served.host, orderId, TIMEOUT);
});
