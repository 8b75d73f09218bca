// Cold start of the Lambda function: process start -> first SSE byte of a new run.
//
// Each round starts the release `bootstrap` as a fresh process against a minimal Lambda
// Runtime API served here (next invocation, streaming response), with its DynamoDB store on
// a real moto_server whose table already exists (as in AWS, where SAM owns it). The clock
// starts just before spawn and stops at the first `data:` byte the function streams back.
//
// The breakdown comes from the function's own startup milestones (`handoff::startup` debug
// lines with wall-clock stamps: logs ready, HTTPS client built, AWS config loaded, serving), the
// Runtime API (when the function first polls for an invocation) and a pass-through proxy in
// front of moto that times every DynamoDB request, so the DynamoDB round trips can be taken
// out of the total: what remains is the function's own cost.
//
//   node tests/node/bench/lambda-cold-start.mjs --bin target/lambda-x86_64/agent-lambda/bootstrap [--runs 15]
// (BENCH_TRACE=1 prints each round's raw timeline on stderr.)
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import http from "node:http";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { startMoto, stopAll } from "../lib/lambda.mjs";

const { values } = parseArgs({ options: { bin: { type: "string" }, runs: { type: "string", default: "15" } } });
if (!values.bin) throw new Error("--bin <path to bootstrap> is required");
const RUNS = Number(values.runs);

/** A Function URL (API Gateway v2) event for POST /agent starting a new run. */
function invocation() {
  const body = JSON.stringify({
    threadId: `bench-${randomUUID()}`,
    runId: `run-${randomUUID()}`,
    messages: [{ id: `m-${randomUUID()}`, role: "user", content: "Refund order B1001" }],
  });
  const host = "bench.lambda-url.us-east-1.on.aws";
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
 * One Runtime API for one round: serves one invocation, then holds further /next polls.
 * Resolves `firstByte` (ms since `t0`) at the first streamed `data:`, `done` when the stream ends.
 */
function runtimeApi(t0) {
  let firstByte;
  let done;
  const result = {
    firstByte: new Promise((r) => (firstByte = r)),
    done: new Promise((r) => (done = r)),
    polledAt: undefined,
  };
  let served = false;
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url.endsWith("/invocation/next")) {
      if (served) return; // the round is over; the process is killed while it waits
      served = true;
      result.polledAt = performance.now() - t0;
      const id = randomUUID();
      res.writeHead(200, {
        "content-type": "application/json",
        "lambda-runtime-aws-request-id": id,
        "lambda-runtime-deadline-ms": String(Date.now() + 300_000),
        "lambda-runtime-invoked-function-arn": "arn:aws:lambda:us-east-1:123456789012:function:agent-lambda",
      });
      res.end(JSON.stringify(invocation()));
      return;
    }
    let text = "";
    let seen = false;
    req.on("data", (chunk) => {
      text += chunk.toString("latin1");
      if (!seen && req.url.endsWith("/response") && text.includes("data:")) {
        seen = true;
        firstByte(performance.now() - t0);
      }
    });
    req.on("end", () => {
      res.writeHead(202).end();
      if (req.url.endsWith("/response")) done(text);
      else done(`error: ${req.url} ${text}`);
    });
  });
  return { server, result };
}

/**
 * A pass-through proxy in front of moto that records [start, end] (ms since the round's t0) of
 * every DynamoDB request; `round.t0` is set per round.
 */
function dynamoProxy(target) {
  const url = new URL(target);
  const state = { t0: 0, calls: [] };
  const server = http.createServer((req, res) => {
    const start = performance.now() - state.t0;
    const upstream = http.request(
      { host: url.hostname, port: url.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode, up.headers);
        up.pipe(res);
        up.on("end", () => state.calls.push({ start, end: performance.now() - state.t0, target: req.headers["x-amz-target"] }));
      },
    );
    req.pipe(upstream);
  });
  return { server, state };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function round(moto, proxy, table, create) {
  const t0 = performance.now();
  proxy.state.t0 = t0;
  proxy.state.calls = [];
  const { server, result } = runtimeApi(t0);
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
    HANDOFF_TABLE: table,
    HANDOFF_AUTH: "none",
    RUST_LOG: "warn,handoff::startup=debug",
    ...(create ? { HANDOFF_CREATE_TABLE: "true" } : {}),
  };
  const start = performance.now();
  const child = spawn(values.bin, [], { env, stdio: ["ignore", "pipe", "inherit"] });
  // Startup milestones: wall-clock stamps turned into ms since t0.
  const marks = {};
  createInterface({ input: child.stdout }).on("line", (line) => {
    try {
      const { fields } = JSON.parse(line);
      if (fields?.stage && fields.unix_us) marks[fields.stage] = fields.unix_us / 1000 - performance.timeOrigin - t0;
    } catch {
      // not a log line
    }
  });
  const exited = new Promise((r) => child.once("exit", r));
  const spawnMs = start - t0;
  const failed = exited.then((code) => {
    throw new Error(`bootstrap exited with ${code} before answering`);
  });
  const firstByte = await Promise.race([result.firstByte, failed]);
  const body = await Promise.race([result.done, failed]);
  child.kill("SIGKILL");
  await exited;
  server.closeAllConnections();
  server.close();
  if (!body.includes("RUN_FINISHED")) throw new Error(`the run did not finish:\n${body.slice(-2000)}`);
  const calls = proxy.state.calls.filter((c) => c.end <= firstByte);
  if (process.env.BENCH_TRACE) console.error(JSON.stringify({ spawnMs, marks, polledAt: result.polledAt, calls, firstByte }));
  const dynamo = calls.reduce((sum, c) => sum + (c.end - c.start), 0);
  const since = (a, b) => (a === undefined || b === undefined ? NaN : b - a);
  return {
    total: firstByte - spawnMs,
    excludingDynamo: firstByte - spawnMs - dynamo,
    processInit: since(spawnMs, marks["logs ready"]),
    tlsSetup: since(marks["logs ready"], marks["https client built"]),
    awsConfig: since(marks["https client built"], marks["dynamodb client ready"]),
    appSetup: since(marks["dynamodb client ready"], marks["serving"]),
    runtimePoll: since(marks["serving"], result.polledAt),
    toFirstStoreCall: since(result.polledAt, calls[0]?.start),
    dynamo,
    dynamoCalls: calls.length,
    rest: since(calls[0]?.start, firstByte) - dynamo,
  };
}

const moto = await startMoto();
const { server: proxyServer, state } = dynamoProxy(moto.endpoint);
await new Promise((r) => proxyServer.listen(0, "127.0.0.1", r));
const proxy = { endpoint: `http://127.0.0.1:${proxyServer.address().port}`, state };
try {
  const table = `bench_${Date.now()}`;
  // Not measured: creates the table and wakes moto's lazily loaded DynamoDB backend.
  await round(moto, proxy, table, true);
  const samples = [];
  for (let i = 0; i < RUNS; i++) samples.push(await round(moto, proxy, table, false));
  const median = (key) => percentile([...samples.map((s) => s[key])].sort((a, b) => a - b), 50);
  const sorted = samples.map((s) => s.total).sort((a, b) => a - b);
  const fmt = (ms) => `${ms.toFixed(1)} ms`;
  console.log(`lambda cold start (process start -> first SSE byte of a new run, moto, ${RUNS} runs): p50 ${fmt(percentile(sorted, 50))}, max ${fmt(sorted.at(-1))}, min ${fmt(sorted[0])}`);
  console.log(`  p50 excluding DynamoDB round trips: ${fmt(median("excludingDynamo"))}`);
  console.log("  breakdown (medians of each stage, so they need not add up exactly):");
  const rows = [
    ["processInit", "process init (spawn -> main, logs ready)"],
    ["tlsSetup", "TLS setup (rustls/ring HTTPS client built)"],
    ["awsConfig", "DynamoDB client configured (region, credentials from the env)"],
    ["appSetup", "agent, store client and router setup"],
    ["runtimePoll", "serving -> first Runtime API poll"],
    ["toFirstStoreCall", "invocation -> first DynamoDB request (signing, connect)"],
    ["dynamo", `DynamoDB round trips before the first byte (${median("dynamoCalls")} calls, moto)`],
    ["rest", "engine and agent work between store calls, to first byte"],
  ];
  for (const [key, label] of rows) console.log(`    ${label.padEnd(64)} ${fmt(median(key))}`);
} finally {
  proxyServer.closeAllConnections();
  proxyServer.close();
  await stopAll();
}
