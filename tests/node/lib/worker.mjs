// The built Worker (functions/agent-worker/build, from `make build-worker`) in
// workerd through Miniflare: the same runtime `wrangler dev` uses, with the
// Durable Object class and KV namespace bound as in wrangler.toml, persisted
// to a directory so a new Miniflare on the same directory is a restarted
// isolate with the same state. Each worker listens on a free loopback port;
// `server.url` works with every helper of flows.mjs.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
// The console's built files, served as Workers static assets (`[assets]` in wrangler.toml).
import { CONSOLE_ASSETS } from "./console-assets.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const WORKER_DIR = path.resolve(here, "../../../functions/agent-worker");
export const STARTER_DIR = path.resolve(here, "../../../functions/starter");
// The test-only Worker (`make build-test-worker`): the store conformance suite and the KV
// checks under /__test/, which the deployable Worker does not carry.
export const TEST_WORKER_DIR = path.resolve(here, "../../../functions/agent-worker-tests");
const live = new Set();
// Bounds on workerd's start and stop, far above their usual second or two.
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

export function assertWorkerBuilt(workerDir = WORKER_DIR) {
  const script = path.join(workerDir, "build/index.js");
  if (!fs.existsSync(script)) {
    const targets = { [WORKER_DIR]: "build-worker", [TEST_WORKER_DIR]: "build-test-worker" };
    const target = targets[workerDir] ?? "build-starter-worker";
    throw new Error(`${script} not found. Build the Worker first: make ${target}`);
  }
}

/** A fresh persistence directory (removed by stopAllWorkers). */
export function makeStateDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), "handoff-worker-"));
}

const dirs = new Set();

/**
 * Starts the Worker. `vars` become string bindings (like wrangler.toml [vars]; the
 * default is HANDOFF_AUTH=none);
 * `stateDir` shares Durable Object and KV state with earlier workers; `workerDir` picks
 * another built Worker (e.g. STARTER_DIR, from `make build-starter-worker`, or
 * TEST_WORKER_DIR, whose routes are all under /__test/).
 * Resolves to {url, label, stderr, logs(), scheduled(), kill()}.
 */
export async function startWorker(opts = {}) {
  try {
    return await startWorkerOnce(opts);
  } catch (err) {
    if (!err.timedOut) throw err;
    // workerd that never reports ready is the runtime failing to start, not the Worker: one
    // more try, so a machine's hiccup is not a red run; a second hang is reported.
    console.log(`# ${err.message}; starting it once more`);
    return await startWorkerOnce(opts);
  }
}

/** Rejects (with `timedOut` set) after `ms` unless `promise` settles first. */
async function within(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`${what} took over ${ms} ms`), { timedOut: true })), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function startWorkerOnce({ vars = {}, stateDir, label = "worker", workerDir = WORKER_DIR } = {}) {
  assertWorkerBuilt(workerDir);
  const dir = stateDir ?? makeStateDir();
  dirs.add(dir);
  let output = "";
  const mf = new Miniflare({
    modules: true,
    modulesRoot: workerDir,
    scriptPath: path.join(workerDir, "build/index.js"),
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    // As deployed: a request matching a console file is answered from the assets, any other
    // goes to the Worker.
    assets: { directory: CONSOLE_ASSETS, routerConfig: { has_user_worker: true } },
    compatibilityDate: "2025-09-01",
    durableObjects: {
      PARTITIONS: { className: "PartitionObject", useSQLite: true },
      // The demo's schedule ticker (wrangler.toml's SCHEDULES), whose alarm ticks schedules.
      ...(workerDir === WORKER_DIR ? { SCHEDULES: { className: "ScheduleTicker", useSQLite: true } } : {}),
    },
    kvNamespaces: ["BLOBS"],
    // Miniflare does not read wrangler.toml, whose HANDOFF_AUTH (cf-access) is for
    // deployment: tests run unauthenticated unless `vars` says otherwise.
    bindings: { HANDOFF_AUTH: "none", ...vars },
    durableObjectsPersist: path.join(dir, "do"),
    kvPersist: path.join(dir, "kv"),
    host: "127.0.0.1",
    port: 0,
    cf: false,
    handleRuntimeStdio(stdout, stderr) {
      stdout.on("data", (d) => (output += d));
      stderr.on("data", (d) => (output += d));
    },
  });
  let ready;
  try {
    ready = await within(mf.ready, START_TIMEOUT_MS, `${label}: workerd`);
  } catch (err) {
    await within(mf.dispose(), STOP_TIMEOUT_MS, `${label}: disposing workerd`).catch(() => {});
    err.message += `\n${output.slice(-5_000)}`;
    throw err;
  }
  const url = ready.toString().replace(/\/$/, "");
  const worker = {
    url,
    label,
    dir,
    get stderr() {
      return output;
    },
    logs: () => output.slice(-20_000),
    /** Fires the Cron Trigger once (the Worker's `scheduled` handler); resolves when it ends. */
    async scheduled(cron = "* * * * *") {
      return (await mf.getWorker()).scheduled({ cron });
    },
    async kill() {
      if (!live.delete(worker)) return;
      await within(mf.dispose(), STOP_TIMEOUT_MS, `${label}: disposing workerd`);
    },
  };
  live.add(worker);
  return worker;
}

/** Disposes every worker still running and removes the state directories. */
export async function stopAllWorkers() {
  await Promise.all([...live].map((w) => w.kill()));
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}
