// The store on Cloudflare Workers, through the test-only Worker (functions/agent-worker-tests,
// never deployed): the store conformance suite inside workerd (Durable Objects + KV), a
// Durable Object batch that is all-or-nothing, KV blobs deleted once unreferenced, and KV
// writes per turn as a thread grows. The deployable Worker's scenarios: worker.test.mjs.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { request, waitFor } from "./lib/devserver.mjs";
import { assertNoPanics, uid } from "./lib/flows.mjs";
import { TEST_WORKER_DIR, startWorker, stopAllWorkers } from "./lib/worker.mjs";

const TIMEOUT = 300_000;

after(stopAllWorkers);

const conformance = await startWorker({ vars: { HANDOFF_PURGE_GRACE_MS: "0" }, label: "conformance", workerDir: TEST_WORKER_DIR });
const CHECKS = (await request(`${conformance.url}/__test/conformance`)).json ?? [];

describe("Workers: store conformance inside workerd (Durable Objects + KV)", { timeout: TIMEOUT }, () => {
  const worker = conformance;
  test("the Worker lists the suite's checks", () => {
    assert.ok(CHECKS.length >= 15, `checks listed: ${JSON.stringify(CHECKS)}`);
  });
  for (const check of CHECKS) {
    test(check, async () => {
      const res = await request(`${worker.url}/__test/conformance/${check}`, { method: "POST", allow5xx: true });
      assert.equal(res.status, 200, `${check} failed in workerd: ${res.text}\n${worker.logs()}`);
    });
  }
  test("expired rows are deleted physically by the object's alarm", async () => {
    const partition = uid("purge");
    const put = await request(`${worker.url}/__test/expiring/${partition}`, { method: "POST" });
    assert.equal(put.status, 200, put.text);
    const rows = async () => (await request(`${worker.url}/__test/rows/${partition}`)).json;
    assert.deepEqual(await rows(), ["k"], "the row is stored until it expires");
    await waitFor(async () => (await rows()).length === 0, { timeoutMs: 30_000, intervalMs: 100, what: "the purge alarm" });
  });

  test("an unknown check is a 404, not a pass", async () => {
    const res = await request(`${worker.url}/__test/conformance/no_such_check`, { method: "POST" });
    assert.equal(res.status, 404);
  });
});

describe("Workers: a Durable Object batch is all-or-nothing", { timeout: TIMEOUT }, () => {
  // The batch's last INSERT carries a 2.5 MB value, which the object's SQLite refuses
  // (SQLITE_TOOBIG) after the batch's earlier statements have run: they must roll back.
  test("a statement that throws half-way leaves nothing of the batch behind", async () => {
    const res = await request(`${conformance.url}/__test/atomic-batch/${uid("atomic")}`, { method: "POST", allow5xx: true });
    assert.equal(res.status, 200, `${res.text}\n${conformance.logs()}`);
  });
});

describe("Workers: KV blobs of failed commits and superseded values are deleted", { timeout: TIMEOUT }, () => {
  // The object deletes a blob no row references HANDOFF_BLOB_GC_GRACE_MS after it was
  // released (60 s by default; 1 s here, so a blob that landed is still listable right
  // after its commit failed). Values above 1 KiB go to KV in these routes.
  let worker;
  before(async () => {
    worker = await startWorker({
      vars: { HANDOFF_PURGE_GRACE_MS: "0", HANDOFF_BLOB_GC_GRACE_MS: "1000" },
      label: "blob-gc",
      workerDir: TEST_WORKER_DIR,
    });
  });

  async function inventory(partition) {
    const res = await request(`${worker.url}/__test/blobs/${partition}`);
    assert.equal(res.status, 200, res.text);
    return res.json;
  }

  /** Waits until KV holds exactly the blobs the partition's rows reference (`count` of them, if given), all readable. */
  async function settled(partition, count, what) {
    let last;
    const started = Date.now();
    try {
      await waitFor(
        async () => {
          last = await inventory(partition);
          const same = JSON.stringify(last.stored) === JSON.stringify(last.referenced);
          return same && last.readError === null && (count === undefined || last.stored.length === count);
        },
        { timeoutMs: 20_000, intervalMs: 200, what },
      );
    } catch (err) {
      assert.fail(`${err.message}; last seen ${JSON.stringify(last)}\n${worker.logs()}`);
    }
    return { ...last, settledMs: Date.now() - started };
  }

  for (const fault of ["condition", "object"]) {
    test(`a commit that fails (${fault}) after its blob landed in KV leaves no blob behind`, async (t) => {
      const partition = uid(`orphan-${fault}`);
      const res = await request(`${worker.url}/__test/blobs/${partition}/failed-commit?fault=${fault}`, { method: "POST", allow5xx: true });
      assert.equal(res.status, 200, `${res.text}\n${worker.logs()}`);
      assert.equal(res.json.kvPuts, 1, res.text);
      assert.equal(res.json.landed.length, 1, `the blob was in KV when the commit failed: ${res.text}`);
      assert.equal(res.json.conditionFailed, fault === "condition", res.text);
      // A refused batch's blobs are released by the object itself; after any other failure the client releases them.
      assert.equal(res.json.releases, fault === "condition" ? 0 : 1, res.text);
      const left = await settled(partition, 0, `the orphaned blob of the ${fault} failure to be deleted`);
      t.diagnostic(`${res.json.error}: 1 blob landed, gone ${left.settledMs} ms later (grace 1000 ms)`);
    });
  }

  test("blobs of replaced, deleted and expired values are deleted; the live ones stay readable", async (t) => {
    const partition = uid("superseded");
    const res = await request(`${worker.url}/__test/blobs/${partition}/lifecycle`, { method: "POST" });
    assert.equal(res.status, 200, res.text);
    // 8 blobs written; left: kept, replaced (v2), twin-a (replaced) and twin-b (same bytes as twin-a's first).
    const left = await settled(partition, res.json.live.length, "superseded and expired blobs to be deleted");
    assert.equal(left.stored.length, 4);
    t.diagnostic(`8 blobs written, 4 left (all referenced, readable) ${left.settledMs} ms later`);
  });

  test("a release never deletes a blob a row references, nor one outside the partition's prefix", async () => {
    const res = await request(`${worker.url}/__test/blobs/${uid("release")}/release`, { method: "POST" });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      { ...res.json, waitedMs: undefined },
      { strayDeleted: true, referencedKept: true, foreignKept: true, readBack: true, waitedMs: undefined },
      res.text,
    );
  });

  test("a thread's turns leave in KV only the blobs its rows reference", async (t) => {
    const thread = uid("thread-gc");
    // A 100-byte inline limit sends every thread head through KV, so each commit supersedes a blob.
    let puts = 0;
    for (const text of ["hello", "Refund order W6001", "hello", "hello"]) {
      const res = await request(`${worker.url}/__test/turns/${thread}`, { method: "POST", body: { count: 1, text, inlineLimit: 100 } });
      assert.equal(res.status, 200, res.text);
      puts += res.json.turns[0].kvPuts;
    }
    // Settled: KV holds exactly the blobs the thread's rows reference, all readable.
    const left = await settled(thread, undefined, "the thread's superseded blobs to be deleted");
    t.diagnostic(`${puts} KV puts over 4 turns (5 runs); ${left.stored.length} blobs left, all referenced`);
    assert.ok(left.stored.length > 0 && left.stored.length < puts, `${puts} KV puts left ${left.stored.length} blobs: ${JSON.stringify(left)}`);
  });
});

describe("Workers: KV writes per turn as a thread grows to 1,000 messages (default 32 KiB inline limit)", { timeout: 900_000 }, () => {
  test("at most one KV write per turn at 10, 100 and 1,000 messages; a long answer costs the same at every length", async (t) => {
    const worker = await startWorker({ vars: {}, label: "turn-cost", workerDir: TEST_WORKER_DIR });
    const thread = uid("thread-long");
    const turns = async (body) => {
      let res;
      try {
        res = await request(`${worker.url}/__test/turns/${thread}`, { method: "POST", body, timeoutMs: 600_000 });
      } catch (err) {
        // Say why the connection went (the cause) and what workerd printed.
        throw new Error(`turns ${JSON.stringify(body)}: ${err.message} (${err.cause?.code ?? err.cause?.message ?? "no cause"})\n${worker.logs()}`);
      }
      assert.equal(res.status, 200, res.text);
      return res.json;
    };
    let messages = 0;
    const longAnswers = [];
    for (const [size, order] of [[10, "W7010"], [100, "W7100"], [1000, "W7999"]]) {
      while (messages < size) {
        // At most 50 turns a request: each is several Durable Object round trips.
        messages = (await turns({ count: Math.min(50, Math.ceil((size - messages) / 2)), text: "hello" })).messages;
      }
      const [chat] = (await turns({ count: 1, text: "hello" })).turns;
      const [approval] = (await turns({ count: 1, text: `Refund order ${order}` })).turns;
      const [long] = (await turns({ count: 1, text: "hello", replyBytes: 40_000 })).turns;
      const result = await turns({ count: 0, text: "" });
      messages = result.messages;
      const line = (what, c) => `${what} ${c.kvPuts} KV puts (${c.kvPutBytes} B), ${c.commits} commits, ${c.bytesWritten} B written`;
      t.diagnostic(`${chat.messagesBefore} messages: ${line("chat", chat)}; ${line("approval (interrupt + resume)", approval)}; ${line("40 KB answer", long)}`);
      assert.deepEqual(approval.runs, ["interrupt", "success"], JSON.stringify(approval));
      assert.ok(chat.kvPuts <= 1, `chat turn at ${chat.messagesBefore} messages: ${JSON.stringify(chat)}`);
      assert.ok(approval.kvPuts <= 1, `approval turn at ${approval.messagesBefore} messages: ${JSON.stringify(approval)}`);
      longAnswers.push(long.kvPuts);
    }
    assert.ok(messages >= 1000, `grew to ${messages}`);
    assert.equal(new Set(longAnswers).size, 1, `a long answer's KV puts do not depend on the history: ${longAnswers}`);
    assertNoPanics(worker);
  });
});
