// Issue 52: the demo agent served as an MCP server (POST /mcp) on the dev server: the official
// @modelcontextprotocol/sdk client on the session revision (list, call, a run waiting for an
// approver, polled by threadId), and 2026-07-28's input_required / retry over raw JSON-RPC
// (accept → one refund, decline → none, a replay → no second refund, two racing retries → one).
import { after, before, describe, test } from "node:test";
import { startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { ledger } from "./lib/flows.mjs";
import {
  assertAcceptOnceThenReplay,
  assertDecline,
  assertDiscoverAndList,
  assertForgedStateRunsNothing,
  assertRacingRetries,
  assertSdkListAndCall,
  assertSdkWaitsThenPolls,
} from "./lib/mcp-server-flows.mjs";

const orderId = () => `A${Math.floor(1000 + Math.random() * 8999)}`;

describe("MCP server on the dev server", { timeout: 180_000 }, () => {
  let host;
  before(async () => {
    const server = await startDevServer({ label: "mcp-server" });
    host = { url: server.url, ledger: (order) => ledger(server, order) };
  });
  after(stopAllServers);

  test("SDK client (2025-11-25): list and call", async () => assertSdkListAndCall(host));
  test("SDK client: a run waiting for an approver, answered elsewhere, polled by threadId", async () =>
    assertSdkWaitsThenPolls(host, orderId()));
  test("2026-07-28: server/discover, tools/list, version and header errors", async () =>
    assertDiscoverAndList(host));
  test("2026-07-28: accept → exactly one refund; a replayed retry → no second", async () =>
    assertAcceptOnceThenReplay(host, orderId()));
  test("2026-07-28: decline → no refund", async () => assertDecline(host, orderId()));
  test("2026-07-28: two racing retries → one refund", async () => assertRacingRetries(host, orderId()));
  test("2026-07-28: a forged or misapplied requestState runs nothing", async () =>
    assertForgedStateRunsNothing(host, orderId()));
});
