// MCP tools (issue 39) on Workers: the agent-worker bundle in workerd (Miniflare) reaches
// the MCP servers through `fetch` and runs the flows of lib/mcp-flows.mjs (reference
// server-everything, our counting server on the official SDK, a scripted model stand-in).
import { describeMcpHost } from "./lib/mcp-flows.mjs";
import { describeMcpPolicy } from "./lib/mcp-policy.mjs";
import { startWorker, stopAllWorkers } from "./lib/worker.mjs";

describeMcpHost("MCP tools on Workers (workerd)", {
  timeout: 300_000,
  start: (vars) => startWorker({ vars, label: "worker-mcp" }),
  stop: stopAllWorkers,
});

describeMcpPolicy("MCP approvals on Workers (workerd, HANDOFF_AUTH=api-key)", {
  timeout: 300_000,
  start: (vars) => startWorker({ vars, label: "worker-mcp-policy" }),
  stop: stopAllWorkers,
});
