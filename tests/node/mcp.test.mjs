// MCP tools (issue 39) on the dev server: the demo's LLM mode offers the tools of the
// reference `@modelcontextprotocol/server-everything` (Streamable HTTP) and of a counting
// server on the official SDK, a scripted model stand-in calls them: listing, a call with
// arguments, structured content, an isError result, an approval-required tool called
// exactly once (a replayed resume does not call again), a session the server forgot, a
// server that is down (lib/mcp-flows.mjs); and a malformed setting that refuses to start.
// The same flows run on Lambda (lambda-mcp.test.mjs) and Workers (worker-mcp.test.mjs).
import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { describeMcpHost } from "./lib/mcp-flows.mjs";
import { describeMcpPolicy } from "./lib/mcp-policy.mjs";
import { llmEnv, standIn } from "./lib/model-standin.mjs";

const TIMEOUT = 180_000;

describeMcpHost("MCP tools on the dev server", {
  timeout: TIMEOUT,
  start: (env) => startDevServer({ label: "mcp", env }),
  stop: stopAllServers,
});

describeMcpPolicy("MCP approvals on the dev server (HANDOFF_AUTH=api-key)", {
  timeout: TIMEOUT,
  start: (env) => startDevServer({ label: "mcp-policy", env }),
  stop: stopAllServers,
});

describe("MCP settings on the dev server", { timeout: TIMEOUT }, () => {
  after(stopAllServers);

  test("a malformed HANDOFF_MCP_* setting refuses to start, naming the variable", async () => {
    const model = await standIn([]);
    const env = { ...llmEnv(model), HANDOFF_MCP_SERVERS: "everything=http://127.0.0.1:1/mcp" };
    await assert.rejects(startDevServer({ label: "mcp-bad", env, startTimeoutMs: 15_000 }), /HANDOFF_MCP_SERVERS: everything: .*https/);
    await model.close();
  });
});
