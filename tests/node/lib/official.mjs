// Drives the OFFICIAL AG-UI client pipeline (@ag-ui/client 1.0.0, HttpAgent)
// against SSE bytes produced by our Rust encoder, or against a live endpoint.
//
// How @ag-ui/client 1.0.0 behaves (observed against the installed package and
// pinned in harness.test.mjs, except three points read from the package's
// source map: the HTTP non-2xx path, subscriber-exception logging, and
// RUN_ERROR leaving pendingInterrupts alone):
//
// * A stream the client rejects (SSE/JSON parse failure, schema enforcement
//   failure such as `metadata: null` (a ZodError), chunk-expansion or
//   verifyEvents failure (an AGUIError), HTTP non-2xx) goes through
//   catchError -> onError: subscriber.onRunFailed({error}) is called, then
//   console.error("Agent execution failed:", error) is logged, then
//   runAgent() REJECTS with that same error. Events already applied before the
//   bad frame are still delivered to onEvent.
// * Pre-flight refusals are different: if agent.pendingInterrupts is
//   non-empty and `resume` does not answer every id (or answers an expired
//   one with anything but "cancelled"), runAgent() rejects with an AGUIError
//   "Thread has N pending interrupt(s) not addressed by resume: ..." BEFORE any
//   HTTP request, without calling onRunFailed and without logging anything.
// * Warnings are plain console.warn calls, never callbacks: enforcement
//   ("[ag-ui][enforce] Dropping unrecognised event ...", "... Removed
//   unrecognised material at '/path' ..."), the compatibility shim
//   ("[ag-ui][compat] Converting deprecated ..."), the protocol-version check
//   ("[ag-ui] The producer speaks protocol 1.1; ..."), and un-prefixed
//   apply-stage warnings ("TEXT_MESSAGE_CONTENT: No message found ...",
//   "Failed to apply state patch: ..."). The run still resolves.
//   The env var SUPPRESS_TRANSFORMATION_WARNINGS silences the [enforce] and
//   [compat] ones, so this harness unsets it for the duration of each run.
// * An exception thrown inside a subscriber callback is swallowed by the
//   client and logged as console.error("Subscriber error:", e); it does not
//   fail the run. Captured here like any other console output.
// * A producer RUN_ERROR does NOT reject: runAgent() resolves, the event goes
//   to onRunErrorEvent, onRunFinishedEvent is not called. A truncated stream
//   (no terminal event) also resolves quietly with no outcome. So
//   `accepted: true` means "the client took the stream", not "the run
//   succeeded": look at `outcome` / `runErrors` for that.
// * threadId is NOT needed in the HttpAgent constructor (a uuid is minted when
//   absent) and cannot be passed to runAgent(); we pass it to the constructor
//   so the POST body carries the corpus' threadId. The client never compares
//   the stream's threadId/runId with the input's.
// * runAgent({runId}) uses the given runId (a uuid otherwise); `resume` is put
//   on the POST body only when given. State/messages come from the
//   constructor (initialState / initialMessages), not from runAgent().
// * The SSE parser splits frames on "\n\n" only (CRLF framing fails with a
//   JSON parse error) and decodes UTF-8 in streaming mode, so a multi-byte
//   character split across network chunks is fine.
// * agent.pendingInterrupts is set by an interrupt outcome and cleared by any
//   other RUN_FINISHED (not by RUN_ERROR), so reusing an agent after an
//   interrupted run requires `resume`. runOfficial() therefore builds a fresh
//   HttpAgent per call unless `agent` is passed in.
// * Surprise: if the server kills the socket while the client is still
//   reading (e.g. after the client already failed the run), undici's
//   reader.cancel() rejects with "TypeError: terminated" and the client
//   rethrows it from a .catch(), an UNHANDLED rejection that crashes node.
//   serveSse().close() therefore waits for every response to finish.

import http from "node:http";
import { format } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { HttpAgent } from "@ag-ui/client";

// ---------------------------------------------------------------------------
// SSE helpers

/**
 * Minimal strict SSE reader mirroring the official parser: frames end at
 * "\n\n", only `data:` lines count (one optional space), multiple data lines
 * are joined with "\n". Returns the parsed JSON of each frame. Throws on a
 * frame that is not JSON. An unterminated tail is parsed too (like the client).
 */
export function parseSse(buffer) {
  const text = Buffer.isBuffer(buffer) || buffer instanceof Uint8Array
    ? new TextDecoder("utf-8").decode(buffer)
    : String(buffer);
  const frames = text.split("\n\n");
  const events = [];
  for (const frame of frames) {
    const data = frame
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5));
    if (data.length === 0) continue;
    events.push(JSON.parse(data.join("\n")));
  }
  return events;
}

/**
 * Cut points used to deliver `bytes` in several network chunks: inside the
 * first 2-byte and the first 3/4-byte UTF-8 character (after the lead byte
 * and after the second byte respectively), between the two "\n" of the first
 * frame boundary, plus evenly spaced cuts. Returns the list of chunks.
 */
export function splitForDelivery(bytes, pieces = 6) {
  const cuts = new Set();
  const len = bytes.length;
  let seen2 = false;
  let seen3 = false;
  for (let i = 0; i < len && !(seen2 && seen3); i++) {
    const b = bytes[i];
    if (b >= 0xc0 && b < 0xe0 && !seen2) {
      cuts.add(i + 1); // after the lead byte of a 2-byte char
      seen2 = true;
    } else if (b >= 0xe0 && !seen3) {
      cuts.add(i + 2); // in the middle of a 3- or 4-byte char
      seen3 = true;
    }
  }
  const boundary = bytes.indexOf("\n\n");
  if (boundary >= 0) cuts.add(boundary + 1);
  for (let k = 1; k < pieces; k++) cuts.add(Math.floor((len * k) / pieces));
  const sorted = [...cuts].filter((c) => c > 0 && c < len).sort((a, b) => a - b);
  const chunks = [];
  let start = 0;
  for (const c of sorted) {
    chunks.push(bytes.subarray(start, c));
    start = c;
  }
  chunks.push(bytes.subarray(start));
  return chunks.filter((c) => c.length > 0);
}

/**
 * Loopback HTTP server answering every request with `bytes`, written in
 * several chunks with small async gaps. Records each request's parsed JSON
 * body in `requests`.
 */
export async function serveSse(bytes, { contentType = "text/event-stream", gapMs = 2 } = {}) {
  const body = Buffer.from(bytes);
  const requests = [];
  const inflight = new Set();
  const server = http.createServer((req, res) => {
    inflight.add(new Promise((resolve) => res.once("close", resolve)));
    const parts = [];
    req.on("data", (d) => parts.push(d));
    req.on("end", async () => {
      const raw = Buffer.concat(parts).toString("utf8");
      let json;
      try {
        json = raw ? JSON.parse(raw) : undefined;
      } catch {
        json = undefined;
      }
      requests.push({ method: req.method, url: req.url, headers: req.headers, body: json, raw });
      res.socket?.setNoDelay(true);
      res.writeHead(200, { "content-type": contentType, "cache-control": "no-cache" });
      res.flushHeaders();
      for (const chunk of splitForDelivery(body)) {
        if (res.destroyed) return;
        res.write(chunk);
        await sleep(gapMs);
      }
      res.end();
    });
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    // Waits for every response to finish (or for the client to hang up)
    // before closing: killing a socket the client is still reading makes
    // undici's reader.cancel() reject, which @ag-ui/client rethrows as an
    // unhandled rejection.
    close: async () => {
      await Promise.all(inflight);
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

// ---------------------------------------------------------------------------
// Console capture (global, so runs are serialised through a queue)

let queue = Promise.resolve();

function serialised(fn) {
  const run = queue.then(fn, fn);
  queue = run.catch(() => {});
  return run;
}

async function withConsoleCapture(fn) {
  const warnings = [];
  const saved = { warn: console.warn, error: console.error };
  const suppress = process.env.SUPPRESS_TRANSFORMATION_WARNINGS;
  delete process.env.SUPPRESS_TRANSFORMATION_WARNINGS;
  // Errors are rendered as "Class: message" (no stack) to keep reports short.
  const text = (args) => format(...args.map((a) => (a instanceof Error ? errorText(a) : a)));
  console.warn = (...args) => warnings.push(text(args));
  console.error = (...args) => warnings.push(`[console.error] ${text(args)}`);
  try {
    const value = await fn();
    await new Promise((r) => setImmediate(r)); // let trailing finalizers log
    return { value, warnings };
  } finally {
    console.warn = saved.warn;
    console.error = saved.error;
    if (suppress !== undefined) process.env.SUPPRESS_TRANSFORMATION_WARNINGS = suppress;
  }
}

// ---------------------------------------------------------------------------
// Runs

const plain = (v) => (v === undefined ? undefined : structuredClone(v));

/**
 * Runs the official HttpAgent against `url`.
 *
 * input: RunAgentParameters for runAgent(): {runId?, resume?, tools?, context?,
 *        forwardedProps?}.
 * opts:  {agent?} an existing HttpAgent to reuse (interrupt -> resume flows;
 *        its url is pointed at `url`), otherwise a fresh one is built from
 *        {threadId?, state?, messages?, headers?}.
 *
 * Returns {accepted, error?, warnings, events, outcome?, runErrors, failed,
 * result?, agent}. accepted = runAgent resolved and onRunFailed was not
 * called. failed = onRunFailed was called. outcome = the last
 * onRunFinishedEvent params ({outcome, result?, pendingToolCallIds?,
 * interrupts?, event}). events = post-expansion events seen by onEvent.
 */
export function runOfficialAgainst(url, input = {}, opts = {}) {
  return serialised(async () => {
    const agent =
      opts.agent ??
      new HttpAgent({
        url,
        threadId: opts.threadId,
        initialState: opts.state,
        initialMessages: opts.messages,
        headers: opts.headers,
      });
    if (opts.agent) agent.url = url;

    const events = [];
    const runErrors = [];
    let outcome;
    let failed = false;
    let failure;
    const subscriber = {
      onEvent: ({ event }) => {
        events.push(plain(event));
      },
      onRunFinishedEvent: ({ event, outcome: kind, result, pendingToolCallIds, interrupts }) => {
        outcome = plain({ outcome: kind, result, pendingToolCallIds, interrupts, event });
        for (const k of Object.keys(outcome)) if (outcome[k] === undefined) delete outcome[k];
      },
      onRunErrorEvent: ({ event }) => {
        runErrors.push(plain(event));
      },
      onRunFailed: ({ error }) => {
        failed = true;
        failure = error;
      },
    };

    const params = {};
    for (const k of ["runId", "resume", "tools", "context", "forwardedProps"]) {
      if (input[k] !== undefined) params[k] = input[k];
    }

    const { value, warnings } = await withConsoleCapture(async () => {
      try {
        return { ok: true, result: await agent.runAgent(params, subscriber) };
      } catch (error) {
        return { ok: false, error };
      }
    });

    const err = value.ok ? failure : value.error;
    const out = {
      accepted: value.ok && !failed,
      warnings,
      events,
      runErrors,
      failed,
      agent,
    };
    if (err !== undefined) out.error = errorText(err);
    if (outcome !== undefined) out.outcome = outcome;
    if (value.ok) out.result = value.result;
    return out;
  });
}

/** "AGUIError: ...", "ZodError: ...", "SyntaxError: ..." (AGUIError's .name is just "Error"). */
function errorText(err) {
  if (err instanceof Error) {
    const cls = err.constructor?.name && err.constructor.name !== "Error" ? err.constructor.name : err.name;
    return `${cls}: ${err.message}`;
  }
  return String(err);
}

/**
 * Serves `sseBytes` from a loopback server and runs the official client
 * against it. opts: {threadId, runId, state?, messages?, resume?, tools?,
 * context?, forwardedProps?, agent?, contentType?}. Returns the
 * runOfficialAgainst() shape plus `request` (the parsed POST body the client
 * sent, undefined when pre-flight refused the run).
 */
export async function runOfficial(sseBytes, opts = {}) {
  const server = await serveSse(sseBytes, { contentType: opts.contentType });
  try {
    const { runId, resume, tools, context, forwardedProps } = opts;
    const res = await runOfficialAgainst(
      server.url,
      { runId, resume, tools, context, forwardedProps },
      opts,
    );
    res.request = server.requests[0]?.body;
    return res;
  } finally {
    await server.close();
  }
}
