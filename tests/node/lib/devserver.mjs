// End-to-end helpers: real dev-server processes, a recording fetch for the
// official client, raw HTTP helpers and the `agui-verify` binary.
//
//   HANDOFF_BIN_DIR=<dir with dev-server and agui-verify>
//   (default: ../../target/debug relative to tests/node)
//
// * startDevServer({env, dataDir}) spawns `dev-server` with PORT=0 and a fresh
//   temporary HANDOFF_DATA_DIR (unless one is given, e.g. to share a SQLite
//   file between processes), reads the URL from the first stdout line, waits
//   for GET /healthz, and registers the process so stopAllServers() (call it
//   from an `after` hook) stops it: SIGTERM, then SIGKILL after a bounded
//   wait. A process `exit` hook SIGKILLs anything still alive, so a crashed
//   test run leaves no orphan behind. Temporary data dirs are removed.
// * Recorder.fetch is passed to HttpAgent({fetch}) (supported by
//   @ag-ui/client 1.0.0): every response the official client consumes is teed,
//   so the raw bytes are kept and can be checked with agui-verify.
// * verifyStream(bytes, {threadId, runId}) runs `agui-verify` (strict unless
//   `official: true`) and returns its JSON report and exit code.

import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { HttpAgent } from "@ag-ui/client";

const here = path.dirname(fileURLToPath(import.meta.url));

export const BIN_DIR = process.env.HANDOFF_BIN_DIR
  ? path.resolve(process.env.HANDOFF_BIN_DIR)
  : path.resolve(here, "../../../target/debug");
export const DEV_SERVER_BIN = path.join(BIN_DIR, "dev-server");
export const AGUI_VERIFY_BIN = path.join(BIN_DIR, "agui-verify");

/** Throws a clear error when the binaries were not built. */
export function assertBinaries() {
  for (const bin of [DEV_SERVER_BIN, AGUI_VERIFY_BIN]) {
    if (!fs.existsSync(bin)) {
      throw new Error(
        `${bin} not found. Build it first: cargo build -p dev-server -p handoff-tests ` +
          `(or point HANDOFF_BIN_DIR at the directory holding dev-server and agui-verify).`,
      );
    }
  }
}

// ---------------------------------------------------------------------------
// Bounded polling

/**
 * Polls `probe` (sync or async) every `intervalMs` until it returns a truthy
 * value, which is returned. Throws after `timeoutMs` with `what` and the last
 * probe error, if any.
 */
export async function waitFor(probe, { timeoutMs = 30_000, intervalMs = 50, what = "condition", detail } = {}) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (err) {
      if (err?.fatal) throw err;
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const why = lastError ? ` (last error: ${lastError.message ?? lastError})` : "";
      // `detail` (e.g. the process's output) says why, when the probe alone cannot.
      const more = detail ? `\n${detail()}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}${more}`);
    }
    await sleep(intervalMs);
  }
}

// ---------------------------------------------------------------------------
// Dev-server processes

const live = new Set(); // DevServer instances not yet stopped
const ownedDirs = new Set();

process.on("exit", () => {
  // Last resort (synchronous): never leave a dev-server behind.
  for (const server of live) {
    try {
      process.kill(server.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  for (const dir of ownedDirs) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort
    }
  }
});

/** A fresh temporary directory, removed by stopAllServers() / at exit. */
export function makeDataDir(prefix = "handoff-e2e-") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  ownedDirs.add(dir);
  return dir;
}

const LOG_LIMIT = 256 * 1024;

class DevServer {
  constructor(child, { dataDir, label }) {
    this.child = child;
    this.pid = child.pid;
    this.dataDir = dataDir;
    this.label = label;
    this.url = undefined;
    this.stdout = "";
    this.stderr = "";
    this.exit = new Promise((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
    });
    this.exited = undefined;
    this.exit.then((e) => {
      this.exited = e;
      live.delete(this);
    });
    const keep = (key) => (chunk) => {
      if (this[key].length < LOG_LIMIT) this[key] += chunk.toString("utf8");
    };
    child.stdout.on("data", keep("stdout"));
    child.stderr.on("data", keep("stderr"));
  }

  /** Log tail for failure messages. */
  logs(max = 4000) {
    const tail = (s) => (s.length > max ? `...${s.slice(-max)}` : s);
    return `[${this.label} pid ${this.pid}] stderr:\n${tail(this.stderr)}`;
  }

  /** SIGTERM, then SIGKILL if it is still alive after `graceMs`. Resolves once it exited. */
  async stop({ graceMs = 5_000 } = {}) {
    if (this.exited) return this.exited;
    this.signal("SIGTERM");
    const timer = sleep(graceMs, "timeout", { ref: false });
    const first = await Promise.race([this.exit, timer]);
    if (first === "timeout") {
      this.signal("SIGKILL");
      const hard = await Promise.race([this.exit, sleep(10_000, "timeout", { ref: false })]);
      if (hard === "timeout") throw new Error(`${this.label} (pid ${this.pid}) survived SIGKILL`);
    }
    return this.exit;
  }

  /** SIGKILL (a crash): resolves once it exited. */
  async kill() {
    if (this.exited) return this.exited;
    this.signal("SIGKILL");
    const r = await Promise.race([this.exit, sleep(10_000, "timeout", { ref: false })]);
    if (r === "timeout") throw new Error(`${this.label} (pid ${this.pid}) survived SIGKILL`);
    return r;
  }

  signal(sig) {
    try {
      process.kill(this.pid, sig);
    } catch (err) {
      if (err.code !== "ESRCH") throw err;
    }
  }
}

/**
 * Starts a dev-server. opts: {env: extra env vars, dataDir: share an existing
 * dir (default: a fresh temp dir), label, startTimeoutMs, bin: another binary
 * built on `handoff::server`, e.g. the starter's}. Resolves to a
 * DevServer {url, pid, dataDir, stop(), kill(), logs()} once /healthz answers.
 */
export async function startDevServer({ env = {}, dataDir, label = "dev-server", startTimeoutMs = 60_000, bin = DEV_SERVER_BIN } = {}) {
  assertBinaries();
  const dir = dataDir ?? makeDataDir();
  const childEnv = { ...process.env, RUST_LOG: process.env.RUST_LOG ?? "info", ...env, PORT: "0", HANDOFF_DATA_DIR: dir };
  if (env.HANDOFF_STORE === undefined) delete childEnv.HANDOFF_STORE;
  const child = spawn(bin, [], { env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  const server = new DevServer(child, { dataDir: dir, label });
  live.add(server);
  const spawnError = new Promise((_, reject) => child.once("error", reject));
  spawnError.catch(() => {});
  try {
    const deadline = Date.now() + startTimeoutMs;
    const url = await Promise.race([
      spawnError,
      waitFor(
        () => {
          if (server.exited) {
            throw Object.assign(new Error(`exited early (${JSON.stringify(server.exited)})`), { fatal: true });
          }
          const m = /^Handoff dev server listening on (http:\/\/[0-9.]+:\d+)/m.exec(server.stdout);
          return m?.[1];
        },
        { timeoutMs: startTimeoutMs, intervalMs: 20, what: `${label} to print its URL` },
      ),
    ]);
    server.url = url;
    await waitFor(
      async () => {
        if (server.exited) {
          throw Object.assign(new Error(`exited early (${JSON.stringify(server.exited)})`), { fatal: true });
        }
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) });
        const body = await res.json();
        return res.status === 200 && body.status === "ok";
      },
      { timeoutMs: Math.max(1_000, deadline - Date.now()), intervalMs: 50, what: `${label} /healthz` },
    );
    return server;
  } catch (err) {
    await server.kill().catch(() => {});
    err.message = `${label} did not start: ${err.message}\n${server.logs()}`;
    throw err;
  }
}

/** Stops every server still running (SIGTERM then SIGKILL) and removes temp dirs. */
export async function stopAllServers() {
  const errors = [];
  await Promise.all(
    [...live].map((s) => s.stop().catch((e) => errors.push(e))),
  );
  for (const dir of ownedDirs) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
      ownedDirs.delete(dir);
    } catch (e) {
      errors.push(e);
    }
  }
  if (errors.length) throw errors[0];
}

/** The servers still running (for leak checks). */
export function liveServers() {
  return [...live];
}

// ---------------------------------------------------------------------------
// agui-verify

/**
 * Runs agui-verify on `bytes`. opts: {threadId, runId, official}. Returns
 * {ok, exitCode, report}; `report` is the parsed JSON line.
 */
export function verifyStream(bytes, { threadId, runId, official = false } = {}) {
  assertBinaries();
  const args = [];
  if (official) args.push("--official");
  if (threadId !== undefined) args.push("--thread", threadId);
  if (runId !== undefined) args.push("--run", runId);
  return new Promise((resolve, reject) => {
    const child = spawn(AGUI_VERIFY_BIN, args, { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      let report;
      try {
        report = JSON.parse(out.trim().split("\n").pop());
      } catch {
        reject(new Error(`agui-verify printed no JSON (exit ${code}, signal ${signal}): ${out} ${err}`));
        return;
      }
      if ((code === 0) !== (report.ok === true)) {
        reject(new Error(`agui-verify exit code ${code} disagrees with its report ${out}`));
        return;
      }
      resolve({ ok: report.ok === true, exitCode: code, report });
    });
    child.stdin.on("error", () => {}); // EPIPE if it exits early; the report says why
    child.stdin.end(Buffer.from(bytes));
  });
}

// ---------------------------------------------------------------------------
// Recording fetch for the official client

/**
 * Records every HTTP exchange made through `recorder.fetch`:
 * {url, method, request (parsed JSON body), status, headers, bytes: Promise<Buffer>}.
 * The response body is teed: the client reads one branch, the recorder drains
 * the other.
 */
export class Recorder {
  constructor() {
    this.records = [];
    this.fetch = async (url, init = {}) => {
      let request;
      try {
        request = typeof init.body === "string" ? JSON.parse(init.body) : undefined;
      } catch {
        request = undefined;
      }
      const record = { url: String(url), method: init.method ?? "GET", request };
      this.records.push(record);
      const res = await fetch(url, init);
      record.status = res.status;
      record.headers = Object.fromEntries(res.headers.entries());
      if (!res.body) {
        record.bytes = Promise.resolve(Buffer.alloc(0));
        return res;
      }
      const [forClient, forRecord] = res.body.tee();
      record.bytes = new Response(forRecord).arrayBuffer().then((ab) => Buffer.from(ab));
      record.bytes.catch(() => {}); // surfaced when awaited
      return new Response(forClient, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
  }
}

/** A fresh official HttpAgent whose requests go through `recorder`. */
export function makeAgent(url, { recorder, threadId, state, messages, headers } = {}) {
  return new HttpAgent({
    url,
    threadId,
    initialState: state,
    initialMessages: messages,
    headers,
    fetch: recorder.fetch,
  });
}

// ---------------------------------------------------------------------------
// Raw HTTP

/**
 * A request with fetch. Returns {status, headers, bytes, text, json}. `json`
 * is the parsed body when the response is JSON. Throws on a 5xx: no request in
 * these tests may produce one.
 */
export async function request(url, { method = "GET", body, headers = {}, timeoutMs = 60_000, allow5xx = false } = {}) {
  const init = { method, headers: { ...headers }, signal: AbortSignal.timeout(timeoutMs) };
  if (body !== undefined) {
    if (typeof body === "string" || body instanceof Uint8Array || body instanceof ReadableStream) {
      init.body = body;
      if (body instanceof ReadableStream) init.duplex = "half";
    } else {
      init.body = JSON.stringify(body);
      if (!Object.keys(init.headers).some((k) => k.toLowerCase() === "content-type")) {
        init.headers["content-type"] = "application/json";
      }
    }
  }
  let res;
  let bytes;
  try {
    res = await fetch(url, init);
    bytes = Buffer.from(await res.arrayBuffer());
  } catch (err) {
    // undici says only "fetch failed"; the cause (ECONNRESET, a closed socket, a timeout) is what tells.
    if (err?.cause) err.message = `${err.message} (${method} ${url}): ${err.cause.code ?? ""} ${err.cause.message ?? err.cause}`;
    throw err;
  }
  const text = bytes.toString("utf8");
  const out = { status: res.status, headers: Object.fromEntries(res.headers.entries()), bytes, text };
  if ((res.headers.get("content-type") ?? "").includes("application/json")) {
    try {
      out.json = JSON.parse(text);
    } catch {
      out.json = undefined;
    }
  }
  if (!allow5xx && res.status >= 500) {
    throw new Error(`${method} ${url} answered ${res.status}: ${text.slice(0, 500)}`);
  }
  return out;
}

/** POST /agent (or another path) with a JSON body. */
export function postJson(url, body, opts = {}) {
  return request(url, { ...opts, method: "POST", body });
}

/** `data:` JSON frames of an AG-UI SSE body (comments and blank frames skipped). */
export function sseEvents(bytes) {
  const text = Buffer.from(bytes).toString("utf8");
  const events = [];
  for (const frame of text.split("\n\n")) {
    const data = frame
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(l.startsWith("data: ") ? 6 : 5));
    if (data.length) events.push(JSON.parse(data.join("\n")));
  }
  return events;
}

/** Named SSE frames: [{event, id, data (raw string), comments}], in order. */
export function sseFrames(bytes) {
  const text = Buffer.from(bytes).toString("utf8");
  const frames = [];
  for (const frame of text.split("\n\n")) {
    if (frame.trim() === "") continue;
    let event;
    let id;
    const data = [];
    const comments = [];
    for (const line of frame.split("\n")) {
      if (line.startsWith(":")) comments.push(line);
      else if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("id:")) id = line.slice(3).trim();
      else if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
    }
    frames.push({ event, id, data: data.length ? data.join("\n") : undefined, comments });
  }
  return frames;
}

/**
 * A POST with node:http and a Content-Length, the whole body written at once
 * (as a client resending a long history does). It resolves only once the
 * response has ended AND the body was handed to the socket in full; a write
 * EPIPE or a reset rejects it even after the status arrived, so a server that
 * answers without reading the body and closes fails here (fetch hides some of
 * these). `agent` (node:http Agent) lets consecutive posts share a
 * connection. Returns {status, headers, text, json}.
 */
export function postWhole(url, body, { headers = {}, agent, timeoutMs = 30_000 } = {}) {
  const u = new URL(url);
  const bytes = Buffer.from(body);
  return new Promise((resolve, reject) => {
    let response;
    let sent = false;
    const settle = () => {
      if (response && sent) {
        clearTimeout(timer);
        resolve(response);
      }
    };
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: "POST",
        agent,
        headers: { ...headers, "content-length": String(bytes.length) },
      },
      (res) => {
        const parts = [];
        res.on("data", (d) => parts.push(d));
        res.on("error", fail);
        res.on("end", () => {
          const text = Buffer.concat(parts).toString("utf8");
          let json;
          if ((res.headers["content-type"] ?? "").includes("application/json")) {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          response = { status: res.statusCode, headers: res.headers, text, json };
          settle();
        });
      },
    );
    function fail(err) {
      clearTimeout(timer);
      req.destroy();
      reject(err);
    }
    const timer = setTimeout(() => fail(new Error(`no complete exchange for the POST ${url} within ${timeoutMs} ms`)), timeoutMs);
    req.on("error", fail);
    req.end(bytes, () => {
      sent = true;
      settle();
    });
  });
}

/**
 * A POST with node:http and `Transfer-Encoding: chunked` (no Content-Length):
 * writes `chunks`, then ends the request only when `end` is true. With
 * `end: false` the request stays open, so the answer must come as soon as the
 * server has seen enough (e.g. a body crossing the limit); the socket is
 * destroyed after the response. undici's fetch is not used here because it
 * reports a write EPIPE instead of the response when the server answers
 * before reading the whole upload. Returns {status, headers, text, json}.
 */
export function postChunked(url, chunks, { headers = {}, end = true, timeoutMs = 30_000 } = {}) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: "POST",
        headers: { ...headers, "transfer-encoding": "chunked" },
      },
      (res) => {
        const parts = [];
        res.on("data", (d) => parts.push(d));
        res.on("error", reject);
        res.on("end", () => {
          clearTimeout(timer);
          req.destroy();
          const text = Buffer.concat(parts).toString("utf8");
          let json;
          if ((res.headers["content-type"] ?? "").includes("application/json")) {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          resolve({ status: res.statusCode, headers: res.headers, text, json });
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no response to the chunked POST ${url} within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    for (const c of chunks) req.write(c);
    if (end) req.end();
  });
}
