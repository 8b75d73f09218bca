// MCP tools (issue 39) on Lambda: agent-lambda under `cargo lambda watch` on moto's
// DynamoDB runs the flows of lib/mcp-flows.mjs (reference server-everything, our counting
// server on the official SDK, a scripted model stand-in).
import { assertBinaries } from "./lib/devserver.mjs";
import { startLambda, startMoto, stopAll } from "./lib/lambda.mjs";
import { describeMcpHost } from "./lib/mcp-flows.mjs";
import { describeMcpPolicy } from "./lib/mcp-policy.mjs";

assertBinaries();

describeMcpHost("MCP tools on Lambda (cargo lambda watch + moto_server)", {
  timeout: 900_000,
  start: async (env) => {
    const moto = await startMoto();
    return startLambda({ moto, table: `handoff_mcp_${Date.now()}`, label: "lambda-mcp", env });
  },
  stop: stopAll,
});

describeMcpPolicy("MCP approvals on Lambda (HANDOFF_AUTH=api-key)", {
  timeout: 900_000,
  start: async (env) => {
    const moto = await startMoto();
    return startLambda({ moto, table: `handoff_mcp_policy_${Date.now()}`, label: "lambda-mcp-policy", env });
  },
  stop: stopAll,
});
