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
//! A Cron Trigger (`[triggers]` in `wrangler.toml`, every minute) sweeps the outbox: push
//! notifications of served A2A tasks whose first attempt failed are retried even while
//! nobody calls the Worker.
//!
//! This crate is what deploys, so it holds no test code: the store conformance suite
//! and the KV checks that run inside workerd are the test-only Worker's
//! (`functions/agent-worker-tests`).

use std::sync::Arc;

use handoff::a2a::TaskSnapshots;
use handoff::outbound::FetchOutbound;
use handoff::worker::{Worker, var};
use handoff_demo::{DemoHost, DemoSettings, PushUrl};
use worker::{Context, Env, HttpRequest, ScheduleContext, ScheduledEvent, event};

/// The Durable Object class that owns each partition; exported for the runtime.
pub use handoff::worker::PartitionObject;

#[event(fetch)]
async fn fetch(
    req: HttpRequest,
    env: Env,
    ctx: Context,
) -> worker::Result<handoff::worker::Response> {
    let host = Worker::new(env, ctx)?;
    let (receiver, a2a_client) =
        handoff::worker::a2a(host.env(), host.shared_store(), host.runtime());
    let demo_host = DemoHost {
        store: host.shared_store(),
        runtime: host.runtime(),
        receiver: receiver.clone(),
        a2a_client,
        push_url: PushUrl::ThisHost(handoff::worker::origin(&req)),
    };
    let served = DemoSettings::from_lookup(|key| var(host.env(), key))
        .demo(
            demo_host,
            || Arc::new(FetchOutbound::operator()),
            |allow_loopback| Arc::new(FetchOutbound::guarded(allow_loopback)),
        )
        .map_err(worker::Error::RustError)?;
    // The A2A receiver checks its own push tokens; the demo's ledger is behind the authenticator.
    let routes = handoff::a2a::routes(receiver.clone());
    let demo = handoff_demo::http::routes(served.ledger, host.runtime());
    let host = host
        .routes(routes)
        .protected_routes(demo)
        .thread_extras(Arc::new(TaskSnapshots(receiver)));
    host.serve(req, served.agent).await
}

/// The Cron Trigger: one sweep of the outbox (push notifications due again).
#[event(scheduled)]
async fn scheduled(_event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    handoff::worker::sweep_outbox(&env).await;
}
