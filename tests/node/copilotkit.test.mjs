// The CopilotKit runtime protocol, driven by the REAL CopilotKit client
// (@copilotkit/core, the framework-neutral core behind CopilotKit's React hooks)
// pointed straight at a dev server's `/copilotkit` routes: no Node runtime between.
// The flows live in lib/copilotkit-flows.mjs; lambda.test.mjs and worker.test.mjs
// run the same flows against the Lambda function and the Worker.
//
//   cargo build -p dev-server -p handoff-tests
//   HANDOFF_BIN_DIR=<target/debug> node --test copilotkit.test.mjs
//
// Covered: discovery (`GET /info`, REST and single-route envelope), a run with
// streamed text ending in the refund approval interrupt, the interrupt answered
// through CopilotKit's interrupt state + `runAgent({resume})` (one refund),
// reconnect after a reload (`connect` re-presents history, state and the pending
// interrupt), joining a live run, and stop.

import { describe, test, before, after } from "node:test";
import { assertNoPanics } from "./lib/flows.mjs";
import { startDevServer, stopAllServers } from "./lib/devserver.mjs";
import {
  assertConnectJoinsLiveRun,
  assertConnectRejoinsByLastEventId,
  assertConnectToNewThreadIsEmpty,
  assertDiscovery,
  assertReconnectAfterReload,
  assertRestStopWhileStreaming,
  assertRunResolvedThroughInterruptApi,
  assertSingleRouteMode,
  assertStopAgentCancels,
  assertThreadStore,
  assertUnknownsRefused,
} from "./lib/copilotkit-flows.mjs";

const TEST_TIMEOUT = 180_000;

describe("CopilotKit runtime protocol with @copilotkit/core", { timeout: TEST_TIMEOUT }, () => {
  let server;
  let slow;

  before(async () => {
    server = await startDevServer({ label: "ck-dev" });
    slow = await startDevServer({ label: "ck-slow", env: { DEMO_TOKEN_DELAY_MS: "150" } });
  });

  after(async () => {
    for (const s of [server, slow]) if (s) assertNoPanics(s);
    await stopAllServers();
  });

  test("discovery: GET /info lists the agent in SSE mode and CopilotKit registers it", () => assertDiscovery(server));

  test("unknown agents and methods are JSON 4xx before any stream", () => assertUnknownsRefused(server));

  test("run: streamed text, the interrupt shown, resolved through the interrupt API, one refund", () =>
    assertRunResolvedThroughInterruptApi(server, "A1024"));

  test("reconnect after a reload: connect re-presents history, state and the pending interrupt", () =>
    assertReconnectAfterReload(server, "B2048"));

  test("connect joins a live run and follows it to its end", () => assertConnectJoinsLiveRun(slow, "C4096"));

  test("connect with Last-Event-ID rejoins the live run where the page dropped", () =>
    assertConnectRejoinsByLastEventId(slow, "C4097"));

  test("stop: CopilotKit's stopAgent cancels the run on the server", () => assertStopAgentCancels(slow, "D8192"));

  test("stop over REST while a run streams answers stopped:true and the stream ends cancelled", () =>
    assertRestStopWhileStreaming(slow, "E1000"));

  test("single-route envelope: discovery, a run and connect through POST /copilotkit", () =>
    assertSingleRouteMode(server, "A1024"));

  test("connect on a thread that never ran is an empty stream", () => assertConnectToNewThreadIsEmpty(server));

  test("CopilotKit's thread store: list, next page, rename, archive, unarchive, delete (REST)", () =>
    assertThreadStore(server, "rest"));

  test("CopilotKit's thread store through the single-route resource envelope", () =>
    assertThreadStore(server, "single"));
});
