//! The test-only Worker: the routes `tests/node/worker.test.mjs` drives inside workerd
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

use axum::body::Body;
use tower::ServiceExt;
use worker::{Context, Env, HttpRequest, event};

/// The Durable Object class that owns each partition; exported for the runtime.
pub use handoff::worker::PartitionObject;
use handoff::worker::{BLOBS, PARTITIONS, RandomIds, WorkerClock, WorkerSleep, store};

#[event(fetch)]
async fn fetch(
    req: HttpRequest,
    env: Env,
    _ctx: Context,
) -> worker::Result<handoff::worker::Response> {
    let app = routes::routes(&env)?;
    // Any other path is axum's 404. The router's error type is `Infallible`.
    Ok(app
        .oneshot(req.map(Body::new))
        .await
        .unwrap_or_else(|never| match never {}))
}
