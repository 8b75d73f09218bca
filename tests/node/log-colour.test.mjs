// Text log lines redirected away from a terminal (here a pipe, as under a process manager
// or `2> dev.log`) carry no ANSI escape codes. Whether a terminal gets colour, and
// NO_COLOR, are unit-tested next to the decision (shared/handoff/src/telemetry.rs).
import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { postJson, request, startDevServer, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { uid, userMessage } from "./lib/flows.mjs";

describe("log lines on a redirected stderr", { timeout: 120_000 }, () => {
  after(stopAllServers);

  test("the dev server's text log has no escape codes", async () => {
    // NO_COLOR empty counts as unset, so only the missing terminal can turn colour off.
    const server = await startDevServer({ label: "log-colour", env: { HANDOFF_LOG: "text", NO_COLOR: "" } });
    const listed = await request(`${server.url}/threads`);
    assert.equal(listed.status, 200);
    const run = await postJson(`${server.url}/agent`, { threadId: uid("thread-colour"), runId: uid("run"), messages: [userMessage("hello")] });
    assert.equal(run.status, 200);
    await waitFor(() => server.stderr.includes("run ended") && server.stderr.includes(listed.headers["x-request-id"]), {
      what: "the run's and the request's log lines",
    });
    assert.ok(/INFO/.test(server.stderr), server.logs());
    assert.ok(!server.stderr.includes("\x1b["), `escape codes in a redirected log:\n${JSON.stringify(server.stderr.slice(0, 600))}`);
  });
});
