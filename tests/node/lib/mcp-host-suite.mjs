// The MCP server scenarios every serverless host runs (issue 52), one list for Lambda and
// workerd: the official @modelcontextprotocol/sdk client (list and call; an interrupt asked
// by server-initiated elicitation: accept → one refund, decline → none, the answer replayed
// → no second refund, sent twice at once → one), 2026-07-28 over raw JSON-RPC (the same
// four), and @modelcontextprotocol/inspector-cli for list and call. `served()` is the host.
import { test } from "node:test";
import { assertNeedsKey } from "./served-hosts.mjs";
import {
  assertAcceptOnceThenReplay,
  assertDecline,
  assertRacingRetries,
  assertSdkListAndCall,
} from "./mcp-server-flows.mjs";
import {
  assertElicitAccept,
  assertElicitAnswerTwice,
  assertElicitDecline,
} from "./mcp-elicit-flows.mjs";
import { assertInspectorListAndCall } from "./mcp-inspector.mjs";

/** Registers the scenarios; `orderId()` makes a fresh order id, `timeout` bounds each. */
export function mcpHostSuite(served, orderId, timeout) {
  const t = (name, fn) => test(name, { timeout }, fn);
  t("POST /mcp needs the key", () =>
    assertNeedsKey(served(), "/mcp", { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }));
  t("SDK client (2025-11-25): list and call", () => assertSdkListAndCall(served()));
  t("SDK elicitation: accept → exactly one refund", () => assertElicitAccept(served(), orderId()));
  t("SDK elicitation: decline → no refund", () => assertElicitDecline(served(), orderId()));
  t("SDK elicitation: the answer replayed → no second refund", () =>
    assertElicitAnswerTwice(served(), orderId(), "replay"));
  t("SDK elicitation: the answer sent twice at once → one refund", () =>
    assertElicitAnswerTwice(served(), orderId(), "race"));
  t("2026-07-28: accept → one refund; a replayed retry → no second", () =>
    assertAcceptOnceThenReplay(served(), orderId()));
  t("2026-07-28: decline → no refund", () => assertDecline(served(), orderId()));
  t("2026-07-28: two racing retries → one refund", () => assertRacingRetries(served(), orderId()));
  t("inspector-cli: list and call", () => assertInspectorListAndCall(served(), orderId()));
}
