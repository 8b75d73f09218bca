// A real OTLP/HTTP trace receiver: accepts POST /v1/traces as http/protobuf (decoded by
// protobufjs with the collector's message definitions, field numbers as in
// opentelemetry-proto) or http/json (the OTLP JSON encoding), and keeps every span with
// its attributes flattened and the type each was sent as, plus the raw bodies (to look
// for what must never be sent).
import http from "node:http";
import protobuf from "protobufjs";

// opentelemetry/proto/collector/trace/v1 and the messages it uses, as published.
const PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; uint32 dropped_attributes_count = 10;
  Status status = 15; fixed32 flags = 16;
}
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value {
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
`;
const Request = protobuf.parse(PROTO, { keepCase: true }).root.lookupType("otlp.ExportTraceServiceRequest");

const hex = (bytes) => Buffer.from(bytes ?? []).toString("hex");

function anyValue(v) {
  if (!v) return undefined;
  const key = Object.keys(v).find((k) => k !== "value");
  const value = v[key];
  switch (key) {
    case "string_value": case "stringValue": case "bool_value": case "boolValue": return value;
    case "int_value": case "intValue": return Number(value);
    case "double_value": case "doubleValue": return Number(value);
    case "array_value": case "arrayValue": return (value.values ?? []).map(anyValue);
    default: return value;
  }
}

const attributes = (list = []) => Object.fromEntries(list.map((kv) => [kv.key, anyValue(kv.value)]));

/**
 * The OTLP type a value was sent as, whichever the encoding: `string`, `bool`, `int`,
 * `double`, `bytes`, `kvlist` or `array<…>` of its elements' types. `attributes` alone
 * cannot tell an `intValue` from a `stringValue` of digits.
 */
function valueType(v) {
  const key = Object.keys(v ?? {}).find((k) => k !== "value");
  const type = key?.replace(/(_value|Value)$/, "");
  if (type !== "array") return type;
  const elements = [...new Set((v[key].values ?? []).map(valueType))];
  return `array<${elements.join("|")}>`;
}

const types = (list = []) => Object.fromEntries(list.map((kv) => [kv.key, valueType(kv.value)]));

/** One span from either encoding, in one shape. */
function normal(span, resource, json) {
  return {
    traceId: json ? span.traceId : hex(span.trace_id),
    spanId: json ? span.spanId : hex(span.span_id),
    parentSpanId: (json ? span.parentSpanId : hex(span.parent_span_id)) || "",
    name: span.name,
    kind: Number(span.kind ?? 0),
    start: BigInt(json ? span.startTimeUnixNano : span.start_time_unix_nano.toString()),
    end: BigInt(json ? span.endTimeUnixNano : span.end_time_unix_nano.toString()),
    attributes: attributes(span.attributes),
    types: types(span.attributes),
    status: Number(span.status?.code ?? 0),
    resource,
  };
}

function decode(body, contentType) {
  const json = contentType.startsWith("application/json");
  const message = json
    ? JSON.parse(body.toString("utf8"))
    : Request.toObject(Request.decode(body), { longs: String, bytes: Array, defaults: false });
  const spans = [];
  for (const rs of message[json ? "resourceSpans" : "resource_spans"] ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs[json ? "scopeSpans" : "scope_spans"] ?? []) {
      for (const span of ss.spans ?? []) spans.push(normal(span, resource, json));
    }
  }
  return spans;
}

/** A collector on 127.0.0.1; `endpoint` is its base URL (OTEL_EXPORTER_OTLP_ENDPOINT). */
export async function startCollector() {
  const spans = [];
  const posts = [];
  const server = http.createServer(async (req, res) => {
    const pieces = [];
    for await (const piece of req) pieces.push(piece);
    const body = Buffer.concat(pieces);
    const contentType = req.headers["content-type"] ?? "";
    posts.push({ url: req.url, contentType, headers: req.headers, body, at: Date.now() });
    if (req.method !== "POST" || req.url !== "/v1/traces") {
      res.writeHead(404).end();
      return;
    }
    try {
      spans.push(...decode(body, contentType));
    } catch (error) {
      res.writeHead(400, { "content-type": "text/plain" }).end(String(error));
      return;
    }
    if (contentType.startsWith("application/json")) {
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    } else {
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const endpoint = `http://127.0.0.1:${server.address().port}`;
  return {
    endpoint,
    spans,
    posts,
    /** Every byte received, as text (for looking for secrets and message contents). */
    received: () => posts.map((p) => p.body.toString("latin1")).join("\n"),
    close: () => new Promise((r) => server.close(r)),
  };
}

/** Waits until `pick(spans)` is truthy (polling), and returns it. */
export async function waitForSpans(collector, pick, { timeoutMs = 20_000, what = "spans" } = {}) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = pick(collector.spans);
    if (found) return found;
    if (Date.now() > until) {
      const names = collector.spans.map((s) => s.name).join(", ");
      throw new Error(`timed out waiting for ${what}; received: ${names || "nothing"}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The ancestors of `span` among `spans`, nearest first. */
export function ancestors(spans, span) {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain = [];
  for (let p = byId.get(span.parentSpanId); p; p = byId.get(p.parentSpanId)) chain.push(p);
  return chain;
}
