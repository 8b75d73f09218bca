// Byte identity of our SSE encoder with the official @ag-ui/encoder (issue 16) on
// the encoder-benchmark corpus: 100,000 events of the mix (text deltas with
// CJK and escapes, tool-call arguments, JSON Patch deltas, ~2 KB snapshots, others).
//
//   cargo run -q -p agui-protocol --example sse-corpus -- target/agui-sse-corpus
//   AGUI_SSE_CORPUS_DIR=<dir> node --test encoder-corpus.test.mjs
//                             (default: ../../target/agui-sse-corpus relative to this file)
//
// events.jsonl: one event per line as serde_json serializes it.
// ours.sse:     the same events through agui_protocol::sse::SseEncoder.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { EventEncoder } from "@ag-ui/encoder";

const here = path.dirname(fileURLToPath(import.meta.url));
const corpusDir = process.env.AGUI_SSE_CORPUS_DIR
  ? path.resolve(process.env.AGUI_SSE_CORPUS_DIR)
  : path.resolve(here, "../../target/agui-sse-corpus");

function load(name) {
  const file = path.join(corpusDir, name);
  if (!fs.existsSync(file)) {
    throw new Error(
      `encoder corpus not found: ${file} does not exist. Run ` +
        `\`cargo run -q -p agui-protocol --example sse-corpus -- target/agui-sse-corpus\` ` +
        `first, or point AGUI_SSE_CORPUS_DIR at a corpus directory.`,
    );
  }
  return fs.readFileSync(file);
}

// Splits `data: …\n\n` frames without decoding: compares raw bytes.
function frames(bytes) {
  const out = [];
  let start = 0;
  for (;;) {
    const end = bytes.indexOf("\n\n", start);
    if (end < 0) break;
    out.push(bytes.subarray(start, end + 2));
    start = end + 2;
  }
  assert.equal(start, bytes.length, "ours.sse ends in an incomplete frame");
  return out;
}

test(`official encoder reproduces our SSE bytes (${corpusDir})`, () => {
  const lines = load("events.jsonl").toString("utf8").split("\n");
  assert.equal(lines.pop(), "", "events.jsonl must end with a newline");
  const ours = load("ours.sse");
  const ourFrames = frames(ours);
  assert.equal(ourFrames.length, lines.length, "ours.sse and events.jsonl disagree on the event count");
  assert.ok(lines.length > 0, "the corpus is empty");

  const encoder = new EventEncoder();
  const types = new Map();
  const chunks = [];
  for (const [i, line] of lines.entries()) {
    const event = JSON.parse(line);
    types.set(event.type, (types.get(event.type) ?? 0) + 1);
    const official = Buffer.from(encoder.encodeBinary(event));
    if (!official.equals(ourFrames[i])) {
      assert.fail(
        `event #${i} (${event.type}) differs\n  official: ${JSON.stringify(official.toString("utf8"))}\n` +
          `  ours:     ${JSON.stringify(ourFrames[i].toString("utf8"))}`,
      );
    }
    chunks.push(official);
  }
  // The whole stream too, so nothing between frames can hide.
  assert.ok(Buffer.concat(chunks).equals(ours), "concatenated streams differ");
  for (const t of ["TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS", "STATE_DELTA", "STATE_SNAPSHOT"]) {
    assert.ok(types.get(t) > 0, `the corpus has no ${t}`);
  }
});
