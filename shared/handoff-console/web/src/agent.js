// Talking to a Handoff endpoint: the official AG-UI HttpAgent for runs, plain fetch for
// thread rehydration, and one place that turns every failure into a readable sentence.
import { HttpAgent } from "@ag-ui/client";

// Run, message and thread ids: the `uuid` package the official client already bundles
// (crypto.randomUUID where the page is a secure context, getRandomValues elsewhere).
export { v4 as uuid } from "uuid";

export function authHeaders(token) {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

function join(endpoint, path) {
  return endpoint.replace(/\/+$/, "") + path;
}

/** The agent for `POST {endpoint}/agent`. */
export function createAgent({ endpoint, token, threadId, messages, state }) {
  return new HttpAgent({
    url: join(endpoint, "/agent"),
    headers: authHeaders(token),
    threadId,
    initialMessages: messages || [],
    initialState: state || {},
  });
}

/**
 * Follows a run that is already streaming elsewhere: the same AG-UI pipeline, fed by
 * `GET /threads/{id}/runs/{runId}/events` instead of a POST.
 */
class FollowAgent extends HttpAgent {
  requestInit() {
    return {
      method: "GET",
      headers: { ...this.headers, Accept: "text/event-stream" },
      signal: this.abortController.signal,
    };
  }
}

export function createFollowAgent({ endpoint, token, threadId, runId, messages, state }) {
  return new FollowAgent({
    url: join(endpoint, `/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/events`),
    headers: authHeaders(token),
    threadId,
    initialMessages: messages || [],
    initialState: state || {},
  });
}

/** Interrupts as handed to the agent: expiry is left to the server to judge. */
export function forAgent(interrupts) {
  return (interrupts || []).map((i) => {
    const copy = { ...i };
    delete copy.expiresAt;
    return copy;
  });
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * One JSON call to the endpoint (`GET /threads`, `PATCH /threads/{id}`, …) with the
 * connection's token; the parsed body, or an ApiError carrying the server's code.
 */
export async function apiJson({ endpoint, token }, method, path, body) {
  const headers = { Accept: "application/json", ...authHeaders(token) };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res;
  try {
    res = await fetch(join(endpoint, path), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw networkError(endpoint, e);
  }
  const text = await res.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const code = parsed && typeof parsed.code === "string" ? parsed.code : `HTTP_${res.status}`;
    const msg = parsed && typeof parsed.message === "string" ? parsed.message : text.slice(0, 200) || res.statusText;
    throw new ApiError(res.status, code, msg);
  }
  return parsed;
}

/** `GET {endpoint}/threads/{id}` → the thread view, or null for an unknown thread. */
export async function fetchThread({ endpoint, token, threadId }) {
  let body;
  try {
    body = await apiJson({ endpoint, token }, "GET", `/threads/${encodeURIComponent(threadId)}`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
  if (!body || typeof body !== "object") throw new ApiError(200, "BAD_RESPONSE", "the thread view is not JSON");
  return body;
}

function networkError(endpoint, cause) {
  const e = new ApiError(0, "", `Cannot reach the Handoff endpoint at ${endpoint}. Check the endpoint in Connection and your network.`);
  e.network = true;
  e.cause = cause;
  return e;
}

/**
 * Any failure → {code, text} for the error banner / card error. `text` is `CODE: message`
 * for server errors and a plain sentence otherwise.
 */
export function describeError(err, endpoint) {
  if (err instanceof ApiError) {
    if (err.network) return { code: "", text: err.message };
    return { code: err.code, status: err.status, text: `${err.code}: ${err.message}` };
  }
  if (err && typeof err === "object" && typeof err.status === "number") {
    const p = err.payload;
    if (p && typeof p === "object" && typeof p.code === "string") {
      return { code: p.code, status: err.status, text: `${p.code}: ${p.message ?? ""}`.trim() };
    }
    const detail = typeof p === "string" && p ? p.slice(0, 200) : "";
    return { code: `HTTP_${err.status}`, status: err.status, text: `HTTP_${err.status}: ${detail || "the server refused the request"}` };
  }
  const msg = err && err.message ? String(err.message) : String(err);
  if (err instanceof TypeError && /fetch|network|load failed/i.test(msg)) {
    return { code: "", text: `Cannot reach the Handoff endpoint at ${endpoint}. Check the endpoint in Connection and your network.` };
  }
  if (err && err.name === "AbortError") return { code: "", text: "The run was stopped." };
  return { code: "", text: msg || "Something went wrong." };
}

/** The arguments of a tool call found in the message history, or undefined. */
export function toolCallArgs(messages, toolCallId) {
  if (!toolCallId) return undefined;
  for (const m of messages || []) {
    const call = (m.toolCalls || []).find((c) => c.id === toolCallId);
    if (!call) continue;
    try {
      const args = JSON.parse(call.function?.arguments || "{}");
      return args && typeof args === "object" && !Array.isArray(args) ? args : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** A scalar argument of a tool call found in the message history (for form hints). */
export function toolArgValue(messages, toolCallId, key) {
  if (key === undefined) return undefined;
  const args = toolCallArgs(messages, toolCallId);
  const v = args ? args[key] : undefined;
  return v === null || typeof v === "object" ? undefined : v;
}
