// Issue 52 on AWS Lambda: the demo's agent-lambda under `cargo lambda watch` (response
// streaming) with its DynamoDB store on moto, served as an MCP server at POST /mcp and driven
// by the official @modelcontextprotocol/sdk client and inspector-cli through the same flows as
// the dev server (mcp-server.test.mjs). Three instances: a tools/call's stream stays open on
// one while the client's answer to its elicitation (twice, when it races) reaches others.
import { after, before, describe } from "node:test";
import { assertBinaries } from "./lib/devserver.mjs";
import { mcpHostSuite } from "./lib/mcp-host-suite.mjs";
import { startLambdaHost, stopLambdaHost } from "./lib/served-hosts.mjs";

const TIMEOUT = 900_000;
// Nine random digits: a collision between two tests of a run (one ledger) would read as a
// refund that should not be there.
const orderId = () => `L${String(Math.floor(Math.random() * 1e9)).padStart(9, "0")}`;

assertBinaries();

describe("MCP server on AWS Lambda (cargo lambda watch + moto_server)", { timeout: TIMEOUT }, () => {
  let served;
  before(async () => {
    served = await startLambdaHost({
      key: "lambda-mcp-key-0123456789",
      table: `handoff_mcp_server_${Date.now()}`,
      label: "agent-lambda (mcp server)",
      concurrency: 3,
    });
  });
  after(() => stopLambdaHost(served));

  mcpHostSuite(() => served.host, orderId, TIMEOUT);
});
