// Every host serves the web console (shared/handoff-console) at `/`: the dev server and Lambda
// from the embedded copy, the Worker from Workers static assets. The page is public (a browser
// cannot put a bearer token on a navigation); everything it reads stays behind authentication.
// The console's behaviour in a browser is console.test.mjs.
import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { assertBinaries, startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { startLambda, startMoto, stopAll } from "./lib/lambda.mjs";
import { startWorker, stopAllWorkers } from "./lib/worker.mjs";
import { assertConsoleServed, rawGet } from "./lib/console-assets.mjs";

assertBinaries();
const TIMEOUT = 900_000;

describe("the web console is served", { timeout: TIMEOUT }, () => {
  after(async () => {
    await stopAllServers();
    await stopAll();
    await stopAllWorkers();
  });

  test("dev server: at / with authentication on, while the data stays behind it", async () => {
    const server = await startDevServer({
      env: { HANDOFF_STORE: "memory", HANDOFF_AUTH: "api-key", HANDOFF_API_KEYS: "acme/ops+approver=console-key" },
    });
    await assertConsoleServed(server.url);
    assert.equal((await rawGet(`${server.url}/threads/t1`)).status, 401);
    assert.match(server.stdout ?? "", /console: http:\/\/127\.0\.0\.1:\d+\//);
  });

  test("dev server: HANDOFF_CONSOLE=off serves no console; a bad value refuses to start", async () => {
    const server = await startDevServer({ env: { HANDOFF_STORE: "memory", HANDOFF_CONSOLE: "off" } });
    assert.equal((await rawGet(`${server.url}/`)).status, 404);
    assert.equal((await rawGet(`${server.url}/healthz`)).status, 200);
    await assert.rejects(
      startDevServer({ env: { HANDOFF_STORE: "memory", HANDOFF_CONSOLE: "sometimes" }, startTimeoutMs: 20_000 }),
      /HANDOFF_CONSOLE/,
    );
  });

  test("Lambda (cargo lambda watch): under the function URL's path", async () => {
    const moto = await startMoto();
    const lambda = await startLambda({ moto, table: `handoff_console_${Date.now()}` });
    await assertConsoleServed(lambda.url);
  });

  test("Worker (workerd): as static assets, the Worker's routes untouched", async () => {
    const worker = await startWorker();
    await assertConsoleServed(worker.url, { native: false });
    assert.equal((await rawGet(`${worker.url}/healthz`)).status, 200);
  });
});
