// OpenTelemetry traces as a collector receives them: the dev server (http/protobuf, the
// default, and http/json) and a Lambda under `cargo lambda watch` export to a real OTLP
// receiver (lib/otlp.mjs). The LLM agent's approval flow yields `invoke_agent`, `chat`,
// `execute_tool`, `handoff.effect` and `handoff.store` spans with the GenAI attributes,
// under the caller's `traceparent`, which the model requests carry on. Nothing of a
// message, a tool argument or a key is exported or logged. On Lambda the spans leave
// before the invocation ends, not on the batch timer. On Workers the same spans are JSON
// lines on the console, read back from workerd's output.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { postJson, request, sseEvents, startDevServer, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { rawRefundInterrupt, uid, userMessage } from "./lib/flows.mjs";
import { startFraudAgent } from "./lib/a2a-remote.mjs";
import { startLambda, startMoto, stopAll } from "./lib/lambda.mjs";
import { llmEnv, refundScript, standIn } from "./lib/model-standin.mjs";
import { startWorker, stopAllWorkers } from "./lib/worker.mjs";
import { ancestors, startCollector, waitForSpans } from "./lib/otlp.mjs";

const TIMEOUT = 600_000;
const SPAN_KIND = { internal: 1, server: 2, client: 3 };

function traceparent() {
  const traceId = randomBytes(16).toString("hex");
  const spanId = randomBytes(8).toString("hex");
  return { traceId, spanId, header: `00-${traceId}-${spanId}-01` };
}

const byName = (spans, name, pred = () => true) => spans.filter((s) => s.name === name && pred(s));

/**
 * The LLM refund on `server` with a `traceparent` on both requests; returns what the
 * collector got for the two runs once both run spans are in.
 */
async function tracedRefund(server, collector, orderId) {
  const secret = `never-exported-${randomBytes(4).toString("hex")}`;
  const threadId = uid("thread-otel");
  const runId = uid("run");
  const caller = traceparent();
  // The first request names itself; the second gets an id from the server.
  const chosenRequestId = `otel-${randomBytes(6).toString("hex")}`;
  const headers = { traceparent: caller.header, "x-request-id": chosenRequestId };
  const first = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage(`Please refund order ${orderId} ${secret}`)] }, { headers });
  assert.equal(first.status, 200, first.text);
  const interrupt = sseEvents(first.bytes).at(-1).outcome.interrupts[0];
  const resumeId = uid("run");
  const second = traceparent();
  const resumed = await postJson(`${server.url}/agent`, {
    threadId, runId: resumeId, messages: [],
    resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }],
  }, { headers: { traceparent: second.header } });
  assert.equal(sseEvents(resumed.bytes).at(-1).outcome?.type, "success", resumed.text);
  const runs = await waitForSpans(collector, (spans) => {
    const found = [runId, resumeId].map((id) => byName(spans, `invoke_agent refund-demo`, (s) => s.attributes["handoff.run.id"] === id)[0]);
    return found.every(Boolean) && found;
  }, { what: "both run spans" });
  const requestIds = [first.headers["x-request-id"], resumed.headers["x-request-id"]];
  return { threadId, runId, resumeId, caller, second, runs, secret, chosenRequestId, requestIds };
}

/**
 * The JSON lines `proc` has written to stderr once both of the flow's `request` lines are
 * there: a host writes a request's line when its response ends, and the pipe may bring it
 * after the client has read the response.
 */
async function flowLogLines(proc, flow) {
  const lines = () => proc.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  const ofFlow = (l) => l.message === "request" && l.thread_id === flow.threadId;
  await waitFor(() => lines().filter(ofFlow).length >= 2, { timeoutMs: 10_000, what: "both request log lines" })
    .catch(() => {}); // assertLogLines says what is missing
  return lines();
}

/**
 * The JSON log lines of a refund flow: one `request` line per request and one `run ended`
 * line per run, joined by request and trace ids, with the run's store calls on both.
 */
function assertLogLines(lines, flow, { route = "/agent" } = {}) {
  const ended = lines.filter((l) => l.message === "run ended" && l.thread_id === flow.threadId);
  assert.deepEqual(ended.map((l) => [l.run_id, l.outcome]), [[flow.runId, "interrupt"], [flow.resumeId, "success"]]);
  const requests = lines.filter((l) => l.message === "request" && l.thread_id === flow.threadId);
  assert.equal(requests.length, 2, JSON.stringify(requests));
  assert.equal(flow.requestIds[0], flow.chosenRequestId, "a well-formed X-Request-Id is kept and echoed");
  assert.match(flow.requestIds[1] ?? "", /\S/, "the server names a request that did not");
  const traces = [flow.caller.traceId, flow.second.traceId];
  for (const [i, runId] of [flow.runId, flow.resumeId].entries()) {
    const request = requests.find((l) => l.run_id === runId);
    const run = ended.find((l) => l.run_id === runId);
    assert.ok(request, `a request line for ${runId}`);
    assert.equal(request.request_id, flow.requestIds[i]);
    assert.equal(run.request_id, flow.requestIds[i], "the run's line names its request");
    assert.equal(request.trace_id, traces[i]);
    assert.equal(run.trace_id, traces[i]);
    assert.deepEqual([request.method, request.route, request.status, request.tenant], ["POST", route, 200, "default"]);
    assert.equal(request.aborted, false);
    assert.ok(Number.isInteger(run.duration_ms) && Number.isInteger(request.duration_ms));
    // The request's line is written once its stream has ended, so it has the run's total.
    assert.ok(run.store_calls >= 3, `store calls of ${runId}: ${run.store_calls}`);
    assert.equal(request.store_calls, run.store_calls);
  }
}

/** Every `gen_ai.usage.*_tokens` of `span` was sent as an integer (input and output at least). */
function assertTokenCounts(span) {
  const counts = Object.keys(span.attributes).filter((k) => /^gen_ai\.usage\..+_tokens$/.test(k));
  assert.ok(counts.includes("gen_ai.usage.input_tokens") && counts.includes("gen_ai.usage.output_tokens"), `${span.name}: ${counts}`);
  for (const key of counts) {
    assert.equal(span.types[key], "int", `${span.name}: ${key} = ${JSON.stringify(span.attributes[key])}`);
  }
}

function assertRunTrace(collector, { threadId, runId, resumeId, caller, second, runs, secret }, { store, model }) {
  // One snapshot: a worker's view parses its output afresh on every read.
  const spans = collector.spans;
  const [proposing, approved] = runs;
  // The run span: GenAI's invoke_agent with the thread as the conversation.
  for (const [run, id, outcome] of [[proposing, runId, "interrupt"], [approved, resumeId, "success"]]) {
    assert.equal(run.attributes["gen_ai.operation.name"], "invoke_agent");
    assert.equal(run.attributes["gen_ai.agent.name"], "refund-demo");
    assert.equal(run.attributes["gen_ai.conversation.id"], threadId);
    assert.equal(run.attributes["handoff.run.id"], id);
    assert.equal(run.attributes["handoff.run.outcome"], outcome);
    assert.equal(run.attributes["handoff.tenant"], "default");
    assert.equal(run.kind, SPAN_KIND.internal);
    assertTokenCounts(run);
  }
  // Each continues its caller's trace: the request span's parent is the caller's span.
  assert.equal(proposing.traceId, caller.traceId);
  assert.equal(approved.traceId, second.traceId);
  const chain = ancestors(spans, proposing);
  assert.equal(chain[0]?.kind, SPAN_KIND.server, "the run's parent is the request span");
  assert.equal(chain[0].attributes["http.response.status_code"], 200);
  assert.equal(chain[0].types["http.response.status_code"], "int", "the status code as an integer");
  assert.equal(chain.at(-1).parentSpanId, caller.spanId, "the request span continues the caller's");

  // Model calls: chat {model}, a client span under the run, with usage and the first chunk.
  const under = (s, parent) => ancestors(spans, s).some((a) => a.spanId === parent.spanId);
  const inRun = (run) => (s) => s.traceId === run.traceId && under(s, run);
  const chats = byName(spans, "chat stand-in-1", inRun(proposing));
  assert.equal(chats.length, 2, "two model calls in the proposing run");
  for (const chat of chats) {
    assert.equal(chat.kind, SPAN_KIND.client);
    assert.equal(chat.attributes["gen_ai.operation.name"], "chat");
    assert.equal(chat.attributes["gen_ai.provider.name"], "openai");
    assert.equal(chat.attributes["gen_ai.request.model"], "stand-in-1");
    // Typed as the conventions type them: an array of strings, and integer counts.
    assert.deepEqual(chat.attributes["gen_ai.response.finish_reasons"], ["tool_calls"]);
    assert.equal(chat.types["gen_ai.response.finish_reasons"], "array<string>");
    assert.ok(chat.attributes["gen_ai.usage.input_tokens"] > 0, JSON.stringify(chat.attributes));
    assertTokenCounts(chat);
    assert.ok(chat.attributes["gen_ai.response.time_to_first_chunk"] >= 0);
  }
  // The model was asked under the chat span: its requests carry the trace on.
  const asked = model.requests[0].headers.traceparent;
  assert.match(asked ?? "", new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-01$`), "model request without traceparent");
  assert.ok(chats.some((c) => asked.includes(c.spanId)), "the model request's parent is a chat span");

  // Tools and effects: the lookup ran in the proposing run, the refund after approval.
  const lookup = byName(spans, "execute_tool get_order", inRun(proposing))[0];
  assert.ok(lookup, "execute_tool get_order");
  assert.equal(lookup.attributes["gen_ai.tool.name"], "get_order");
  assert.match(lookup.attributes["gen_ai.tool.call.id"], /\S/);
  const refund = byName(spans, "execute_tool refund_order", inRun(approved))[0];
  assert.ok(refund, "execute_tool refund_order");
  const effect = byName(spans, "handoff.effect", (s) => under(s, refund))[0];
  assert.ok(effect, "the refund's effect span");
  assert.equal(effect.attributes["handoff.effect.replayed"], false);
  assert.equal(effect.attributes["handoff.effect.outcome"], "executed");
  assert.match(effect.attributes["handoff.effect.key"], /^tool-/);

  // Store calls: one span per call, with the backend and whether it was conditional.
  const calls = spans.filter((s) => s.name.startsWith("handoff.store ") && inRun(approved)(s));
  assert.ok(calls.length >= 3, `store calls under the approved run: ${calls.length}`);
  for (const call of calls) {
    assert.equal(call.attributes["db.system.name"], store);
    assert.equal(call.name, `handoff.store ${call.attributes["db.operation.name"]}`);
    assert.equal(call.attributes["handoff.store.outcome"], "ok");
  }
  assert.ok(calls.some((c) => c.attributes["handoff.store.conditional"] === true), "a conditional commit");

  // What is never exported: the user's words, tool arguments, the model's key.
  const received = collector.received();
  assert.ok(!received.includes(secret), "message content was exported");
  assert.ok(!received.includes("sk-stand-in"), "the model key was exported");
  assert.ok(!received.includes('"amountCents"') && !received.includes("amountCents\\"), "tool arguments were exported");
}

describe("OpenTelemetry traces to an OTLP receiver", { timeout: TIMEOUT }, () => {
  after(stopAllServers);

  test("dev server, http/protobuf: the LLM approval flow as GenAI spans under the caller's trace", async () => {
    const collector = await startCollector();
    const model = await standIn(refundScript("L9301"));
    const server = await startDevServer({
      label: "otel-protobuf",
      env: { ...llmEnv(model), OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_BSP_SCHEDULE_DELAY: "100", OTEL_SERVICE_NAME: "otel-test" },
    });
    const flow = await tracedRefund(server, collector, "L9301");
    assertRunTrace(collector, flow, { store: "sqlite", model });
    assert.deepEqual([...new Set(collector.posts.map((p) => p.contentType))], ["application/x-protobuf"]);
    assert.equal(flow.runs[0].resource["service.name"], "otel-test");
    assert.ok(!server.stderr.includes(flow.secret), "message content was logged");
    assert.ok(!server.stderr.includes("sk-stand-in"), "the model key was logged");
    await model.close();
    await collector.close();
  });

  test("dev server, http/json and JSON logs: one line per run, no content, the same spans", async () => {
    const collector = await startCollector();
    const model = await standIn(refundScript("L9302"));
    const server = await startDevServer({
      label: "otel-json",
      env: {
        ...llmEnv(model),
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.endpoint}/v1/traces`,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_BSP_SCHEDULE_DELAY: "100",
        HANDOFF_LOG: "json",
      },
    });
    const flow = await tracedRefund(server, collector, "L9302");
    assertRunTrace(collector, flow, { store: "sqlite", model });
    assert.ok(collector.posts.every((p) => p.contentType.startsWith("application/json")));
    const lines = await flowLogLines(server, flow);
    assertLogLines(lines, flow);
    // A refusal's line names its code; every route gets one.
    const refused = await postJson(`${server.url}/agent`, { threadId: "", runId: "r", messages: [] });
    assert.equal(refused.status, 400);
    const listed = await request(`${server.url}/threads`);
    assert.equal(listed.status, 200);
    await waitFor(() => server.stderr.includes(`"request_id":"${listed.headers["x-request-id"]}"`), { what: "the list's request line" });
    const after = server.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    const line = (id) => after.find((l) => l.message === "request" && l.request_id === id);
    assert.deepEqual([line(refused.headers["x-request-id"])?.status, line(refused.headers["x-request-id"])?.code], [400, "INVALID_INPUT"]);
    assert.deepEqual([line(listed.headers["x-request-id"])?.route, line(listed.headers["x-request-id"])?.tenant], ["/threads", "default"]);
    assert.ok(!server.stderr.includes(flow.secret), "message content was logged");
    await model.close();
    await collector.close();
  });

  test("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: the model's messages and the tools' arguments on the spans", async () => {
    const collector = await startCollector();
    const model = await standIn(refundScript("L9306"));
    const server = await startDevServer({
      label: "otel-content",
      env: { ...llmEnv(model), OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_BSP_SCHEDULE_DELAY: "100", OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" },
    });
    const flow = await tracedRefund(server, collector, "L9306");
    const spans = collector.spans;
    const chat = byName(spans, "chat stand-in-1", (s) => s.traceId === flow.caller.traceId)[0];
    const input = JSON.parse(chat.attributes["gen_ai.input.messages"]);
    assert.deepEqual(input[0], { role: "user", parts: [{ type: "text", content: `Please refund order L9306 ${flow.secret}` }] });
    assert.match(chat.attributes["gen_ai.system_instructions"], /"type":"text"/);
    const output = JSON.parse(chat.attributes["gen_ai.output.messages"]);
    assert.equal(output[0].role, "assistant");
    assert.ok(output[0].parts.some((p) => p.type === "tool_call"), JSON.stringify(output));
    const refund = byName(spans, "execute_tool refund_order", (s) => s.traceId === flow.second.traceId)[0];
    assert.equal(JSON.parse(refund.attributes["gen_ai.tool.call.arguments"]).orderId, "L9306");
    assert.match(refund.attributes["gen_ai.tool.call.result"], /\S/);
    // Spans only: the logs still carry no content.
    assert.ok(!server.stderr.includes(flow.secret), "message content was logged");
    await model.close();
    await collector.close();
  });

  test("a capture setting other than true or false refuses to start, naming the variable", async () => {
    await assert.rejects(
      startDevServer({ label: "otel-content-bad", env: { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "yes" }, startTimeoutMs: 20_000 }),
      /OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=yes/,
    );
  });

  test("A2A: SendMessage as a client span carrying the trace to the remote agent, pushes as receiver spans", async () => {
    const collector = await startCollector();
    const remote = await startFraudAgent();
    const server = await startDevServer({
      label: "otel-a2a",
      env: { DEMO_FRAUD_AGENT_URL: remote.url, HANDOFF_A2A_ALLOW_LOOPBACK: "true", OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_BSP_SCHEDULE_DELAY: "100" },
    });
    const { interrupt } = await rawRefundInterrupt(server, "A1024");
    const taskId = interrupt.metadata["a2a.taskId"];
    // The run's span closes after SendMessage's: wait for both.
    const send = await waitForSpans(
      collector,
      (spans) => byName(spans, "SendMessage", (s) => ancestors(spans, s).some((a) => a.name === "invoke_agent refund-demo"))[0],
      { what: "the SendMessage span under its run" },
    );
    assert.equal(send.kind, SPAN_KIND.client);
    assert.equal(send.attributes["a2a.method.name"], "SendMessage");
    assert.equal(send.attributes["a2a.protocol.version"], "1.0");
    assert.equal(send.attributes["a2a.task.id"], taskId);
    assert.match(send.attributes["a2a.message.id"], /\S/);
    const effect = ancestors(collector.spans, send)[0];
    assert.equal(effect.name, "handoff.effect", "SendMessage runs inside the delegation's effect");
    const sent = remote.requests.find((r) => r.method === "SendMessage");
    assert.equal(sent.headers.traceparent, `00-${send.traceId}-${send.spanId}-01`, "the remote agent continues the trace");

    remote.complete(taskId, { verdict: "No fraud signals for A1024: approve." });
    const done = await waitForSpans(collector, (spans) => byName(spans, "handoff.a2a.push", (s) => s.attributes["a2a.task.state"] === "TASK_STATE_COMPLETED")[0], { what: "the completing push's span" });
    assert.equal(done.kind, SPAN_KIND.server);
    assert.equal(done.attributes["a2a.task.id"], taskId);
    assert.equal(done.attributes["handoff.a2a.duplicate"], false);
    const parent = ancestors(collector.spans, done)[0];
    assert.match(parent?.name ?? "", /^POST \/a2a\/push\/\{\w+\}$/, "under the request span, named by its route");
    assert.ok(!collector.received().includes("No fraud signals"), "the artifact's text was exported");
    await remote.close();
    await collector.close();
  });

  test("an unreachable collector costs nothing visible: runs stream and finish", async () => {
    const server = await startDevServer({
      label: "otel-down",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_BSP_SCHEDULE_DELAY: "50" },
    });
    const threadId = uid("thread-otel");
    const runId = uid("run");
    const res = await postJson(`${server.url}/agent`, { threadId, runId, messages: [userMessage("hello")] });
    assert.equal(res.status, 200);
    assert.equal(sseEvents(res.bytes).at(-1).type, "RUN_FINISHED");
  });

  test("a protocol the exporter does not speak refuses to start, naming the variable", async () => {
    await assert.rejects(
      startDevServer({ label: "otel-grpc", env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, startTimeoutMs: 20_000 }),
      /OTEL_EXPORTER_OTLP_PROTOCOL=grpc/,
    );
  });
});

describe("OpenTelemetry on Lambda (cargo lambda watch + moto)", { timeout: TIMEOUT }, () => {
  let moto;
  const table = `handoff_otel_${Date.now()}`;
  before(async () => {
    moto = await startMoto();
  });
  after(stopAll);

  test("spans leave before the invocation ends (the batch timer never fires), with DynamoDB store spans", async () => {
    const collector = await startCollector();
    const model = await standIn(refundScript("L9303"));
    const lambda = await startLambda({
      moto, table, label: "lambda-otel",
      // An hour: only the flush at the end of each invocation can send them.
      env: { ...llmEnv(model), OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_BSP_SCHEDULE_DELAY: "3600000" },
    });
    const flow = await tracedRefund(lambda, collector, "L9303");
    assertRunTrace(collector, flow, { store: "dynamodb", model });
    // The request id is the invocation's (what CloudWatch shows), not the caller's.
    for (const id of flow.requestIds) assert.match(id ?? "", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.notEqual(flow.requestIds[0], flow.requestIds[1]);
    await model.close();
    await collector.close();
  });
});

/** A span line's attribute as the receiver would type it: JSON keeps numbers and arrays apart. */
function jsonType(value) {
  if (Array.isArray(value)) return `array<${[...new Set(value.map(jsonType))].join("|")}>`;
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "double";
  return typeof value === "boolean" ? "bool" : typeof value;
}

/** The span lines a Worker wrote, in the receiver's shape (a collector-like view). */
function workerSpans(worker) {
  const kinds = { internal: SPAN_KIND.internal, server: SPAN_KIND.server, client: SPAN_KIND.client };
  return {
    get spans() {
      const lines = worker.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
      return lines.filter((line) => typeof line.span === "string").map((line) => {
        return {
          traceId: line.traceId, spanId: line.spanId, parentSpanId: line.parentSpanId ?? "",
          name: line.span, kind: kinds[line.kind], attributes: line.attributes, resource: {},
          types: Object.fromEntries(Object.entries(line.attributes).map(([k, v]) => [k, jsonType(v)])),
        };
      });
    },
    received: () => worker.stderr,
  };
}

describe("Workers: the same spans as log lines (workerd)", { timeout: TIMEOUT }, () => {
  after(stopAllWorkers);

  test("OTEL_TRACES_EXPORTER=console: the LLM approval flow's spans, named and attributed as exported natively", async () => {
    const model = await standIn(refundScript("W9304"));
    const worker = await startWorker({ label: "otel-worker", vars: { ...llmEnv(model), OTEL_TRACES_EXPORTER: "console" } });
    const view = workerSpans(worker);
    const flow = await tracedRefund(worker, view, "W9304");
    assertRunTrace(view, flow, { store: "durable_object", model });
    // Log lines are JSON with the trace they belong to; none carries content.
    const lines = await flowLogLines(worker, flow);
    assertLogLines(lines, flow);
    const ended = lines.filter((l) => l.message === "run ended");
    assert.ok(ended.every((l) => /^[0-9a-f]{32}$/.test(l.traceId)));
    await model.close();
  });

  test("without it, no span lines and no traceparent on the model's requests", async () => {
    const model = await standIn(refundScript("W9305"));
    const worker = await startWorker({ label: "otel-worker-off", vars: llmEnv(model) });
    const threadId = uid("thread-otel");
    const res = await postJson(`${worker.url}/agent`, { threadId, runId: uid("run"), messages: [userMessage("Please refund order W9305")] }, { headers: { traceparent: traceparent().header } });
    assert.equal(sseEvents(res.bytes).at(-1).outcome?.type, "interrupt");
    assert.equal(workerSpans(worker).spans.length, 0);
    assert.equal(model.requests[0].headers.traceparent, undefined);
    await model.close();
  });
});
