//! The demo agent on Cloudflare Workers (host settings and bindings: see
//! `handoff::worker`; `wrangler.toml` binds `PARTITIONS` and `BLOBS`).
//!
//! Demo settings: `DEMO_INTERRUPT_TTL_SECS`, `DEMO_TOKEN_DELAY_MS`; `DEMO_LLM=openai|anthropic`
//! with `OPENAI_*` / `ANTHROPIC_*` and `DEMO_LLM_MODEL` (a model drives the refund flow,
//! with the tools of `HANDOFF_MCP_SERVERS` too: `handoff_demo::mcp`); A2A:
//! `DEMO_FRAUD_AGENT_URL` (refunds delegate a fraud review),
//! `DEMO_FRAUD_AGENT_JWKS_URL`, `HANDOFF_PUBLIC_URL` (webhook base, default the
//! request's origin), `HANDOFF_A2A_ALLOW_LOOPBACK` and the receiver's
//! `HANDOFF_A2A_*` settings.
//!
//! This crate is what deploys, so it holds no test code: the store conformance suite
//! and the KV checks that run inside workerd are the test-only Worker's
//! (`functions/agent-worker-tests`).

use std::sync::Arc;

use handoff::a2a::TaskSnapshots;
use handoff::outbound::FetchOutbound;
use handoff::worker::{Worker, var};
use handoff_demo::llm::choose;
use handoff_demo::{DemoAgent, FraudReview};
use worker::{Context, Env, HttpRequest, event};

/// The Durable Object class that owns each partition; exported for the runtime.
pub use handoff::worker::PartitionObject;

#[event(fetch)]
async fn fetch(
    req: HttpRequest,
    env: Env,
    ctx: Context,
) -> worker::Result<handoff::worker::Response> {
    let host = Worker::new(env, ctx)?;
    let vars = |key: &str| var(host.env(), key);
    let (receiver, client) = handoff::worker::a2a(host.env(), host.shared_store(), host.runtime());
    let callback_url = vars("HANDOFF_PUBLIC_URL").unwrap_or_else(|| handoff::worker::origin(&req));
    let fraud = FraudReview::from_lookup(vars, receiver.clone(), client, Some(callback_url))
        .map_err(worker::Error::RustError)?;
    let scripted = DemoAgent::from_lookup(host.shared_store(), vars, fraud);
    let ledger = scripted.ledger().clone();
    let agent = choose(
        scripted,
        host.runtime(),
        vars,
        || Arc::new(FetchOutbound::operator()),
        |allow_loopback| Arc::new(FetchOutbound::guarded(allow_loopback)),
    )
    .map_err(worker::Error::RustError)?;
    // The A2A receiver checks its own push tokens; the demo's ledger is behind the authenticator.
    let routes = handoff::a2a::routes(receiver.clone());
    let demo = handoff_demo::http::routes(ledger, host.runtime());
    let host = host
        .routes(routes)
        .protected_routes(demo)
        .thread_extras(Arc::new(TaskSnapshots(receiver)));
    host.serve(req, agent).await
}
