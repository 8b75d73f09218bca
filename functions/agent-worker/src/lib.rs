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
//! A Cron Trigger (`[triggers]` in `wrangler.toml`, every minute) sweeps the outbox (push
//! notifications and webhooks whose first attempt failed are retried even while nobody
//! calls the Worker) and ticks the schedules; between triggers, the `ScheduleTicker`
//! Durable Object's alarm ticks them at each next due tick.
//!
//! This crate is what deploys, so it holds no test code: the store conformance suite
//! and the KV checks that run inside workerd are the test-only Worker's
//! (`functions/agent-worker-tests`).

use std::sync::Arc;

use handoff::a2a::TaskSnapshots;
use handoff::outbound::FetchOutbound;
use handoff::worker::{Worker, var};
use handoff_demo::{DemoHost, DemoSettings, PushUrl, ServedDemo};
use worker::{Context, Env, HttpRequest, ScheduleContext, ScheduledEvent, event};

/// The Durable Object class that owns each partition; exported for the runtime.
pub use handoff::worker::PartitionObject;
pub use ticker::ScheduleTicker;

// The `#[durable_object]` expansion adds undocumented wasm-bindgen glue.
#[allow(missing_docs)]
mod ticker;

/// The demo on `host`, its A2A receiver's pushes addressed to `origin`: the host with the
/// demo's routes, and the agent.
fn demo(host: Worker, origin: String) -> worker::Result<(Worker, ServedDemo)> {
    let (receiver, a2a_client) =
        handoff::worker::a2a(host.env(), host.shared_store(), host.runtime());
    let demo_host = DemoHost {
        store: host.shared_store(),
        runtime: host.runtime(),
        receiver: receiver.clone(),
        a2a_client,
        push_url: PushUrl::ThisHost(origin),
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
    let ledger = handoff_demo::http::routes(served.ledger.clone(), host.runtime());
    let host = host
        .routes(routes)
        .protected_routes(ledger)
        .thread_extras(Arc::new(TaskSnapshots(receiver)));
    Ok((host, served))
}

/// The demo on a host without a request (a Cron Trigger, an alarm): pushes are addressed
/// to `HANDOFF_PUBLIC_URL`.
pub(crate) fn demo_without_request(env: Env) -> worker::Result<(Worker, ServedDemo)> {
    let host = Worker::for_schedules(env)?;
    let origin = var(host.env(), "HANDOFF_PUBLIC_URL").unwrap_or_default();
    demo(host, origin)
}

#[event(fetch)]
async fn fetch(
    req: HttpRequest,
    env: Env,
    ctx: Context,
) -> worker::Result<handoff::worker::Response> {
    let origin = handoff::worker::origin(&req);
    let (host, served) = demo(Worker::new(env, ctx)?, origin)?;
    host.serve(req, served.agent).await
}

/// The Cron Trigger: one sweep of the outbox (push notifications due again), the
/// schedules' due ticks, then the ticker armed for the next one.
#[event(scheduled)]
async fn scheduled(_event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    handoff::worker::sweep_outbox(&env).await;
    match demo_without_request(env.clone()) {
        Ok((host, served)) => {
            host.tick_schedules(served.agent).await;
        }
        Err(err) => worker::console_error!("handoff: no schedule tick: {err}"),
    }
    handoff::worker::schedules::arm(&env).await;
}
