// Webhooks on a real dev-server process (issue 53, part 2): a background refund run's
// `interrupt.created` reaches the operator's receiver before anyone polls, signed as
// Standard Webhooks says (checked with the official `standardwebhooks` package); a receiver
// that fails twice gets it on the third try, 5 s then 10 s later, under one webhook-id, and
// the endpoint that accepted at once is not sent it again; the approval's `run.finished`
// follows; `GET /webhooks/deliveries` shows them to an admin only. Then the Slack format,
// and a malformed secret refusing to start.
//
//   cargo build -p dev-server -p handoff-tests
//   cd tests/node && node --test webhooks.test.mjs

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { assertNoPanics, uid, userMessage } from "./lib/flows.mjs";
import { assertBinaries, postJson, request, startDevServer, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { TEST_TIMEOUT, assertApiError, suiteServers } from "./lib/e2e.mjs";

assertBinaries();
after(stopAllServers);

const KEYS = { alice: "alice-key-0123456789", bob: "bob-key-0123456789", carol: "carol-key-0123456789" };
const as = (who) => ({ headers: { authorization: `Bearer ${KEYS[who]}` } });
const secret = () => `whsec_${randomBytes(32).toString("base64")}`;
const SECRETS = { ops: secret(), audit: secret() };

/**
 * A receiver on loopback recording every request ({path, headers, body, at, status}).
 * `/ops` answers 503 to the first two attempts of each `interrupt.created` (by
 * webhook-id), 204 otherwise; every other path answers 204.
 */
async function startReceiver() {
  const received = [];
  const tries = new Map();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const id = req.headers["webhook-id"];
      let status = 204;
      if (req.url === "/ops" && JSON.parse(body).type === "interrupt.created") {
        const n = (tries.get(id) ?? 0) + 1;
        tries.set(id, n);
        if (n <= 2) status = 503;
      }
      received.push({ path: req.url, headers: req.headers, body, at: Date.now(), status });
      res.writeHead(status).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, received, close: () => server.close() };
}

/** The event, verified with the official package (throws on a bad signature or an old timestamp). */
function verified(hit, path = hit.path) {
  const name = path.slice(1);
  return new Webhook(SECRETS[name]).verify(hit.body, hit.headers);
}

const ofRun = (received, path, type, runId) =>
  received.filter((h) => h.path === path && JSON.parse(h.body).type === type && JSON.parse(h.body).data.runId === runId);

describe("webhooks on the dev server", { timeout: TEST_TIMEOUT }, () => {
  const pool = suiteServers();
  let receiver;
  let server;
  before(async () => {
    receiver = await startReceiver();
    server = await pool.start({
      label: "webhooks",
      env: {
        HANDOFF_AUTH: "api-key",
        HANDOFF_API_KEYS: `acme/alice=${KEYS.alice},acme/bob+approver=${KEYS.bob},acme/carol+admin=${KEYS.carol}`,
        DEMO_APPROVER_ABOVE_CENTS: "0",
        HANDOFF_WEBHOOK_URLS: `ops=${receiver.url}/ops,audit=${receiver.url}/audit`,
        HANDOFF_WEBHOOK_SECRETS: `ops=${SECRETS.ops},audit=${SECRETS.audit}`,
        HANDOFF_WEBHOOK_ALLOW_LOOPBACK: "true",
        HANDOFF_OUTBOX_POLL_MS: "200",
      },
    });
  });
  after(() => {
    receiver?.close();
    if (server) assertNoPanics(server);
  });

  test("interrupt.created before any poll, retried 5 s then 10 s under one id, run.finished after the approval, deliveries for admins", async () => {
    const threadId = uid("thread-wh");
    const runId = uid("run-wh");
    const started = await postJson(
      `${server.url}/agent`,
      { threadId, runId, messages: [userMessage("Refund order A5310")] },
      { headers: { ...as("alice").headers, prefer: "respond-async" } },
    );
    assert.equal(started.status, 202, started.text);

    // Nobody polls the run: the receiver hears of the approval by itself.
    const firstOps = await waitFor(() => ofRun(receiver.received, "/ops", "interrupt.created", runId)[0], {
      timeoutMs: 20_000,
      what: "interrupt.created at /ops",
    });
    const event = verified(firstOps);
    assert.equal(event.type, "interrupt.created");
    assert.match(event.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const { data } = event;
    assert.equal(data.tenant, "acme");
    assert.equal(data.threadId, threadId);
    assert.equal(data.runId, runId);
    assert.equal(data.requestedBy, "alice");
    assert.deepEqual(data.requiredRoles, ["approver"]);
    assert.equal(data.notRequester, true);
    assert.equal(data.consoleUrl, `${server.url}/?thread=${threadId}`);
    assert.equal(typeof data.interruptId, "string");
    assert.equal(firstOps.headers["content-type"], "application/json");

    // The third attempt is accepted: 5 s, then 10 s, after the first.
    const opsTries = await waitFor(
      () => {
        const hits = ofRun(receiver.received, "/ops", "interrupt.created", runId);
        return hits.length >= 3 && hits;
      },
      { timeoutMs: 40_000, intervalMs: 100, what: "the third attempt at /ops" },
    );
    assert.deepEqual(opsTries.map((h) => h.status), [503, 503, 204]);
    assert.equal(new Set(opsTries.map((h) => h.headers["webhook-id"])).size, 1, "one webhook-id");
    for (const hit of opsTries) assert.deepEqual(verified(hit), event, "each attempt is the same event, signed afresh");
    const [gap1, gap2] = [opsTries[1].at - opsTries[0].at, opsTries[2].at - opsTries[1].at];
    assert.ok(gap1 >= 4_800 && gap1 < 7_000, `second attempt ${gap1} ms after the first`);
    assert.ok(gap2 >= 9_800 && gap2 < 12_000, `third attempt ${gap2} ms after the second`);

    // The endpoint that accepted at once was not sent it again; the run's end was told too.
    const auditTries = ofRun(receiver.received, "/audit", "interrupt.created", runId);
    assert.equal(auditTries.length, 1, "audit served once");
    assert.equal(auditTries[0].headers["webhook-id"], opsTries[0].headers["webhook-id"]);
    assert.deepEqual(verified(auditTries[0]), event);
    for (const path of ["/ops", "/audit"]) {
      const ended = ofRun(receiver.received, path, "run.finished", runId);
      assert.equal(ended.length, 1, `${path}: run.finished once`);
      assert.equal(verified(ended[0]).data.outcome, "interrupt");
    }

    // bob answers; his run's end is told.
    const approveRun = uid("run-approve");
    const approved = await postJson(
      `${server.url}/agent`,
      {
        threadId,
        runId: approveRun,
        messages: [],
        resume: [{ interruptId: data.interruptId, status: "resolved", payload: { approved: true } }],
      },
      as("bob"),
    );
    assert.equal(approved.status, 200, approved.text);
    const finished = await waitFor(() => ofRun(receiver.received, "/ops", "run.finished", approveRun)[0], {
      timeoutMs: 20_000,
      what: "run.finished of the approval",
    });
    const done = verified(finished);
    assert.equal(done.data.outcome, "success");
    assert.equal(done.data.threadId, threadId);
    assert.equal(done.data.tenant, "acme");

    // Deliveries: an admin sees them, newest first; anyone else is refused.
    assertApiError(await request(`${server.url}/webhooks/deliveries`, as("alice")), 403, "FORBIDDEN", "alice");
    assertApiError(await request(`${server.url}/webhooks/deliveries`, as("bob")), 403, "FORBIDDEN", "bob");
    const listed = await waitFor(
      async () => {
        const res = await request(`${server.url}/webhooks/deliveries`, as("carol"));
        assert.equal(res.status, 200, res.text);
        const mine = res.json.deliveries.filter((d) => d.threadId === threadId);
        return mine.length === 3 && mine.every((d) => d.status === "delivered") && mine;
      },
      { timeoutMs: 10_000, what: "three delivered events listed" },
    );
    // Newest first: the approval's end, then the first run's two events (written together).
    assert.deepEqual([listed[0].type, listed[0].runId, listed[0].attempts], ["run.finished", approveRun, 1]);
    assert.deepEqual(
      listed.slice(1).map((d) => `${d.type} ${d.runId} ${d.attempts}`).sort(),
      [`interrupt.created ${runId} 3`, `run.finished ${runId} 1`],
    );
    const retried = listed.find((d) => d.type === "interrupt.created");
    assert.equal(retried.id, opsTries[0].headers["webhook-id"], "the listing names the webhook-id");
    assert.equal(retried.attempts, 3);
    assert.ok(Number.isInteger(retried.createdAt), JSON.stringify(retried));
    assert.ok(!("nextAttemptAt" in retried), JSON.stringify(retried));
  });
});

describe("webhooks in Slack's format", { timeout: TEST_TIMEOUT }, () => {
  const pool = suiteServers();

  test("a Slack-compatible message with the approval link", async () => {
    const receiver = await startReceiver();
    try {
      const server = await pool.start({
        label: "webhooks-slack",
        env: {
          HANDOFF_WEBHOOK_URLS: `team=${receiver.url}/slack`,
          HANDOFF_WEBHOOK_FORMAT: "slack",
          HANDOFF_WEBHOOK_ALLOW_LOOPBACK: "true",
        },
      });
      const threadId = uid("thread-slack");
      const res = await postJson(`${server.url}/agent`, { threadId, runId: uid("run"), messages: [userMessage("Refund order A5311")] });
      assert.equal(res.status, 200, res.text);
      const hits = await waitFor(() => receiver.received.length >= 2 && receiver.received, { what: "two Slack messages" });
      const first = JSON.parse(hits[0].body);
      assert.deepEqual(Object.keys(first), ["text"]);
      assert.ok(first.text.includes(`<${server.url}/?thread=${threadId}>`), first.text);
      assert.match(JSON.parse(hits[1].body).text, /finished: interrupt/);
      assertNoPanics(server);
    } finally {
      receiver.close();
    }
  });

  test("a malformed secret refuses to start, naming the variable and not the secret", async () => {
    const leaked = "whsec_not!base64!T0PSECRET";
    await assert.rejects(
      startDevServer({
        label: "webhooks-malformed",
        env: {
          HANDOFF_WEBHOOK_URLS: "ops=https://hooks.example/in",
          HANDOFF_WEBHOOK_SECRETS: `ops=${leaked}`,
        },
        startTimeoutMs: 20_000,
      }),
      (err) => {
        assert.match(err.message, /HANDOFF_WEBHOOK_SECRETS/);
        assert.ok(!err.message.includes("T0PSECRET"), err.message);
        return true;
      },
    );
  });
});
