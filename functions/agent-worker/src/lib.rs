//! Handoff on Cloudflare Workers: the demo agent behind the shared router.
//!
//! Every request builds the engine from the bindings (cheap: handles only) and
//! hands the request to the same axum router the dev server and Lambda serve,
//! so every route behaves identically. State lives in one Durable Object per
//! thread ([`handoff_store_cloudflare`]), large values in KV.
//!
//! **Run budget.** A Worker may stream for as long as its client stays
//! connected, but once the client leaves, `waitUntil` keeps the run alive for
//! about 30 s only. `HANDOFF_RUN_BUDGET_MS` gives every run a deadline, so a
//! run that would outlive it ends with `RUN_FINISHED{cancelled}` and a released
//! lease instead of being cut off mid-commit (the Lambda adapter does the same
//! with the invocation deadline). Unset, runs have no deadline, but their lease is
//! short (`HANDOFF_LEASE_MS`, default 60 s, renewed while the run lives), so a run
//! whose isolate dies frees its thread within a minute.
//!
//! Bindings (see `wrangler.toml`): `PARTITIONS` (Durable Object class
//! [`PartitionObject`]), `BLOBS` (KV). Variables: `HANDOFF_BODY_LIMIT` (default 8 MiB),
//! `HANDOFF_KEEP_ALIVE_MS`, `HANDOFF_INLINE_LIMIT`, `DEMO_INTERRUPT_TTL_SECS`,
//! `DEMO_TOKEN_DELAY_MS`, `HANDOFF_RUN_BUDGET_MS` (see below), `HANDOFF_LEASE_MS`
//! (default 60 s), `HANDOFF_BLOB_GC_GRACE_MS` and `HANDOFF_BLOBS_BINDING` (the Durable
//! Object's KV garbage collection, see [`handoff_store_cloudflare`]); A2A: `DEMO_FRAUD_AGENT_URL` (refunds delegate a fraud
//! review), `DEMO_FRAUD_AGENT_JWKS_URL`, `HANDOFF_PUBLIC_URL` (webhook base,
//! default the request's origin), `HANDOFF_A2A_ALLOW_LOOPBACK` and the
//! receiver's `HANDOFF_A2A_*` settings; and `HANDOFF_TEST_ROUTES=true` (tests only: serves
//! the store conformance suite at `POST /__test/conformance/{check}`).

mod a2a;
mod runtime;
mod test_routes;

use std::sync::{Arc, OnceLock};

use handoff_a2a::{A2aClient, CachedJwks, HttpJwks, Receiver, ReceiverConfig};

use handoff_core::{Clock, Store};
use handoff_demo::{DemoConfig, FraudReview};
use handoff_http::{Host, HostDeadline, HttpConfig};
use handoff_store_cloudflare::DurableStore;
use tower::ServiceExt;
use worker::{Context, Env, HttpRequest, event};

/// The Durable Object class that owns each partition; exported for the runtime.
pub use handoff_store_cloudflare::PartitionObject;

pub use a2a::{FetchHttp, RandomTokens};
pub use runtime::{RandomIds, WaitUntil, WorkerClock, WorkerSleep, runtime};

/// Durable Object namespace binding.
pub const PARTITIONS: &str = "PARTITIONS";
/// KV namespace binding for large values.
pub const BLOBS: &str = "BLOBS";

fn lookup(env: &Env) -> impl Fn(&str) -> Option<String> + '_ {
    |key| env.var(key).ok().map(|v| v.to_string())
}

/// The store from the bindings, with the inline limit from `HANDOFF_INLINE_LIMIT`.
pub fn store(env: &Env) -> worker::Result<DurableStore> {
    let store = DurableStore::from_env(env, PARTITIONS, Some(BLOBS))?;
    Ok(
        match lookup(env)("HANDOFF_INLINE_LIMIT").and_then(|v| v.parse().ok()) {
            Some(limit) => store.with_inline_limit(limit),
            None => store,
        },
    )
}

/// Sender key sets, cached for the isolate's lifetime (engines are per request).
fn jwks(http: FetchHttp) -> Arc<CachedJwks<HttpJwks<FetchHttp>>> {
    static JWKS: OnceLock<Arc<CachedJwks<HttpJwks<FetchHttp>>>> = OnceLock::new();
    JWKS.get_or_init(|| Arc::new(CachedJwks::new(HttpJwks(http))))
        .clone()
}

/// Every route the Worker serves, for one request to `origin` (scheme://host[:port]).
pub fn app(env: &Env, ctx: Context, origin: &str) -> worker::Result<axum::Router> {
    let vars = lookup(env);
    let store: Arc<dyn Store> = Arc::new(store(env)?);
    let runtime = runtime(ctx);
    let http = FetchHttp {
        allow_loopback: vars("HANDOFF_A2A_ALLOW_LOOPBACK")
            .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true")),
    };
    let receiver = Receiver::new(
        store.clone(),
        runtime.clone(),
        jwks(http),
        ReceiverConfig::from_lookup(&vars),
    );
    let fraud = vars("DEMO_FRAUD_AGENT_URL")
        .filter(|u| !u.is_empty())
        .map(|agent_url| FraudReview {
            receiver: receiver.clone(),
            client: A2aClient::new(Arc::new(http), Arc::new(RandomTokens), http.allow_loopback),
            agent_url,
            callback_base_url: vars("HANDOFF_PUBLIC_URL").unwrap_or_else(|| origin.to_owned()),
            sender_jwks_url: vars("DEMO_FRAUD_AGENT_JWKS_URL").filter(|u| !u.is_empty()),
        });
    let mut app = handoff_demo::http::app(
        store,
        runtime,
        receiver.clone(),
        DemoConfig::from_lookup(&vars),
        fraud,
        HttpConfig::for_host(Host::Workers, &vars),
        Host::Workers.engine_config(&vars),
    )
    .merge(handoff_a2a::http::routes(receiver));
    if vars("HANDOFF_TEST_ROUTES").as_deref() == Some("true") {
        app = app.merge(test_routes::routes(env)?);
    }
    Ok(app)
}

#[event(fetch)]
async fn fetch(
    req: HttpRequest,
    env: Env,
    ctx: Context,
) -> worker::Result<axum::http::Response<axum::body::Body>> {
    let origin = match (req.uri().scheme_str(), req.uri().authority()) {
        (Some(scheme), Some(authority)) => format!("{scheme}://{authority}"),
        _ => String::new(),
    };
    let budget_ms = lookup(&env)("HANDOFF_RUN_BUDGET_MS").and_then(|v| v.parse::<u64>().ok());
    let app = app(&env, ctx, &origin)?;
    let mut req = req.map(axum::body::Body::new);
    if let Some(budget_ms) = budget_ms {
        let deadline = WorkerClock.now_ms().saturating_add(budget_ms);
        req.extensions_mut().insert(HostDeadline(Some(deadline)));
    }
    let response = app.oneshot(req).await;
    Ok(match response {
        Ok(response) => response,
        Err(never) => match never {},
    })
}
