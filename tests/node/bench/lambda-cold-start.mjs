// Cold start of the Lambda function: process start -> first SSE byte of a new run, and the
// warm request's time to first byte.
//
// Each round starts the release `bootstrap` as a fresh process against a minimal Lambda
// Runtime API served here (next invocation, streaming response), with its DynamoDB store on
// a real moto_server whose table already exists (as in AWS, where SAM owns it). By default
// DynamoDB is behind TLS, as in AWS: a local HTTPS proxy in front of moto whose certificate a
// throwaway CA signed (tests/node/lib/tls.mjs), trusted through AWS_CA_BUNDLE (`--dynamo http`
// for the plain-HTTP proxy). The clock starts just before spawn and stops at the first `data:`
// byte the function streams back. Then the same process gets a second invocation (another new
// run): its time from being handed the invocation to the first `data:` byte is the warm TTFB.
//
// The breakdown comes from the function's own startup milestones (`handoff::startup` debug
// lines with wall-clock stamps: logs ready, HTTPS client built, DynamoDB client ready, store
// connected (the Init warm-up read), serving), the Runtime API (when the function first polls
// for an invocation) and the proxy, which times every TCP connection, TLS handshake and
// DynamoDB request, so the DynamoDB round trips can be taken out of the total: what remains
// is the function's own cost.
//
//   node tests/node/bench/lambda-cold-start.mjs --bin target/lambda-x86_64/agent-lambda/bootstrap [--runs 15] [--dynamo tls|http]
// (BENCH_TRACE=1 prints each round's raw timeline on stderr.)
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { startMoto, stopAll } from "../lib/lambda.mjs";
import { makeTestCerts, startRecordingProxy } from "../lib/tls.mjs";

const { values } = parseArgs({
  options: { bin: { type: "string" }, runs: { type: "string", default: "15" }, dynamo: { type: "string", default: "tls" } },
});
if (!values.bin) throw new Error("--bin <path to bootstrap> is required");
if (!["tls", "http"].includes(values.dynamo)) throw new Error("--dynamo is tls or http");
const RUNS = Number(values.runs);
const TARGET_MS = 50;
/** The Function URL's host the invocations carry. */
const HOST = "bench.lambda-url.us-east-1.on.aws";

/** A Function URL (API Gateway v2) event for POST /agent starting a new run. */
function invocation() {
  const body = JSON.stringify({
    threadId: `bench-${randomUUID()}`,
    runId: `run-${randomUUID()}`,
    messages: [{ id: `m-${randomUUID()}`, role: "user", content: "Refund order B1001" }],
  });
  const host = HOST;
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: "/agent",
    rawQueryString: "",
    headers: { "content-type": "application/json", accept: "text/event-stream", host },
    requestContext: {
      accountId: "123456789012",
      apiId: "bench",
      domainName: host,
      domainPrefix: "bench",
      http: { method: "POST", path: "/agent", protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "bench" },
      requestId: randomUUID(),
      routeKey: "$default",
      stage: "$default",
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    body,
    isBase64Encoded: false,
  };
}

/**
 * One Runtime API for one round: serves `count` invocations one after the other, then holds
 * further /next polls. Per invocation: `handedAt` (ms since `t0` when its /next answer was
 * written), `firstByte` (ms since `t0` at the first streamed `data:`) and `done` (the streamed
 * body), the last two as promises.
 */
function runtimeApi(t0, count) {
  const invocations = Array.from({ length: count }, () => {
    const entry = { handedAt: undefined };
    entry.firstByte = new Promise((resolve, reject) => Object.assign(entry, { resolveFirstByte: resolve, rejectFirstByte: reject }));
    entry.firstByte.catch(() => {}); // awaited in order; a rejection before that is not unhandled
    entry.done = new Promise((r) => (entry.resolveDone = r));
    return entry;
  });
  const byId = new Map();
  let handed = 0;
  const server = http.createServer((req, res) => {
    if (process.env.BENCH_TRACE) console.error(`runtime api: ${req.method} ${req.url} at ${(performance.now() - t0).toFixed(1)} ms`);
    if (req.method === "GET" && req.url.endsWith("/invocation/next")) {
      if (handed === count) return; // the round is over; the process is killed while it waits
      const entry = invocations[handed++];
      const id = randomUUID();
      byId.set(id, entry);
      res.writeHead(200, {
        "content-type": "application/json",
        "lambda-runtime-aws-request-id": id,
        "lambda-runtime-deadline-ms": String(Date.now() + 300_000),
        "lambda-runtime-invoked-function-arn": "arn:aws:lambda:us-east-1:123456789012:function:agent-lambda",
      });
      res.end(JSON.stringify(invocation()));
      entry.handedAt = performance.now() - t0;
      return;
    }
    // /runtime/invocation/{id}/response (or /error), /runtime/init/error
    const entry = byId.get(req.url.split("/").at(-2)) ?? invocations[0];
    let text = "";
    let seen = false;
    req.on("data", (chunk) => {
      text += chunk.toString("latin1");
      if (!seen && req.url.endsWith("/response") && text.includes("data:")) {
        seen = true;
        entry.resolveFirstByte(performance.now() - t0);
      }
    });
    req.on("end", () => {
      res.writeHead(202).end();
      if (!seen) entry.rejectFirstByte(new Error(`no SSE in the function's answer to ${req.url}:\n${text.slice(-2000)}`));
      if (req.url.endsWith("/response")) entry.resolveDone(text);
      else entry.resolveDone(`error: ${req.url} ${text}`);
    });
  });
  return { server, invocations };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Creates `table` in moto from `infra/dynamodb-table.json` (the definition the store's
 * conformance test checks against `DynamoStore::create_table`): a release bootstrap does
 * not create tables (`HANDOFF_CREATE_TABLE` is for debug builds).
 */
async function createTable(endpoint, table) {
  const definition = JSON.parse(readFileSync(new URL("../../../infra/dynamodb-table.json", import.meta.url), "utf8"));
  const res = await fetch(endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/x-amz-json-1.0",
      "x-amz-target": "DynamoDB_20120810.CreateTable",
      // moto reads the region (and account) from the credential scope; it checks no signature.
      authorization: "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0",
    },
    body: JSON.stringify({ ...definition, TableName: table }),
    signal: AbortSignal.timeout(30_000),
  });
  if (!res.ok) throw new Error(`CreateTable ${table}: ${res.status} ${await res.text()}`);
}

async function round(proxy, table) {
  const t0 = performance.now();
  proxy.connections.length = 0;
  proxy.calls.length = 0;
  const { server, invocations } = runtimeApi(t0, 2);
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const env = {
    ...process.env,
    AWS_LAMBDA_RUNTIME_API: `127.0.0.1:${server.address().port}`,
    AWS_LAMBDA_FUNCTION_NAME: "agent-lambda",
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: "256",
    AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_REGION: "us-east-1",
    AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint,
    ...(proxy.caPath ? { AWS_CA_BUNDLE: proxy.caPath } : {}),
    HANDOFF_TABLE: table,
    HANDOFF_AUTH: "none",
    // Without authentication the function answers only the hosts it is told about.
    HANDOFF_ALLOWED_HOSTS: HOST,
    RUST_LOG: "warn,handoff::startup=debug",
  };
  const start = performance.now();
  const child = spawn(values.bin, [], { env, stdio: ["ignore", "pipe", "pipe"] });
  // Startup milestones (the logs are on stderr): wall-clock stamps turned into ms since t0.
  // Every other line is passed on.
  const marks = {};
  const onLine = (line) => {
    try {
      // The fields are top-level in today's JSON lines (under `fields` in older ones).
      const parsed = JSON.parse(line);
      const fields = parsed.fields ?? parsed;
      if (fields?.stage && fields.unix_us) {
        marks[fields.stage] = fields.unix_us / 1000 - performance.timeOrigin - t0;
        return;
      }
    } catch {
      // not a log line
    }
    process.stderr.write(`${line}\n`);
  };
  createInterface({ input: child.stdout }).on("line", onLine);
  createInterface({ input: child.stderr }).on("line", onLine);
  const exited = new Promise((r) => child.once("exit", r));
  const spawnMs = start - t0;
  const failed = exited.then((code) => {
    throw new Error(`bootstrap exited with ${code} before answering`);
  });
  const [cold, warm] = invocations;
  const firstByte = await Promise.race([cold.firstByte, failed]);
  const body = await Promise.race([cold.done, failed]);
  const warmFirstByte = await Promise.race([warm.firstByte, failed]);
  const warmBody = await Promise.race([warm.done, failed]);
  child.kill("SIGKILL");
  await exited;
  server.closeAllConnections();
  server.close();
  for (const text of [body, warmBody]) {
    if (!text.includes("RUN_FINISHED")) throw new Error(`the run did not finish:\n${text.slice(-2000)}`);
  }
  const rel = (ms) => ms - t0;
  const calls = proxy.calls.map((c) => ({ ...c, start: rel(c.start), end: rel(c.end) }));
  const connections = proxy.connections.map((c) => ({ ...c, at: rel(c.at), secureAt: c.secureAt === undefined ? undefined : rel(c.secureAt) }));
  const before = calls.filter((c) => c.end <= firstByte);
  const inRun = before.filter((c) => c.start >= cold.handedAt);
  if (process.env.BENCH_TRACE) console.error(JSON.stringify({ spawnMs, marks, handedAt: cold.handedAt, connections, calls, firstByte, warmHandedAt: warm.handedAt, warmFirstByte }));
  const sum = (list) => list.reduce((total, c) => total + (c.end - c.start), 0);
  const dynamo = sum(before);
  const since = (a, b) => (a === undefined || b === undefined ? NaN : b - a);
  const handshakes = connections.filter((c) => c.at < firstByte);
  return {
    total: firstByte - spawnMs,
    excludingDynamo: firstByte - spawnMs - dynamo,
    warmTtfb: warmFirstByte - warm.handedAt,
    coldTtfb: firstByte - cold.handedAt,
    processInit: since(spawnMs, marks["logs ready"]),
    tlsSetup: since(marks["logs ready"], marks["https client built"]),
    awsConfig: since(marks["https client built"], marks["dynamodb client ready"]),
    warmUp: since(marks["dynamodb client ready"], marks["store connected"]),
    handshake: handshakes.length ? since(handshakes[0].at, handshakes[0].secureAt ?? handshakes[0].at) : NaN,
    appSetup: since(marks["store connected"] ?? marks["dynamodb client ready"], marks["serving"]),
    runtimePoll: since(marks["serving"], cold.handedAt),
    toFirstStoreCall: since(cold.handedAt, inRun[0]?.start),
    dynamo,
    dynamoCalls: before.length,
    connectionsInRun: connections.filter((c) => c.at >= cold.handedAt && c.at < firstByte).length,
    rest: since(inRun[0]?.start, firstByte) - sum(inRun),
  };
}

const moto = await startMoto();
const certs = values.dynamo === "tls" ? makeTestCerts() : undefined;
const proxy = await startRecordingProxy(moto.endpoint, { certs });
proxy.caPath = certs?.caPath;
try {
  const table = `bench_${Date.now()}`;
  await createTable(moto.endpoint, table);
  // Not measured: wakes moto's lazily loaded DynamoDB backend and the page cache.
  await round(proxy, table);
  const samples = [];
  for (let i = 0; i < RUNS; i++) samples.push(await round(proxy, table));
  const sortedBy = (key) => samples.map((s) => s[key]).sort((a, b) => a - b);
  const median = (key) => percentile(sortedBy(key), 50);
  const fmt = (ms) => `${ms.toFixed(1)} ms`;
  const dynamo = values.dynamo === "tls" ? "DynamoDB (moto) behind TLS" : "DynamoDB (moto) over plain HTTP";
  const total = sortedBy("total");
  const warm = sortedBy("warmTtfb");
  console.log(`lambda cold start (process start -> first SSE byte of a new run, ${dynamo}, ${RUNS} runs): p50 ${fmt(percentile(total, 50))}, max ${fmt(total.at(-1))}, min ${fmt(total[0])}`);
  console.log(`  target p50 <= ${TARGET_MS} ms: ${percentile(total, 50) <= TARGET_MS ? "met" : "NOT met"}; max <= ${TARGET_MS} ms: ${total.at(-1) <= TARGET_MS ? "met" : "NOT met"}`);
  console.log(`  warm request (second invocation, same process) invocation -> first SSE byte: p50 ${fmt(percentile(warm, 50))}, max ${fmt(warm.at(-1))}`);
  console.log(`  first request (after Init) invocation -> first SSE byte: p50 ${fmt(median("coldTtfb"))}; new connections during it: p50 ${median("connectionsInRun")}`);
  console.log(`  p50 excluding DynamoDB round trips: ${fmt(median("excludingDynamo"))}`);
  console.log("  breakdown (medians of each stage, so they need not add up exactly):");
  const rows = [
    ["processInit", "process init (spawn -> main, logs ready)"],
    ["tlsSetup", "HTTPS client built (rustls/ring, AWS_CA_BUNDLE read)"],
    ["awsConfig", "DynamoDB client configured (region, credentials from the env)"],
    ["warmUp", "Init warm-up read (connect, TLS handshake, GetItem)"],
    ["handshake", "  of which TCP accept -> TLS handshake done (proxy side)"],
    ["appSetup", "agent and router setup"],
    ["runtimePoll", "serving -> first invocation handed over"],
    ["toFirstStoreCall", "invocation -> first DynamoDB request of the run"],
    ["dynamo", `DynamoDB round trips before the first byte (${median("dynamoCalls")} calls incl. Init's, moto)`],
    ["rest", "engine and agent work between the run's store calls, to first byte"],
  ];
  for (const [key, label] of rows) console.log(`    ${label.padEnd(68)} ${fmt(median(key))}`);
} finally {
  await proxy.close();
  certs?.remove();
  await stopAll();
}
