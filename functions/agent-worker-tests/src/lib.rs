//! The test-only Worker: the routes `tests/node/worker-store.test.mjs` drives inside workerd
//! (Miniflare, `tests/node/lib/worker.mjs`) against the real Durable Objects and KV,
//! all under `/__test/` ([`routes`]). Built by `make build-test-worker` only; it has no
//! `wrangler.toml`, so nothing deploys it. Its routes write to the store with no
//! authentication at all, which is why they live here and not behind a run-time switch
//! in `functions/agent-worker`: the deployable Worker's wasm carries none of this code
//! (`tests/node/release-wasm.test.mjs` checks its bytes).
//!
//! Bindings as the demo Worker's (`PARTITIONS`, `BLOBS`); the partition object reads
//! its own variables (`HANDOFF_PURGE_GRACE_MS`, `HANDOFF_BLOB_GC_GRACE_MS`).

mod routes;

use handoff_demo::{DemoAgent, DemoConfig};
use worker::{Context, Env, HttpRequest, event};

/// The Durable Object class that owns each partition; exported for the runtime.
pub use handoff::worker::PartitionObject;
use handoff::worker::{BLOBS, PARTITIONS, RandomIds, WorkerClock, WorkerSleep, store};

#[event(fetch)]
async fn fetch(
    req: HttpRequest,
    env: Env,
    ctx: Context,
) -> worker::Result<handoff::worker::Response> {
    let routes = routes::routes(&env)?;
    // Served by the same host as the demo Worker (its logs, request span and body limit),
    // with the demo agent behind `/agent`: only the `/__test/` routes are this crate's.
    // Served bare (the router alone, no host), the 1,000-message turn test saw workerd reset
    // the connection between requests and ran at half the speed.
    let host = handoff::worker::Worker::new(env, ctx)?;
    let agent = DemoAgent::new(host.shared_store(), DemoConfig::default());
    host.routes(routes).serve(req, agent).await
}
