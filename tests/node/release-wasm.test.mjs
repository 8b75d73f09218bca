// Release builds carry no test code (issue 50): the deployable Worker's wasm
// (functions/agent-worker, `make build-worker`) holds no /__test/ route and none of the
// store conformance suite. The test-only Worker's wasm (`make build-test-worker`) is read
// the same way and must hold all of them, so a search that finds nothing is shown to be
// able to find something: a rename or a stripped string cannot make this test pass by itself.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";
import { TEST_WORKER_DIR, WORKER_DIR, assertWorkerBuilt } from "./lib/worker.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CONFORMANCE_LIB = path.resolve(here, "../../shared/handoff-store-conformance/src/lib.rs");
const MAKEFILE = path.resolve(here, "../../Makefile");

/** The Worker's wasm budget in gzipped bytes, read from the Makefile (`WORKER_WASM_GZIP_LIMIT`). */
function gzipLimit() {
  const line = fs.readFileSync(MAKEFILE, "utf8").match(/^WORKER_WASM_GZIP_LIMIT := (\d+)$/m);
  assert.ok(line, `WORKER_WASM_GZIP_LIMIT not found in ${MAKEFILE}`);
  return Number(line[1]);
}

/** What `make build-worker` built (`release`, or a test build without wasm-opt), if it says. */
function buildKind(workerDir) {
  const stamp = path.join(workerDir, "build/BUILD_KIND");
  return fs.existsSync(stamp) ? fs.readFileSync(stamp, "utf8").trim() : "unknown (not built by make)";
}

/** The suite's check names, read from its source (`CHECK_NAMES`), so the list cannot drift. */
function checkNames() {
  const source = fs.readFileSync(CONFORMANCE_LIB, "utf8");
  const list = source.match(/pub const CHECK_NAMES: \[&str; (\d+)\] = \[([^\]]*)\];/);
  assert.ok(list, `CHECK_NAMES not found in ${CONFORMANCE_LIB}`);
  const names = [...list[2].matchAll(/"([a-z0-9_]+)"/g)].map((m) => m[1]);
  assert.equal(names.length, Number(list[1]), "every declared check name was read");
  return names;
}

/** What the test code leaves in a wasm: its route prefix, the crate's panic locations, each check's name. */
const MARKERS = ["/__test/", "handoff-store-conformance", ...checkNames()];

function wasmOf(workerDir) {
  assertWorkerBuilt(workerDir);
  return fs.readFileSync(path.join(workerDir, "build/index_bg.wasm"));
}

// Issue 50: the deployable Worker (the demo with MCP and tracing) fits in 1 MiB gzipped.
// `make build-worker` refuses a larger release build; this checks the wasm it left. The Node
// suite's own Workers skip wasm-opt (`make test-node`: WORKER_OPT=--no-opt), and those are
// not what deploys, so the check runs on release builds only.
describe("The deployable Worker's wasm fits its budget", () => {
  test("at most WORKER_WASM_GZIP_LIMIT bytes gzipped (-9)", (t) => {
    const kind = buildKind(WORKER_DIR);
    if (kind !== "release") {
      t.skip(`not a release build (${kind}): run make build-worker`);
      return;
    }
    const limit = gzipLimit();
    const gzipped = zlib.gzipSync(wasmOf(WORKER_DIR), { level: 9 }).length;
    assert.ok(gzipped <= limit, `${gzipped} bytes gzipped, over the ${limit}-byte budget by ${gzipped - limit}`);
  });
});

describe("Release builds carry no test code", () => {
  test("the test-only Worker's wasm holds every marker (the search works)", () => {
    const wasm = wasmOf(TEST_WORKER_DIR);
    const missing = MARKERS.filter((marker) => !wasm.includes(marker));
    assert.deepEqual(missing, [], "markers absent from the test Worker, so absence proves nothing");
  });

  test("the deployable Worker's wasm holds no /__test/ route and no conformance code", () => {
    const wasm = wasmOf(WORKER_DIR);
    const found = MARKERS.filter((marker) => wasm.includes(marker));
    assert.deepEqual(found, [], `test code in ${path.join(WORKER_DIR, "build/index_bg.wasm")}`);
  });
});
