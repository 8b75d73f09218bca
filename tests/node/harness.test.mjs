// Self-test of lib/official.mjs: pins the client behaviours documented at the
// top of that file, so a change in @ag-ui/client shows up here first.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildResumeArray } from "@ag-ui/client";
import { runOfficial, runOfficialAgainst, serveSse, splitForDelivery, parseSse } from "./lib/official.mjs";

const sample = path.join(path.dirname(fileURLToPath(import.meta.url)), "sample-corpus");
const read = (f) => fs.readFileSync(path.join(sample, f));
const sse = (...events) =>
  Buffer.from(events.map((e, i) => `data: ${JSON.stringify({ timestamp: 1767225600000 + i, ...e })}\n\n`).join(""));
const T = "thread-h";
const started = (runId, extra = {}) => ({ type: "RUN_STARTED", threadId: T, runId, protocolVersion: "1.0", ...extra });
const finished = (runId, extra = {}) => ({ type: "RUN_FINISHED", threadId: T, runId, ...extra });

test("sample corpus gets the verdicts its manifest expects", async () => {
  const manifest = JSON.parse(read("manifest.json"));
  for (const e of manifest) {
    const r = await runOfficial(read(e.file), e);
    assert.equal(r.accepted ? "accept" : "reject", e.expect, `${e.name}: ${r.error}`);
    if (e.expect === "accept") assert.deepEqual(r.warnings, [], e.name);
  }
});

test("a rejected stream: onRunFailed, console.error, runAgent rejects", async () => {
  const r = await runOfficial(read("neg-content-before-start.sse"), { threadId: T, runId: "r1" });
  assert.equal(r.accepted, false);
  assert.equal(r.failed, true);
  assert.match(r.error, /^AGUIError: Cannot send 'TEXT_MESSAGE_CONTENT'/);
  assert.deepEqual(r.warnings, [`[console.error] Agent execution failed: ${r.error}`]);
  assert.deepEqual(r.events.map((e) => e.type), ["RUN_STARTED"]); // applied before the bad frame
});

test("deviations are console.warn only; the run still resolves", async () => {
  const r = await runOfficial(
    sse(started("r2", { protocolVersion: "1.1", bogus: 1 }), { type: "NOT_A_TYPE" }, finished("r2")),
    { threadId: T, runId: "r2" },
  );
  assert.equal(r.accepted, true);
  assert.equal(r.warnings.length, 3, r.warnings.join("\n"));
  assert.match(r.warnings.join("\n"), /\[ag-ui\]\[enforce\] Removed unrecognised material at '\/bogus'/);
  assert.match(r.warnings.join("\n"), /\[ag-ui\]\[enforce\] Dropping unrecognised event 'NOT_A_TYPE'/);
  assert.match(r.warnings.join("\n"), /\[ag-ui\] The producer speaks protocol 1\.1/);
});

test("SUPPRESS_TRANSFORMATION_WARNINGS is neutralised during a run", async () => {
  process.env.SUPPRESS_TRANSFORMATION_WARNINGS = "true";
  try {
    const r = await runOfficial(sse(started("r3", { bogus: 1 }), finished("r3")), { threadId: T, runId: "r3" });
    assert.equal(r.warnings.length, 1);
  } finally {
    delete process.env.SUPPRESS_TRANSFORMATION_WARNINGS;
  }
});

test("producer RUN_ERROR and truncation both resolve (accepted, no outcome)", async () => {
  const err = await runOfficial(sse(started("r4"), { type: "RUN_ERROR", message: "boom", code: "x" }), { threadId: T, runId: "r4" });
  assert.equal(err.accepted, true);
  assert.equal(err.outcome, undefined);
  assert.deepEqual(err.runErrors.map((e) => e.message), ["boom"]);
  assert.deepEqual(err.warnings, []);

  const cut = await runOfficial(sse(started("r5"), { type: "TEXT_MESSAGE_START", messageId: "m" }), { threadId: T, runId: "r5" });
  assert.equal(cut.accepted, true);
  assert.equal(cut.outcome, undefined);
});

test("threadId is optional in the constructor and never checked against the stream", async () => {
  const r = await runOfficial(read("text-plain.sse"), { runId: "other-run" });
  assert.equal(r.accepted, true);
  assert.match(r.request.threadId, /^[0-9a-f-]{36}$/); // minted uuid, not the stream's
  assert.equal(r.request.runId, "other-run");
  assert.equal(r.request.protocolVersion, "1.0");
  assert.equal("resume" in r.request, false);
});

test("multi-byte UTF-8 split across chunks survives", async () => {
  const bytes = read("text-unicode-split.sse");
  const chunks = splitForDelivery(bytes);
  assert.ok(chunks.some((c) => c.at(-1) === 0xc3), "a chunk must end inside é");
  assert.ok(chunks.some((c) => c.at(-2) === 0xe6), "a chunk must end inside 漢");
  const r = await runOfficial(bytes, { threadId: T, runId: "run-utf8" });
  assert.equal(r.agent.messages[0].content, "café漢字 🦀");
  assert.deepEqual(r.events, parseSse(bytes));
});

test("interrupt -> pre-flight refusal -> resume with buildResumeArray on a reused agent", async () => {
  const first = await runOfficial(read("interrupt-tool-call.sse"), { threadId: T, runId: "run-intr" });
  assert.equal(first.outcome.outcome, "interrupt");
  const agent = first.agent;
  assert.deepEqual(agent.pendingInterrupts.map((i) => i.id), ["int-1"]);
  assert.deepEqual(agent.state, { step: "awaiting-approval" });

  // Without resume the client refuses before sending anything, silently.
  const refused = await runOfficial(read("resume-after-interrupt.sse"), { runId: "run-resume", agent });
  assert.equal(refused.accepted, false);
  assert.equal(refused.failed, false);
  assert.equal(refused.request, undefined);
  assert.deepEqual(refused.warnings, []);
  assert.match(refused.error, /pending interrupt\(s\) not addressed by resume: int-1/);

  const resume = buildResumeArray(agent.pendingInterrupts, { "int-1": { status: "resolved", payload: { approved: true } } });
  const server = await serveSse(read("resume-after-interrupt.sse"));
  try {
    const r = await runOfficialAgainst(server.url, { runId: "run-resume", resume }, { agent });
    assert.equal(r.accepted, true, r.error);
    assert.deepEqual(r.warnings, []);
    assert.equal(r.agent, agent);
    assert.deepEqual(server.requests[0].body.resume, resume);
    assert.deepEqual(agent.pendingInterrupts, []);
    assert.deepEqual(agent.messages.map((m) => m.role), ["assistant", "tool", "assistant"]);
  } finally {
    await server.close();
  }
});
