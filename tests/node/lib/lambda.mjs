// The Lambda side of the end-to-end tests: a real moto_server (DynamoDB over
// HTTP) and `cargo lambda watch` (the Lambda runtime emulator) running the
// agent-lambda function against it. Every process runs in its own process
// group and is killed with it.
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { waitFor } from "./devserver.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const VENV_BIN = path.join(REPO, ".venv", "bin");
const live = new Set();

/** A free loopback port (bound then released). */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** `name` from $ENV_VAR, the repo's .venv, or PATH; throws if missing. */
function tool(name, envVar) {
  if (process.env[envVar]) return process.env[envVar];
  const local = path.join(VENV_BIN, name);
  if (fs.existsSync(local)) return local;
  const onPath = (process.env.PATH ?? "").split(":").map((d) => path.join(d, name)).find((p) => fs.existsSync(p));
  if (onPath) return onPath;
  throw new Error(`${name} not found: run \`make setup\` (installs it into .venv) or set ${envVar}`);
}

class Proc {
  constructor(label, command, args, env) {
    this.label = label;
    this.output = "";
    this.child = spawn(command, args, {
      cwd: REPO,
      env: { ...process.env, PATH: `${VENV_BIN}:${process.env.PATH}`, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group: cargo-lambda starts children
    });
    const keep = (chunk) => {
      if (this.output.length < 512 * 1024) this.output += chunk.toString("utf8");
    };
    this.child.stdout.on("data", keep);
    this.child.stderr.on("data", keep);
    this.exited = new Promise((resolve) => this.child.once("exit", resolve));
    live.add(this);
  }

  logs(max = 4000) {
    return `[${this.label}] ${this.output.length > max ? `...${this.output.slice(-max)}` : this.output}`;
  }

  /** Kills the whole process group (SIGKILL: an instance dying). */
  async kill() {
    live.delete(this);
    try {
      process.kill(-this.child.pid, "SIGKILL");
    } catch (err) {
      if (err.code !== "ESRCH") throw err;
    }
    await Promise.race([this.exited, sleep(10_000)]);
  }
}

/** Starts moto_server on a free port; resolves to {endpoint, kill()}. */
export async function startMoto() {
  const port = await freePort();
  const proc = new Proc("moto_server", tool("moto_server", "MOTO_SERVER"), ["-H", "127.0.0.1", "-p", String(port)], {});
  const endpoint = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => (await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(2_000) }).catch(() => null))?.ok === true,
    { timeoutMs: 60_000, intervalMs: 100, what: "moto_server", detail: () => proc.logs() },
  );
  return { endpoint, proc, kill: () => proc.kill() };
}

/**
 * Starts `cargo lambda watch` for `pkg` (agent-lambda, or a2a-webhook-lambda; `bin` picks one
 * binary of a package with several, e.g. starter's starter-lambda) against `moto`
 * and waits until the function answers /healthz (the first request compiles it if needed).
 * `publicUrl` sets HANDOFF_PUBLIC_URL to the function URL (the emulator's path prefix is
 * invisible to the function, so links it publishes need it). `concurrency` (default 1, the
 * emulator's) is how many instances may serve requests at once, as Lambda scales out.
 * `timeoutSecs` sets the emulator's invocation timeout (the function's deadline).
 * Resolves to {url (the function URL base), kill(), logs()}.
 */
export async function startLambda({ moto, table, env = {}, label = "lambda", pkg = "agent-lambda", bin, publicUrl = false, concurrency = 1, timeoutSecs }) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/lambda-url/${bin ?? pkg}`;
  const args = ["lambda", "watch", "--ignore-changes", "-A", "127.0.0.1", "-P", String(port), "-p", pkg, ...(bin ? ["--bin", bin] : [])];
  if (concurrency !== 1) args.push("--concurrency", String(concurrency));
  // The emulator's invocation timeout (it is the deadline the function is given).
  if (timeoutSecs) args.push("--timeout", String(timeoutSecs));
  const proc = new Proc(label, tool("cargo-lambda", "CARGO_LAMBDA"), args, {
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_REGION: "us-east-1",
    AWS_ENDPOINT_URL_DYNAMODB: moto.endpoint,
    HANDOFF_TABLE: table,
    HANDOFF_CREATE_TABLE: "true",
    // Deployed functions refuse to start without it; local tests choose "none" explicitly.
    HANDOFF_AUTH: "none",
    RUST_LOG: "info",
    ...(publicUrl ? { HANDOFF_PUBLIC_URL: url } : {}),
    ...env,
  });
  await waitFor(
    async () => {
      if (proc.child.exitCode !== null) throw Object.assign(new Error(`exited\n${proc.logs()}`), { fatal: true });
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(30_000) }).catch(() => null);
      return res?.status === 200;
    },
    { timeoutMs: 600_000, intervalMs: 500, what: `${label} /healthz`, detail: () => proc.logs() },
  );
  return { url, proc, kill: () => proc.kill(), logs: () => proc.logs(), stderr: "" };
}

/** Kills everything still running. */
export async function stopAll() {
  await Promise.all([...live].map((p) => p.kill()));
}
