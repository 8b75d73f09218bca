// JWT-authenticated A2A pushes end to end. The remote fraud agent runs on the
// official @a2a-js/sdk with a test-side signing push sender (the SDK 1.3.0
// cannot sign pushes; see lib/a2a-jwt.mjs) and publishes its keys as a JWKS
// over HTTP. The dev server and the Worker (workerd) delegate with
// DEMO_FRAUD_AGENT_JWKS_URL set, so
// every push needs the subscription token AND a JWT from those keys.
//
//   cargo build -p dev-server -p handoff-tests
//   cd tests/node && HANDOFF_BIN_DIR=../../target/debug node --test a2a-jwt.test.mjs

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { postJson, request, sseEvents, startDevServer, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { assertNoPanics, assertStrict, rawRefundInterrupt, uid } from "./lib/flows.mjs";
import { startFraudAgent } from "./lib/a2a-remote.mjs";
import { JwtPushSender, makeKey, pushClaims, signJwt, startSigner } from "./lib/a2a-jwt.mjs";
import { startWorker, stopAllWorkers } from "./lib/worker.mjs";

// Native verification (dev server) and the wasm build's RustCrypto verification (Worker in workerd).
const HOSTS = [
  ["dev-server", (env) => startDevServer({ env, label: "dev-server (a2a jwt)" })],
  ["Workers (workerd)", (vars) => startWorker({ vars, label: "worker (a2a jwt)" })],
];

let signer;
let remote;
let server;

before(async () => {
  signer = await startSigner();
  remote = await startFraudAgent({ pushSender: (store) => new JwtPushSender(store, signer.rsa) });
});

after(async () => {
  await stopAllServers();
  await stopAllWorkers();
  await remote?.close();
  await signer?.close();
});

async function taskState(threadId, taskId) {
  const res = await request(`${server.url}/threads/${threadId}`);
  assert.equal(res.status, 200, res.text);
  return res.json.a2aTasks?.find((t) => t.task.id === taskId)?.task;
}

for (const [host, start] of HOSTS) describe(`JWT-signed A2A push notifications on ${host}`, () => {
  before(async () => {
    server = await start({
      DEMO_FRAUD_AGENT_URL: remote.url,
      DEMO_FRAUD_AGENT_JWKS_URL: signer.jwksUrl,
      HANDOFF_A2A_ALLOW_LOOPBACK: "true",
      HANDOFF_A2A_ALLOW_INSECURE_JWKS: "true",
    });
  });
  after(() => assertNoPanics(server));
  const orderId = host === "dev-server" ? "J4096" : "J5120";

  test("signed pushes are accepted; replayed, stale, tampered and unknown-key JWTs are not", async () => {
    const fetchesBefore = signer.fetches;
    const { threadId, interrupt } = await rawRefundInterrupt(server, orderId);
    assert.equal(interrupt.reason, "a2a:task", JSON.stringify(interrupt));
    const taskId = interrupt.metadata["a2a.taskId"];
    const send = remote.requests.find((r) => r.method === "SendMessage" && r.body.params.message.parts[0].text.includes(orderId));
    const push = send.body.params.configuration.taskPushNotificationConfig;

    // The SDK's own events, signed by the test sender, are accepted (valid JWT, RS256).
    await waitFor(async () => (await taskState(threadId, taskId))?.status.state === "TASK_STATE_WORKING", {
      timeoutMs: 15_000,
      what: "the signed WORKING push",
    });
    // The receiver stores a push before its answer reaches the sender: wait for the answers.
    const signed = await waitFor(() => {
      const sent = remote.sender.sent.filter((s) => s.url === push.url);
      return sent.length >= 2 && sent.every((s) => s.status !== 0 || s.error) && sent;
    }, { timeoutMs: 15_000, what: "the answers to the task and WORKING pushes" });
    for (const s of signed) assert.equal(s.status, 200, `${s.body} -> ${s.status} ${s.error ?? ""}`);
    assert.ok(signer.fetches > fetchesBefore, "this host's receiver fetched the sender's JWKS");

    // Stamped now (not ahead): the remote's own later COMPLETED must still count as newer.
    let n = 0;
    const body = (state) =>
      JSON.stringify({ statusUpdate: { taskId, contextId: "ctx", status: { state, timestamp: new Date().toISOString() }, metadata: { n: ++n } } });
    const post = (raw, { jwt, token = push.token } = {}) => {
      const headers = { "content-type": "application/a2a+json" };
      if (token) headers["x-a2a-notification-token"] = token;
      if (jwt) headers.authorization = `Bearer ${jwt}`;
      return request(push.url, { method: "POST", headers, body: raw });
    };
    const accepted = async (res, what) => {
      assert.equal(res.status, 200, `${what}: ${res.text}`);
      assert.equal(res.json.duplicate, false, what);
    };
    const rejected = (res, what) => {
      assert.equal(res.status, 401, `${what}: ${res.status} ${res.text}`);
      assert.equal(res.json.code, "UNAUTHORIZED", what);
    };

    // Controls: a fresh RS256 and a fresh ES256 JWT over the body are accepted.
    const fresh = body("TASK_STATE_WORKING");
    await accepted(await post(fresh, { jwt: signJwt(pushClaims(fresh, taskId), signer.rsa) }), "fresh RS256");
    const es = body("TASK_STATE_WORKING");
    await accepted(await post(es, { jwt: signJwt(pushClaims(es, taskId), signer.ec) }), "fresh ES256");

    // A redelivery of an accepted push (same JWT, same body) is acknowledged once more, not reapplied.
    const first = signed[0];
    const redelivered = await post(first.body, { jwt: first.headers.authorization.slice(7) });
    assert.equal(redelivered.status, 200, redelivered.text);
    assert.equal(redelivered.json.duplicate, true);

    // Everything below would complete the task if accepted.
    const done = () => body("TASK_STATE_COMPLETED");
    let raw = done();
    rejected(await post(raw, { jwt: signJwt(pushClaims(raw, taskId, { jti: first.claims.jti }), signer.rsa) }), "replayed jti");
    raw = done();
    rejected(await post(raw, { jwt: first.headers.authorization.slice(7) }), "replayed JWT over another body");
    raw = done();
    rejected(await post(raw, { jwt: signJwt(pushClaims(raw, taskId, { iat: Math.floor(Date.now() / 1000) - 600 }), signer.rsa) }), "stale iat");
    raw = done();
    rejected(await post(raw, { jwt: signJwt(pushClaims(body("TASK_STATE_WORKING"), taskId), signer.rsa) }), "tampered body");
    raw = done();
    const stranger = makeKey("RS256", "push-rsa-unknown");
    rejected(await post(raw, { jwt: signJwt(pushClaims(raw, taskId), stranger) }), "unknown kid");
    raw = done();
    rejected(await post(raw, { jwt: signJwt(pushClaims(raw, taskId), stranger, { kid: signer.rsa.kid }) }), "known kid, wrong key");
    raw = done();
    const { request_body_sha256: _, ...noHash } = pushClaims(raw, taskId);
    rejected(await post(raw, { jwt: signJwt(noHash, signer.rsa) }), "no body-hash claim");
    raw = done();
    rejected(await post(raw), "token without a JWT");
    raw = done();
    rejected(await post(raw, { jwt: signJwt(pushClaims(raw, taskId), signer.rsa), token: null }), "JWT without the token");
    assert.equal((await taskState(threadId, taskId)).status.state, "TASK_STATE_WORKING", "no rejected push was applied");

    // The remote finishes; its signed pushes complete the task and the thread resumes with the verdict.
    remote.complete(taskId, { verdict: `No fraud signals for ${orderId}: approve.` });
    await waitFor(async () => (await taskState(threadId, taskId))?.status.state === "TASK_STATE_COMPLETED", {
      timeoutMs: 15_000,
      what: "the signed COMPLETED push",
    });
    for (const s of remote.sender.sent.filter((x) => x.url === push.url)) assert.equal(s.status, 200, s.body);
    const runId = uid("run");
    const res = await postJson(`${server.url}/agent`, {
      threadId,
      runId,
      messages: [],
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: {} }],
    });
    assert.equal(res.status, 200, res.text);
    await assertStrict(res.bytes, { threadId, runId });
    const text = sseEvents(res.bytes)
      .filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
      .map((e) => e.delta)
      .join("");
    assert.match(text, new RegExp(`Fraud review TASK_STATE_COMPLETED: No fraud signals for ${orderId}: approve\\.`));
  });
});
