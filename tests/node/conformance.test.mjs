// Replays the corpus produced by the Rust side through the official
// @ag-ui/client pipeline and checks that both agree on every stream.
//
//   AGUI_CORPUS_DIR=<dir> node --test        (default: ../../target/agui-corpus
//                                              relative to this file)
//
// manifest.json: [{name, file, expect: "accept"|"reject", ours: "accept"|"reject",
//                  threadId, runId, resume?, note?}]

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runOfficial } from "./lib/official.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const corpusDir = process.env.AGUI_CORPUS_DIR
  ? path.resolve(process.env.AGUI_CORPUS_DIR)
  : path.resolve(here, "../../target/agui-corpus");
const manifestPath = path.join(corpusDir, "manifest.json");

const VERDICTS = ["accept", "reject"];

function loadManifest() {
  if (!fs.existsSync(manifestPath)) {
    throw new Error(
      `AG-UI corpus not found: ${manifestPath} does not exist. ` +
        `Run the Rust corpus generator first (it writes target/agui-corpus/), ` +
        `or point AGUI_CORPUS_DIR at a corpus directory.`,
    );
  }
  const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
  assert.ok(Array.isArray(manifest), `${manifestPath}: expected a JSON array`);
  assert.ok(manifest.length > 0, `${manifestPath}: the corpus is empty`);
  const names = new Set();
  for (const [i, e] of manifest.entries()) {
    const where = `${manifestPath} entry #${i} (${e?.name ?? "unnamed"})`;
    for (const k of ["name", "file", "threadId", "runId"]) {
      assert.equal(typeof e[k], "string", `${where}: "${k}" must be a string`);
    }
    assert.ok(VERDICTS.includes(e.expect), `${where}: "expect" must be accept|reject`);
    assert.ok(VERDICTS.includes(e.ours), `${where}: "ours" must be accept|reject`);
    assert.ok(e.resume === undefined || Array.isArray(e.resume), `${where}: "resume" must be an array`);
    assert.ok(!names.has(e.name), `${where}: duplicate name`);
    names.add(e.name);
  }
  return manifest;
}

function describeRun(r) {
  const lines = [`  error: ${r.error ?? "(none)"}`];
  if (r.warnings.length) lines.push("  warnings:", ...r.warnings.map((w) => `    - ${w}`));
  if (r.runErrors.length) lines.push(`  RUN_ERROR events: ${JSON.stringify(r.runErrors)}`);
  lines.push(`  events seen: ${r.events.map((e) => e.type).join(", ") || "(none)"}`);
  return lines.join("\n");
}

test(`AG-UI corpus conformance (${corpusDir})`, async (t) => {
  const manifest = loadManifest();
  for (const entry of manifest) {
    const label = entry.note ? `${entry.name} - ${entry.note}` : entry.name;
    await t.test(label, async () => {
      const bytes = fs.readFileSync(path.resolve(corpusDir, entry.file));
      const r = await runOfficial(bytes, {
        threadId: entry.threadId,
        runId: entry.runId,
        resume: entry.resume,
      });
      const official = r.accepted ? "accept" : "reject";
      const context = `[${entry.name}] expect=${entry.expect}, official client=${official}, ours=${entry.ours}\n${describeRun(r)}`;

      if (entry.resume !== undefined && r.request !== undefined) {
        assert.deepEqual(r.request.resume, entry.resume, `${context}\n  the client did not send the manifest's resume`);
      }

      if (entry.expect === "accept") {
        assert.equal(official, "accept", `official client rejected a stream expected to be accepted\n${context}`);
        assert.deepEqual(r.warnings, [], `official client accepted with ${r.warnings.length} warning(s)\n${context}`);
        assert.equal(entry.ours, "accept", `our verifier rejects a stream the official client accepts\n${context}`);
      } else {
        assert.ok(
          official === "reject" && entry.ours === "reject",
          `verdicts disagree on a stream expected to be rejected: official client=${official}, ours=${entry.ours}\n${context}`,
        );
      }
    });
  }
});
