// AWS Lambda with DynamoDB behind TLS: moto_server behind a local HTTPS proxy whose
// certificate a throwaway CA signed, trusted through AWS_CA_BUNDLE. The function opens that
// connection during Init (one warm-up read), so its first request finds it in the pool; a
// bundle it cannot read refuses to start, naming the variable.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { buildResumeArray } from "@ag-ui/client";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { BIN_DIR, postJson, sseEvents } from "./lib/devserver.mjs";
import { assertStrict, ledger, rawRefundInterrupt, uid } from "./lib/flows.mjs";
import { startLambda, startMoto, stopAll } from "./lib/lambda.mjs";
import { makeTestCerts, startRecordingProxy } from "./lib/tls.mjs";

const TIMEOUT = 900_000;

describe("AWS Lambda: DynamoDB over TLS with AWS_CA_BUNDLE", { timeout: TIMEOUT }, () => {
  let moto;
  let certs;
  let proxy;
  const table = `handoff_tls_${Date.now()}`;
  before(async () => {
    moto = await startMoto();
    certs = makeTestCerts();
    proxy = await startRecordingProxy(moto.endpoint, { certs });
  });
  after(async () => {
    await proxy?.close();
    await stopAll();
    certs?.remove();
  });

  test("the store's TLS connection is opened in Init and carries the first run; a run and its resume work", { timeout: TIMEOUT }, async () => {
    // The table first, over plain HTTP: then nothing but the warm-up talks to DynamoDB in Init.
    const setup = await startLambda({ moto, table, label: "lambda-tls-setup" });
    await setup.kill();

    const lambda = await startLambda({
      moto: { endpoint: proxy.endpoint },
      table,
      label: "lambda-tls",
      env: { AWS_CA_BUNDLE: certs.caPath, HANDOFF_CREATE_TABLE: "false" },
    });
    // /healthz needs no store: what the proxy saw so far is the function's Init.
    assert.equal(proxy.connections.length, 1, `one TLS connection during Init\n${lambda.logs()}`);
    assert.ok(proxy.connections[0].secureAt !== undefined, "its handshake completed");
    assert.deepEqual(proxy.calls.map((c) => c.target), ["GetItem"], "one warm-up read");
    const initCalls = proxy.calls.length;

    const first = await rawRefundInterrupt(lambda, "T4001");
    const runCalls = proxy.calls.slice(initCalls);
    assert.ok(runCalls.length > 0, "the run used the store");
    assert.equal(runCalls[0].connection, 1, "the first request's first store call reused Init's connection");

    const resume = buildResumeArray([first.interrupt], { [first.interrupt.id]: { status: "resolved", payload: { approved: true } } });
    const runId = uid("run");
    const res = await postJson(`${lambda.url}/agent`, { threadId: first.threadId, runId, messages: [], resume });
    assert.equal(res.status, 200, res.text);
    await assertStrict(res.bytes, { threadId: first.threadId, runId });
    assert.equal(sseEvents(res.bytes).at(-1).type, "RUN_FINISHED");
    assert.equal((await ledger(lambda, "T4001")).refunds, 1);
    assert.doesNotMatch(lambda.logs(100_000), /warm-up read (failed|did not answer)/, "the warm-up succeeded");
    await lambda.kill();
  });

  test("an AWS_CA_BUNDLE that cannot be read or holds no certificate refuses to start, naming the variable", { timeout: TIMEOUT }, () => {
    const garbage = path.join(certs.dir, "not-a-bundle.pem");
    fs.writeFileSync(garbage, "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n");
    const empty = path.join(certs.dir, "empty.pem");
    fs.writeFileSync(empty, "");
    for (const bundle of [path.join(certs.dir, "missing.pem"), certs.dir, garbage, empty]) {
      // The binary itself: the refusal comes before it ever talks to a Lambda runtime.
      const run = spawnSync(path.join(BIN_DIR, "agent-lambda"), [], {
        env: {
          PATH: process.env.PATH,
          HANDOFF_AUTH: "none",
          HANDOFF_TABLE: table,
          AWS_REGION: "us-east-1",
          AWS_ACCESS_KEY_ID: "test",
          AWS_SECRET_ACCESS_KEY: "test",
          AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint,
          AWS_CA_BUNDLE: bundle,
          RUST_LOG: "info",
        },
        encoding: "utf8",
        timeout: 30_000,
      });
      const output = `${run.stdout}${run.stderr}`;
      assert.notEqual(run.status, 0, `AWS_CA_BUNDLE=${bundle} must not start: ${output}`);
      assert.ok(output.includes(`AWS_CA_BUNDLE=${bundle}`), output);
      assert.doesNotMatch(output, /panicked/, output);
    }
  });
});
