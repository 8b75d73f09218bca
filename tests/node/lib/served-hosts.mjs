// The demo agent on AWS Lambda (`cargo lambda watch` + moto_server) or on Workers (workerd via
// Miniflare) behind HANDOFF_AUTH=api-key with one key, as the `host = {url, headers, ledger}`
// that the served-protocol flows take (a2a-server-flows.mjs, mcp-server-flows.mjs, …).
import assert from "node:assert/strict";
import { assertNoPanics, ledger } from "./flows.mjs";
import { startLambda, startMoto, stopAll } from "./lambda.mjs";
import { startWorker, stopAllWorkers } from "./worker.mjs";

const TENANT_SUBJECT = "acme/alice";

function hostOf(server, key) {
  const headers = { authorization: `Bearer ${key}` };
  return { url: server.url, headers, ledger: (order) => ledger(server, order, headers) };
}

/**
 * agent-lambda on moto, its function URL published through HANDOFF_PUBLIC_URL (the emulator's
 * path prefix is invisible to the function). `concurrency`: instances serving at once (the
 * emulator's default is one; a request held open, or two answers racing, need more).
 * Resolves to {lambda, host}; stop it with stopLambdaHost.
 */
export async function startLambdaHost({ label, key, table, concurrency = 2, env = {} }) {
  const moto = await startMoto();
  const lambda = await startLambda({
    moto,
    table,
    label,
    publicUrl: true,
    concurrency,
    env: { HANDOFF_AUTH: "api-key", HANDOFF_API_KEYS: `${TENANT_SUBJECT}=${key}`, ...env },
  });
  return { lambda, host: hostOf(lambda, key) };
}

/** Stops everything Lambda-side and fails if a function panicked. */
export async function stopLambdaHost(served) {
  const output = served?.lambda.logs(200_000) ?? "";
  await stopAll();
  assert.doesNotMatch(output, /panicked/, output.slice(-4000));
}

/**
 * The demo Worker, `vars` added to its bindings. A low inline limit sends thread records
 * through KV blobs, as in worker.test.mjs. Resolves to {worker, host}; stop it with
 * stopWorkerHost.
 */
export async function startWorkerHost({ label, key, vars = {} }) {
  const worker = await startWorker({
    label,
    vars: {
      HANDOFF_AUTH: "api-key",
      HANDOFF_API_KEYS: `${TENANT_SUBJECT}=${key}`,
      HANDOFF_INLINE_LIMIT: "2048",
      ...vars,
    },
  });
  return { worker, host: hostOf(worker, key) };
}

/** Stops every Worker and fails if one panicked. */
export async function stopWorkerHost(served) {
  if (served) assertNoPanics(served.worker);
  await stopAllWorkers();
}

/** A JSON-RPC POST to `path` without the key is refused with 401. */
export async function assertNeedsKey(host, path, body) {
  const refused = await fetch(`${host.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(refused.status, 401, await refused.text());
}
