// The durable Node reference of `make bench` (bench/reference-server.mjs --durable, issue 54)
// gives the guarantees it is compared for: an interrupt survives the process being killed
// between the run and its resume, the answer is claimed once, and the refund is recorded
// once. The in-memory reference, killed the same way, forgets the interrupt: the check
// below can tell the two apart.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { createInterface } from "node:readline";

const SERVER = new URL("./bench/reference-server.mjs", import.meta.url).pathname;

async function start(args, dataDir) {
  const child = spawn(process.execPath, [SERVER, ...args], {
    env: { ...process.env, PORT: "0", HANDOFF_DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = await once(createInterface({ input: child.stdout }), "line");
  return { child, url: line.match(/http:\/\/\S+/)[0] };
}

async function killHard({ child }) {
  child.kill("SIGKILL");
  await once(child, "exit");
}

const input = (threadId, extra) => ({
  threadId,
  runId: `run-${Math.random().toString(16).slice(2)}`,
  messages: [{ id: "u1", role: "user", content: "Refund order B77" }],
  ...extra,
});

async function post(url, body) {
  const res = await fetch(`${url}/agent`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  const events = res.ok ? text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6))) : [];
  return { status: res.status, events };
}

async function ledger(url) {
  return (await fetch(`${url}/demo/orders/B77`)).json();
}

/** Run 1 on one process, kill -9, the approval on a second process over the same directory. */
async function runKillResume(args) {
  const dataDir = mkdtempSync(join(tmpdir(), "reference-"));
  try {
    const first = await start(args, dataDir);
    const threadId = `t-${Date.now()}`;
    const run = await post(first.url, input(threadId));
    const finished = run.events.at(-1);
    assert.equal(finished.outcome.type, "interrupt");
    const interruptId = finished.outcome.interrupts[0].id;
    await killHard(first);

    const second = await start(args, dataDir);
    try {
      const answer = { resume: [{ interruptId, status: "resolved", payload: { approved: true } }] };
      const resumed = await post(second.url, input(threadId, answer));
      const replayed = resumed.status === 200 ? await post(second.url, input(threadId, answer)) : undefined;
      return { resumed, replayed, ledger: await ledger(second.url) };
    } finally {
      await killHard(second);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

test("the durable reference resumes after kill -9, claims the answer once and refunds once", async () => {
  const { resumed, replayed, ledger } = await runKillResume(["--durable"]);
  assert.equal(resumed.status, 200);
  assert.deepEqual(
    resumed.events.map((e) => e.type).filter((t) => t === "TOOL_CALL_RESULT" || t === "RUN_FINISHED"),
    ["TOOL_CALL_RESULT", "RUN_FINISHED"],
  );
  assert.equal(JSON.parse(resumed.events.find((e) => e.type === "TOOL_CALL_RESULT").content).status, "refunded");
  assert.equal(replayed.status, 409, "a replayed answer finds nothing to claim");
  assert.equal(ledger.refunds, 1);
  assert.equal(ledger.idempotencyKeys.length, 1);
});

test("the in-memory reference forgets the interrupt when killed", async () => {
  const { resumed, ledger } = await runKillResume([]);
  assert.equal(resumed.status, 409);
  assert.equal(ledger.refunds, 0);
});
