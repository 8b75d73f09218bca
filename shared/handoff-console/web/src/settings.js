// Where the console talks to and which thread it shows: URL params and sessionStorage.
import { uuid } from "./agent.js";

// Tokens are kept per endpoint origin: a link whose ?endpoint= names another origin must
// never make the page send it a token saved for this one. The user's Save in the
// Connection panel is what confirms an origin.
const TOKEN_PREFIX = "handoff.token@";
const LEGACY_TOKEN_KEY = "handoff.token";

function tokenKey(endpoint) {
  try {
    return TOKEN_PREFIX + new URL(endpoint, location.href).origin;
  } catch {
    return null;
  }
}

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

/** The token saved for `endpoint`'s origin ("" if none). */
export function loadToken(endpoint) {
  try {
    // Written by earlier versions for whatever endpoint was shown: trusted for no origin.
    sessionStorage.removeItem(LEGACY_TOKEN_KEY);
    const key = tokenKey(endpoint);
    return (key && sessionStorage.getItem(key)) || "";
  } catch {
    return "";
  }
}

/** Saves (or, empty, forgets) the token for `endpoint`'s origin. */
export function saveToken(endpoint, token) {
  try {
    const key = tokenKey(endpoint);
    if (!key) return;
    if (token) sessionStorage.setItem(key, token);
    else sessionStorage.removeItem(key);
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
