// Issue 52: the demo agent served as an MCP server (POST /mcp) on the dev server: the official
// @modelcontextprotocol/sdk client on the session revision (list, call, a run waiting for an
// approver, polled by threadId; interrupts asked as server-initiated elicitation), and
// 2026-07-28's input_required / retry over raw JSON-RPC (accept → one refund, decline → none,
// a replay → no second refund, two racing retries → one); @modelcontextprotocol/inspector-cli
// for list and call.
import { after, before, describe, test } from "node:test";
import { makeDataDir, startDevServer, stopAllServers } from "./lib/devserver.mjs";
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
import {
  assertElicitAccept,
  assertElicitAnswerTwice,
  assertElicitAnsweredElsewhere,
  assertElicitDecline,
  assertElicitFourEyes,
  assertElicitTimesOut,
} from "./lib/mcp-elicit-flows.mjs";
import { assertInspectorListAndCall } from "./lib/mcp-inspector.mjs";

// Nine random digits: a collision between two tests of a run (one ledger) would read as a
// refund that should not be there.
const orderId = () => `A${String(Math.floor(Math.random() * 1e9)).padStart(9, "0")}`;
const hostOf = (server, headers) => ({ url: server.url, headers, ledger: (order) => ledger(server, order, headers) });

describe("MCP server on the dev server", { timeout: 180_000 }, () => {
  let host;
  before(async () => {
    host = hostOf(await startDevServer({ label: "mcp-server" }));
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
  test("inspector-cli: list and call", async () => assertInspectorListAndCall(host, orderId()));
});

describe("MCP session elicitation on the dev server (SDK client's elicitation handler)", { timeout: 180_000 }, () => {
  let host;
  let other;
  before(async () => {
    // Two processes on one SQLite file: an answer may reach either.
    const dataDir = makeDataDir();
    host = hostOf(await startDevServer({ label: "mcp-elicit-a", dataDir }));
    other = hostOf(await startDevServer({ label: "mcp-elicit-b", dataDir }));
  });
  after(stopAllServers);

  test("accept → the call answers with the result; exactly one refund", async () => {
    await assertElicitAccept(host, orderId());
  });
  test("decline → no refund", async () => assertElicitDecline(host, orderId()));
  test("the answer replayed → no second refund", async () => assertElicitAnswerTwice(host, orderId(), "replay"));
  test("the answer sent twice at once → one refund", async () => assertElicitAnswerTwice(host, orderId(), "race"));
  test("the answer lands on a second process sharing the SQLite file", async () =>
    assertElicitAnsweredElsewhere(host, other, orderId()));
});

describe("MCP session elicitation: bounded wait and four eyes", { timeout: 180_000 }, () => {
  const KEYS = { bob: "mcp-bob-key-0123456789", carol: "mcp-carol-key-0123456789" };
  const as = (who) => ({ authorization: `Bearer ${KEYS[who]}` });
  let server;
  let brief;
  before(async () => {
    server = await startDevServer({
      label: "mcp-elicit-policy",
      env: {
        HANDOFF_AUTH: "api-key",
        HANDOFF_API_KEYS: `acme/bob+approver=${KEYS.bob},acme/carol+approver=${KEYS.carol}`,
        DEMO_APPROVER_ABOVE_CENTS: "0",
      },
    });
    brief = hostOf(await startDevServer({ label: "mcp-elicit-brief", env: { HANDOFF_MCP_ELICIT_WAIT_MS: "2000" } }));
  });
  after(stopAllServers);

  test("no answer within the wait: waiting for an approver; the late answer refunds once, polled by threadId", async () =>
    assertElicitTimesOut(brief, orderId()));
  test("a requester is not asked to approve its own refund: waiting for an approver, then the outcome", async () =>
    assertElicitFourEyes(hostOf(server, as("bob")), hostOf(server, as("carol")), orderId()));
});
