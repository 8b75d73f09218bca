// Cold start of the Lambda function: process start -> first SSE byte of a new run.
//
// Each round starts the release `bootstrap` as a fresh process against a minimal Lambda
// Runtime API served here (next invocation, streaming response), with its DynamoDB store on
// a real moto_server whose table already exists (as in AWS, where SAM owns it). The clock
// starts just before spawn and stops at the first `data:` byte the function streams back.
//
//   node tests/node/bench/lambda-cold-start.mjs --bin target/lambda-x86_64/agent-lambda/bootstrap [--runs 15]
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import http from "node:http";
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
  };
  let served = false;
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url.endsWith("/invocation/next")) {
      if (served) return; // the round is over; the process is killed while it waits
      served = true;
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

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function round(moto, table, create) {
  const t0 = performance.now();
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
    AWS_ENDPOINT_URL_DYNAMODB: moto.endpoint,
    HANDOFF_TABLE: table,
    RUST_LOG: "warn",
    ...(create ? { HANDOFF_CREATE_TABLE: "true" } : {}),
  };
  const start = performance.now();
  const child = spawn(values.bin, [], { env, stdio: ["ignore", "ignore", "inherit"] });
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
  return firstByte - spawnMs;
}

const moto = await startMoto();
try {
  const table = `bench_${Date.now()}`;
  // Not measured: creates the table and wakes moto's lazily loaded DynamoDB backend.
  await round(moto, table, true);
  const samples = [];
  for (let i = 0; i < RUNS; i++) samples.push(await round(moto, table, false));
  const sorted = [...samples].sort((a, b) => a - b);
  const fmt = (ms) => `${ms.toFixed(1)} ms`;
  console.log(`lambda cold start (process start -> first SSE byte of a new run, moto, ${RUNS} runs): p50 ${fmt(percentile(sorted, 50))}, max ${fmt(sorted.at(-1))}, min ${fmt(sorted[0])}`);
} finally {
  await stopAll();
}
