// Where the console talks to and which thread it shows: URL params and sessionStorage.
import { uuid } from "./agent.js";

const TOKEN_KEY = "handoff.token";

export function defaultEndpoint() {
  const dir = location.pathname.replace(/[^/]*$/, "");
  return (location.origin + dir).replace(/\/+$/, "");
}

export function readParams() {
  const p = new URLSearchParams(location.search);
  const endpoint = (p.get("endpoint") || "").trim();
  const thread = (p.get("thread") || "").trim();
  return { endpoint: endpoint ? endpoint.replace(/\/+$/, "") : defaultEndpoint(), endpointParam: endpoint, thread };
}

export function newThreadId() {
  return `thread-${uuid()}`;
}

function urlWith(changes) {
  const url = new URL(location.href);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === undefined || v === "") url.searchParams.delete(k);
    else url.searchParams.set(k, v);
  }
  return url;
}

/** Puts `thread` (and optionally `endpoint`) in the address bar. */
export function setUrl(changes, { push = false } = {}) {
  const url = urlWith(changes);
  if (url.href === location.href) return;
  if (push) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
}

/** The shareable address of a thread (endpoint kept, no token ever). */
export function threadUrl(threadId) {
  const url = urlWith({ thread: threadId });
  url.hash = "";
  return url.href;
}

export function loadToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  } catch {
    return "";
  }
}

export function saveToken(token) {
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    /* storage unavailable: the token lives for this page only */
  }
}

/** A usable http(s) base URL, or null. */
export function normaliseEndpoint(text) {
  const t = String(text || "").trim();
  if (!t) return defaultEndpoint();
  try {
    const u = new URL(t, location.href);
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    return (u.origin + u.pathname).replace(/\/+$/, "");
  } catch {
    return null;
  }
}
