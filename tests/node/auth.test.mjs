// Authentication and authorization end to end (issue 11): HANDOFF_AUTH on the dev
// server (jwt, api-key), CORS, tenant isolation, four-eyes approvals; then the
// minimal jwt checks on AWS Lambda (cargo lambda watch + moto) and the Worker
// (miniflare). Tokens come from lib/jwks.mjs (node:crypto signers, JWKS on loopback).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import path from "node:path";
import { BIN_DIR, assertBinaries, postJson, request, sseEvents, startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { assertStrict, uid, userMessage } from "./lib/flows.mjs";
import { startJwksKit } from "./lib/jwks.mjs";
import { startLambda, startMoto, stopAll as stopAllLambda } from "./lib/lambda.mjs";
import { startWorker, stopAllWorkers } from "./lib/worker.mjs";

assertBinaries();

const TIMEOUT = 900_000;
// AUTH_TEST_HOSTS=dev,lambda,worker (default: all) runs only the named hosts' suites.
const HOSTS = new Set((process.env.AUTH_TEST_HOSTS ?? "dev,lambda,worker").split(",").map((h) => h.trim()));
const only = (host) => ({ timeout: TIMEOUT, skip: HOSTS.has(host) ? false : `AUTH_TEST_HOSTS excludes ${host}` });
// Four-eyes threshold for the shared dev server: refunds of orders above it need an approver.
const APPROVER_ABOVE_CENTS = 20_000;

/** The demo catalog's amount for `orderId` (shared/handoff-demo/src/orders.rs). */
function amountCents(orderId) {
  if (orderId === "A1024") return 12_800;
  const seed = [...Buffer.from(orderId)].reduce((a, b) => a + b, 0);
  return 1_000 + ((seed * 7919) % 40_000);
}

/** A fresh order id (letter + digits) whose amount is above or at/below `cents`. */
function orderId({ above, atMost }) {
  for (let i = 0; i < 10_000; i++) {
    const id = `Q${Math.floor(Math.random() * 1e8)}`;
    const c = amountCents(id);
    if ((above === undefined || c > above) && (atMost === undefined || c <= atMost)) return id;
  }
  throw new Error("no order id found");
}

const bearer = (token) => ({ authorization: `Bearer ${token}` });

function jwtEnv(kit) {
  return {
    HANDOFF_AUTH: "jwt",
    HANDOFF_JWT_JWKS_URL: kit.jwksUrl,
    HANDOFF_JWT_ISSUER: kit.issuer,
    HANDOFF_JWT_AUDIENCE: kit.audience,
    HANDOFF_JWT_ALLOW_INSECURE_JWKS: "true",
  };
}

function assertUnauthenticated(res, what) {
  assert.equal(res.status, 401, `${what}: ${res.status} ${res.text}`);
  assert.ok(res.headers["www-authenticate"], `${what}: 401 without WWW-Authenticate`);
  assert.equal(res.json?.code, "UNAUTHENTICATED", `${what}: ${res.text}`);
  assert.equal(typeof res.json?.message, "string", `${what}: ${res.text}`);
}

function assertNotFound(res, what) {
  assert.equal(res.status, 404, `${what}: ${res.status} ${res.text}`);
  assert.equal(res.json?.code, "THREAD_NOT_FOUND", `${what}: ${res.text}`);
}

/** POST /agent as `token`: {res, events}. */
async function run(server, token, body) {
  const res = await postJson(`${server.url}/agent`, body, { headers: token ? bearer(token) : {} });
  return { res, events: res.status === 200 ? sseEvents(res.bytes) : [] };
}

/** A refund conversation's first run as `token`: {threadId, runId, interrupt, events}. */
async function refundInterrupt(server, token, order, { threadId = uid("thread") } = {}) {
  const runId = uid("run");
  const { res, events } = await run(server, token, { threadId, runId, messages: [userMessage(`Refund order ${order}`)] });
  assert.equal(res.status, 200, res.text);
  await assertStrict(res.bytes, { threadId, runId });
  const finished = events.at(-1);
  assert.equal(finished?.type, "RUN_FINISHED", JSON.stringify(events.map((e) => e.type)));
  assert.equal(finished.outcome?.type, "interrupt", JSON.stringify(finished));
  assert.equal(finished.outcome.interrupts.length, 1);
  return { threadId, runId, interrupt: finished.outcome.interrupts[0], events };
}

/**
 * Replaying a run of a thread the caller may not see: the contract says 404
 * THREAD_NOT_FOUND, and the answer must not differ from the replay of a thread that
 * never existed (ids cannot be probed). Deviations are pushed to `deviations` (checked
 * at the end of the test, so one does not hide the checks after it).
 */
async function assertReplayHidden(host, token, { threadId, runId }, who, deviations) {
  const hidden = await request(`${host.url}/threads/${threadId}/runs/${runId}/events`, { headers: bearer(token) });
  const absent = await request(`${host.url}/threads/${uid("thread")}/runs/${uid("run")}/events`, { headers: bearer(token) });
  if (hidden.status !== 404 || hidden.json?.code !== "THREAD_NOT_FOUND") {
    deviations.push(`${who}: GET /threads/{hidden}/runs/{runId}/events -> ${hidden.status} ${hidden.text} (contract: 404 THREAD_NOT_FOUND)`);
  }
  if (hidden.status !== absent.status || hidden.text !== absent.text) {
    deviations.push(`${who}: replay of a hidden thread (${hidden.status} ${hidden.text}) differs from an absent thread's (${absent.status} ${absent.text})`);
  }
}

const approve = (interrupt) => [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }];

async function getThread(server, token, threadId) {
  return request(`${server.url}/threads/${threadId}`, { headers: token ? bearer(token) : {} });
}

async function refunds(server, token, order) {
  const r = await request(`${server.url}/demo/orders/${order}`, { headers: bearer(token) });
  assert.equal(r.status, 200, r.text);
  return r.json.refunds;
}

/** The parts of a thread view an outsider's attempts must leave untouched. */
const essence = (view) => ({
  status: view.status,
  owner: view.owner,
  messages: view.messages,
  pendingInterrupts: view.pendingInterrupts,
  lastRun: view.lastRun,
  answers: view.answers,
});

// ---------------------------------------------------------------------------
// Dev server, HANDOFF_AUTH=jwt

describe("dev server, HANDOFF_AUTH=jwt", only("dev"), () => {
  let kit;
  let server;
  before(async () => {
    kit = await startJwksKit();
    server = await startDevServer({
      label: "auth-jwt",
      env: { HANDOFF_STORE: "memory", ...jwtEnv(kit), DEMO_APPROVER_ABOVE_CENTS: String(APPROVER_ABOVE_CENTS) },
    });
  });
  after(async () => {
    await stopAllServers();
    await kit?.close();
  });

  test("/healthz needs no token", async () => {
    const res = await request(`${server.url}/healthz`);
    assert.equal(res.status, 200, res.text);
  });

  test("a 401 sent before the body is read reaches the client; the server keeps serving", async () => {
    await assertRefusedBodiesReadable(kit, server);
  });

  for (const alg of ["RS256", "ES256", "EdDSA"]) {
    test(`a valid ${alg} token is accepted`, async () => {
      const token = kit.mint({ alg, claims: { sub: `user-${alg}`, tid: "algs" } });
      const threadId = uid("thread");
      const runId = uid("run");
      const { res, events } = await run(server, token, { threadId, runId, messages: [userMessage("hello")] });
      assert.equal(res.status, 200, res.text);
      assert.equal(events[0]?.type, "RUN_STARTED");
      await assertStrict(res.bytes, { threadId, runId });
    });
  }

  test("missing or bad credentials: 401 UNAUTHENTICATED with WWW-Authenticate, never 5xx", async () => {
    const cases = {
      "no Authorization header": undefined,
      expired: kit.attacks.expired(),
      "not yet valid": kit.attacks.notYetValid(),
      "wrong issuer": kit.attacks.wrongIssuer(),
      "wrong audience": kit.attacks.wrongAudience(),
      "tampered (RS256)": kit.attacks.tampered({ alg: "RS256" }),
      "tampered (ES256)": kit.attacks.tampered({ alg: "ES256" }),
      "tampered (EdDSA)": kit.attacks.tampered({ alg: "EdDSA" }),
      "alg none": kit.attacks.algNone(),
      "HS256 keyed with the public key": kit.attacks.hs256WithPublicKey(),
      "unknown kid (unpublished key)": kit.attacks.unknownKid(),
      "unknown kid (published key)": kit.attacks.unknownKid({ publishedKey: true }),
      "not a JWT": "not-a-jwt",
    };
    for (const [what, token] of Object.entries(cases)) {
      const threadId = uid("thread");
      const { res } = await run(server, token, { threadId, runId: uid("run"), messages: [userMessage("hello")] });
      assertUnauthenticated(res, `POST /agent, ${what}`);
      assertUnauthenticated(await getThread(server, token, threadId), `GET /threads, ${what}`);
    }
    // A scheme other than Bearer.
    const basic = await postJson(`${server.url}/agent`, { threadId: uid("thread"), runId: uid("run"), messages: [] }, {
      headers: { authorization: `Basic ${Buffer.from("a:b").toString("base64")}` },
    });
    assertUnauthenticated(basic, "Basic credentials");
  });

  test("tenant isolation: another tenant (or another subject) cannot see, replay or resume a thread", async () => {
    const deviations = [];
    const ownerA = kit.mint({ claims: { sub: "alice", tid: "a" } });
    const order = orderId({ atMost: APPROVER_ABOVE_CENTS });
    const a = await refundInterrupt(server, ownerA, order);
    const beforeView = await getThread(server, ownerA, a.threadId);
    assert.equal(beforeView.status, 200, beforeView.text);
    assert.equal(beforeView.json.owner, "alice");
    assert.deepEqual(beforeView.json.pendingInterrupts.map((i) => i.id), [a.interrupt.id]);

    // Replay works for the owner.
    const replayA = await request(`${server.url}/threads/${a.threadId}/runs/${a.runId}/events`, { headers: bearer(ownerA) });
    assert.equal(replayA.status, 200, replayA.text);

    for (const [who, token] of [
      ["tenant b", kit.mint({ claims: { sub: "bob", tid: "b" } })],
      ["tenant b, same subject", kit.mint({ claims: { sub: "alice", tid: "b" } })],
      ["tenant a, another subject without roles", kit.mint({ claims: { sub: "mallory", tid: "a" } })],
      ["default tenant (no tid)", kit.mint({ claims: { sub: "alice" } })],
    ]) {
      assertNotFound(await getThread(server, token, a.threadId), `${who}: GET thread`);
      await assertReplayHidden(server, token, a, who, deviations);
      // Contract: 404 THREAD_NOT_FOUND. Checked after the rest of the test (a deviation
      // here is reported without hiding what follows).
      const resume = await run(server, token, { threadId: a.threadId, runId: uid("run"), messages: [], resume: approve(a.interrupt) });
      if (resume.res.status !== 404 || resume.res.json?.code !== "THREAD_NOT_FOUND") {
        deviations.push(`${who}: POST /agent resume with a's interrupt id -> ${resume.res.status} ${resume.res.text}`);
      }
      if (who.startsWith("tenant a")) {
        const newRun = await run(server, token, { threadId: a.threadId, runId: uid("run"), messages: [userMessage("hello")] });
        assertNotFound(newRun.res, `${who}: new run on the thread`);
      }
    }
    assert.equal(await refunds(server, ownerA, order), 0, "no refund from the outsiders' attempts");

    // Tenant b's own run on the same threadId is a separate thread.
    const tokenB = kit.mint({ claims: { sub: "bob", tid: "b" } });
    const orderB = orderId({ atMost: APPROVER_ABOVE_CENTS });
    const b = await refundInterrupt(server, tokenB, orderB, { threadId: a.threadId });
    assert.notEqual(b.interrupt.id, a.interrupt.id);
    const viewB = await getThread(server, tokenB, a.threadId);
    assert.equal(viewB.status, 200, viewB.text);
    assert.equal(viewB.json.owner, "bob");
    assert.deepEqual(viewB.json.pendingInterrupts.map((i) => i.id), [b.interrupt.id]);
    assert.ok(!JSON.stringify(viewB.json.messages).includes(order), "b's thread holds none of a's messages");

    const afterView = await getThread(server, ownerA, a.threadId);
    assert.equal(afterView.status, 200, afterView.text);
    assert.deepEqual(essence(afterView.json), essence(beforeView.json), "a's thread is unchanged");
    assert.ok(!JSON.stringify(afterView.json.messages).includes(orderB), "a's thread holds none of b's messages");
    assert.deepEqual(deviations, [], "hidden threads: replay and resume must answer 404 THREAD_NOT_FOUND, as for an absent thread");
  });

  test("four-eyes: the owner cannot approve a large refund; an approver of the same tenant can", async () => {
    const owner = kit.mint({ claims: { sub: "olivia", tid: "shop" } });
    const approver = kit.mint({ claims: { sub: "victor", tid: "shop", roles: ["approver"] } });
    const otherTenantApprover = kit.mint({ claims: { sub: "eve", tid: "other", roles: ["approver"] } });
    const order = orderId({ above: APPROVER_ABOVE_CENTS });
    const t = await refundInterrupt(server, owner, order);
    // The interrupt shows its approval policy; the server enforces its own stored copy.
    const policy = t.interrupt.metadata?.["handoff.approval"];
    assert.deepEqual(policy?.roles, ["approver"], JSON.stringify(t.interrupt));
    assert.equal(policy?.notRequester, true, JSON.stringify(t.interrupt));
    assert.deepEqual(policy?.edits, { amountCents: "atMostOriginal", orderId: "fixed" }, JSON.stringify(t.interrupt));

    // The owner's approval is refused, and changes nothing.
    const byOwner = await run(server, owner, { threadId: t.threadId, runId: uid("run"), messages: [], resume: approve(t.interrupt) });
    assert.equal(byOwner.res.status, 403, byOwner.res.text);
    assert.equal(byOwner.res.json?.code, "FORBIDDEN", byOwner.res.text);
    const stillPending = await getThread(server, owner, t.threadId);
    assert.equal(stillPending.status, 200, stillPending.text);
    assert.equal(stillPending.json.status, "interrupted");
    assert.deepEqual(stillPending.json.pendingInterrupts.map((i) => i.id), [t.interrupt.id]);
    assert.equal(await refunds(server, owner, order), 0);

    // An approver of another tenant does not even see it.
    assertNotFound(await getThread(server, otherTenantApprover, t.threadId), "approver of another tenant: GET");

    // The approver sees the pending interrupt and resolves it.
    const seen = await getThread(server, approver, t.threadId);
    assert.equal(seen.status, 200, seen.text);
    assert.deepEqual(seen.json.pendingInterrupts.map((i) => i.id), [t.interrupt.id]);
    const runId = uid("run");
    const byApprover = await run(server, approver, { threadId: t.threadId, runId, messages: [], resume: approve(t.interrupt) });
    assert.equal(byApprover.res.status, 200, byApprover.res.text);
    await assertStrict(byApprover.res.bytes, { threadId: t.threadId, runId });
    const finished = byApprover.events.at(-1);
    assert.equal(finished?.type, "RUN_FINISHED", JSON.stringify(byApprover.events.map((e) => e.type)));
    assert.equal(finished.outcome?.type ?? "success", "success", JSON.stringify(finished));
    assert.equal(await refunds(server, owner, order), 1);

    const done = await getThread(server, owner, t.threadId);
    assert.equal(done.status, 200, done.text);
    assert.deepEqual(done.json.pendingInterrupts, []);
    assert.equal(done.json.owner, "olivia");
    assert.equal(done.json.answers?.length, 1, JSON.stringify(done.json.answers));
    const [answer] = done.json.answers;
    assert.equal(answer.interruptId, t.interrupt.id);
    assert.equal(answer.by, "victor");
    assert.equal(answer.status, "resolved");
    assert.equal(answer.approved, true);
    assert.equal(answer.runId, runId);
    assert.equal(typeof answer.atMs, "number");
  });

  test("four-eyes: the owner may still cancel their own request", async () => {
    const owner = kit.mint({ claims: { sub: "oscar", tid: "shop" } });
    const order = orderId({ above: APPROVER_ABOVE_CENTS });
    const t = await refundInterrupt(server, owner, order);
    const runId = uid("run");
    const cancel = await run(server, owner, {
      threadId: t.threadId,
      runId,
      messages: [],
      resume: [{ interruptId: t.interrupt.id, status: "cancelled" }],
    });
    assert.equal(cancel.res.status, 200, cancel.res.text);
    await assertStrict(cancel.res.bytes, { threadId: t.threadId, runId });
    assert.equal(await refunds(server, owner, order), 0);
  });
});

// ---------------------------------------------------------------------------
// Dev server, HANDOFF_AUTH=api-key, and CORS

describe("dev server, HANDOFF_AUTH=api-key and HANDOFF_CORS_ORIGINS", only("dev"), () => {
  const plainKey = `plain-${uid("k")}`;
  const hashedKey = `hashed-${uid("k")}`;
  const hashedHex = createHash("sha256").update(hashedKey).digest("hex");
  let server;
  before(async () => {
    server = await startDevServer({
      label: "auth-api-key",
      env: {
        HANDOFF_STORE: "memory",
        HANDOFF_AUTH: "api-key",
        HANDOFF_API_KEYS: `acme/ci=${plainKey},acme/ops+approver=sha256:${hashedHex}`,
        HANDOFF_CORS_ORIGINS: "https://app.example.com",
      },
    });
  });
  after(stopAllServers);

  test("a plain and a sha256: key are both accepted; a wrong key is 401", async () => {
    for (const key of [plainKey, hashedKey]) {
      const threadId = uid("thread");
      const runId = uid("run");
      const { res, events } = await run(server, key, { threadId, runId, messages: [userMessage("hello")] });
      assert.equal(res.status, 200, `${key}: ${res.text}`);
      assert.equal(events[0]?.type, "RUN_STARTED");
      await assertStrict(res.bytes, { threadId, runId });
    }
    for (const [what, key] of [
      ["wrong key", "definitely-wrong"],
      ["the hash itself", hashedHex],
      ["the sha256: form", `sha256:${hashedHex}`],
      ["no key", undefined],
    ]) {
      const { res } = await run(server, key, { threadId: uid("thread"), runId: uid("run"), messages: [userMessage("hello")] });
      assertUnauthenticated(res, what);
    }
  });

  test("the two keys are two subjects of one tenant: the owner's thread is hidden from the other", async () => {
    const threadId = uid("thread");
    const { res } = await run(server, plainKey, { threadId, runId: uid("run"), messages: [userMessage("hello")] });
    assert.equal(res.status, 200, res.text);
    const own = await getThread(server, plainKey, threadId);
    assert.equal(own.status, 200, own.text);
    assert.equal(own.json.owner, "ci");
    // No interrupt asks for "approver": the role alone grants nothing.
    assertNotFound(await getThread(server, hashedKey, threadId), "other subject");
  });

  test("CORS preflight: the allowed origin gets 204 with allow-origin, another none", async () => {
    const preflight = (origin) =>
      request(`${server.url}/agent`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization,content-type",
        },
      });
    const ok = await preflight("https://app.example.com");
    assert.equal(ok.status, 204, `${ok.status} ${JSON.stringify(ok.headers)} ${ok.text}`);
    assert.equal(ok.headers["access-control-allow-origin"], "https://app.example.com", JSON.stringify(ok.headers));
    const evil = await preflight("https://evil.example.com");
    assert.equal(evil.headers["access-control-allow-origin"], undefined, JSON.stringify(evil.headers));
    assert.ok(evil.status < 500, `${evil.status}`);
  });
});

// ---------------------------------------------------------------------------
// AWS Lambda, HANDOFF_AUTH=jwt

/** The minimal trio on any host: a valid token runs, missing/bad tokens are 401, other tenants get 404. */
async function jwtTrio(kit, host) {
  const tokenA = kit.mint({ alg: "ES256", claims: { sub: "alice", tid: "a" } });
  const tokenB = kit.mint({ alg: "EdDSA", claims: { sub: "bob", tid: "b" } });
  const threadId = uid("thread");
  const runId = uid("run");
  const { res, events } = await run(host, tokenA, { threadId, runId, messages: [userMessage("hello")] });
  assert.equal(res.status, 200, res.text);
  assert.equal(events[0]?.type, "RUN_STARTED");
  await assertStrict(res.bytes, { threadId, runId });

  for (const [what, token] of [
    ["no token", undefined],
    ["expired", kit.attacks.expired()],
    ["alg none", kit.attacks.algNone()],
    ["wrong audience", kit.attacks.wrongAudience()],
    ["tampered", kit.attacks.tampered()],
  ]) {
    const bad = await run(host, token, { threadId: uid("thread"), runId: uid("run"), messages: [userMessage("hello")] });
    assertUnauthenticated(bad.res, what);
  }

  const own = await getThread(host, tokenA, threadId);
  assert.equal(own.status, 200, own.text);
  assert.equal(own.json.owner, "alice");
  assertNotFound(await getThread(host, tokenB, threadId), "other tenant: GET thread");
  const deviations = [];
  await assertReplayHidden(host, tokenB, { threadId, runId }, "other tenant", deviations);
  assert.deepEqual(deviations, []);
}

/**
 * Refusals that come before the body is read (a 401 from the authentication layer, on a run
 * and on a stop) still reach the client: the host reads the body to its end first, so the
 * connection is not reset under the client and the host keeps serving. Bodies of a few KB
 * and of 200 KB, many times over: a reset shows up within a few tries when it can happen.
 */
async function assertRefusedBodiesReadable(kit, host) {
  for (const size of [2_000, 200_000]) {
    for (let i = 0; i < 15; i++) {
      const body = { threadId: uid("thread"), runId: uid("run"), messages: [userMessage("x".repeat(size))] };
      for (const url of [`${host.url}/agent`, `${host.url}/threads/${body.threadId}/runs/${body.runId}/stop`]) {
        const res = await postJson(url, body, { headers: bearer(kit.attacks.tampered()) });
        assertUnauthenticated(res, `${size} B body to ${url}`);
      }
    }
  }
  const token = kit.mint({ alg: "ES256", claims: { sub: "after", tid: "a" } });
  const { res, events } = await run(host, token, { threadId: uid("thread"), runId: uid("run"), messages: [userMessage("hello")] });
  assert.equal(res.status, 200, res.text);
  assert.equal(events[0]?.type, "RUN_STARTED");
}

describe("AWS Lambda, HANDOFF_AUTH=jwt (cargo lambda watch + moto_server)", only("lambda"), () => {
  let kit;
  let lambda;
  before(async () => {
    kit = await startJwksKit();
    const moto = await startMoto();
    lambda = await startLambda({ moto, table: `handoff_auth_${Date.now()}`, label: "lambda-jwt", env: jwtEnv(kit) });
  });
  after(async () => {
    await stopAllLambda();
    await kit?.close();
  });

  test("valid token accepted, missing/bad tokens 401, another tenant's thread 404", { timeout: TIMEOUT }, async () => {
    await jwtTrio(kit, lambda);
  });

  test("a 401 sent before the body is read reaches the client; the function keeps serving", { timeout: TIMEOUT }, async () => {
    await assertRefusedBodiesReadable(kit, lambda);
  });

  test("without HANDOFF_AUTH the function fails at init", () => {
    // The binary itself: the refusal comes before it ever talks to a Lambda runtime.
    const init = spawnSync(path.join(BIN_DIR, "agent-lambda"), [], {
      // As in Lambda: region and execution-role credentials are always set; only HANDOFF_AUTH is missing.
      env: { PATH: process.env.PATH, RUST_LOG: "info", AWS_REGION: "us-east-1", AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test", HANDOFF_TABLE: "unused" },
      encoding: "utf8",
      timeout: 30_000,
    });
    const output = `${init.stdout}${init.stderr}`;
    assert.notEqual(init.status, 0, `started without HANDOFF_AUTH: ${output}`);
    assert.match(output, /HANDOFF_AUTH is not set/, output);
  });
});

// ---------------------------------------------------------------------------
// Cloudflare Worker (miniflare), HANDOFF_AUTH=jwt

describe("Worker, HANDOFF_AUTH=jwt (miniflare)", only("worker"), () => {
  let kit;
  before(async () => {
    kit = await startJwksKit();
  });
  after(async () => {
    await stopAllWorkers();
    await kit?.close();
  });

  test("valid token accepted, missing/bad tokens 401, another tenant's thread 404", { timeout: TIMEOUT }, async () => {
    const worker = await startWorker({ label: "worker-jwt", vars: jwtEnv(kit) });
    try {
      await jwtTrio(kit, worker);
    } catch (err) {
      err.message += `\n${worker.logs()}`;
      throw err;
    }
  });

  test("a 401 sent before the body is read reaches the client; the isolate keeps serving", { timeout: TIMEOUT }, async () => {
    const worker = await startWorker({ label: "worker-jwt-bodies", vars: jwtEnv(kit) });
    try {
      await assertRefusedBodiesReadable(kit, worker);
    } catch (err) {
      err.message += `\n${worker.logs()}`;
      throw err;
    }
  });

  test("without HANDOFF_AUTH the Worker refuses to serve: 500 AUTH_NOT_CONFIGURED", { timeout: TIMEOUT }, async () => {
    const worker = await startWorker({ label: "worker-unconfigured", vars: { HANDOFF_AUTH: "" } });
    const res = await postJson(`${worker.url}/agent`, { threadId: uid("thread"), runId: uid("run"), messages: [userMessage("hello")] }, { allow5xx: true });
    assert.equal(res.status, 500, res.text);
    assert.equal(res.json?.code, "AUTH_NOT_CONFIGURED", res.text);
  });
});
