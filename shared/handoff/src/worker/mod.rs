//! The Cloudflare Workers host (feature `worker`, for `wasm32-unknown-unknown`):
//! your agent behind the Handoff router, state in one Durable Object per thread
//! ([`PartitionObject`], SQLite storage) with large values in KV.
//!
//! Depend on `handoff` with `default-features = false, features = ["worker"]` (the
//! default `server` feature is native only). Your crate is a `cdylib` with a fetch handler and the Durable Object class
//! re-exported, and a `wrangler.toml` binding `PARTITIONS` (class
//! `PartitionObject`, in a `new_sqlite_classes` migration) and `BLOBS` (KV):
//!
//! ```ignore
//! pub use handoff::worker::PartitionObject;
//!
//! #[worker::event(fetch)]
//! async fn fetch(req: worker::HttpRequest, env: worker::Env, ctx: worker::Context) -> worker::Result<handoff::worker::Response> {
//!     handoff::worker::serve(req, env, ctx, MyAgent::default()).await
//! }
//! ```
//!
//! Each request builds its engine from the bindings (handles only, cheap).
//! Variables: `HANDOFF_BODY_LIMIT` (default 8 MiB), `HANDOFF_KEEP_ALIVE_MS` (15000),
//! `HANDOFF_LEASE_MS` (default 60 s, renewed while a run lives, so a run whose
//! isolate dies frees its thread within a minute), `HANDOFF_INLINE_LIMIT` (values
//! above it go to KV; default 32 KiB), and `HANDOFF_RUN_BUDGET_MS`: a Worker
//! streams as long as its client stays, but once the client leaves `waitUntil`
//! keeps the run about 30 s only; a budget gives every run a deadline, past
//! which it ends `RUN_FINISHED{cancelled}` with its lease released instead of
//! being cut off mid-commit. `HANDOFF_STOP_POLL_MS` (1000), `HANDOFF_LIVE_FLUSH_MS` (250)
//! and `HANDOFF_COPILOTKIT_BASE` (`/copilotkit`) as on the other hosts. Webhooks
//! (`HANDOFF_WEBHOOK_URLS`, see `handoff_http::webhooks`) are posted with `fetch` when a
//! run ends; a failed one is retried by the outbox sweeps below.
//!
//! **Push notifications** (of A2A tasks served here) and webhooks leave from the store's
//! outbox: the first attempt right after the run's end, inside the `waitUntil` that drives the run. Retries
//! come from sweeps: one under a request's `waitUntil`, at most once per
//! `HANDOFF_OUTBOX_POLL_MS` (1000) per isolate, and one per Cron Trigger
//! ([`sweep_outbox`] from a `scheduled` handler; the demo's `wrangler.toml` runs it every
//! minute), so retries go on while nobody calls the Worker.
//!
//! **Background runs** (`Prefer: respond-async`) run under the request's `waitUntil` for up
//! to 25 s (`handoff_http::HttpConfig::background_budget_ms`), then are handed over; the
//! request sweep above also finishes the runs due for a re-drive (handed over, or whose
//! isolate went away), for up to 25 s each time (`handoff_core::Engine::redrive_due`).
//!
//! **Schedules** (`POST /schedules`) tick on the Cron Trigger ([`Worker::tick_schedules`]
//! from the `scheduled` handler) and, for ticks closer than a minute apart, on a Durable
//! Object's alarm: see [`schedules`].
//!
//! Logs are JSON lines on the console (`HANDOFF_LOG=text` for text, `RUST_LOG` for levels);
//! with `OTEL_TRACES_EXPORTER=console` (or an OTLP endpoint variable) the engine's spans
//! are written there too, one JSON line each, with the names and attributes the native
//! hosts export over OTLP.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::AtomicU64;

use axum::body::Body;
use axum::response::IntoResponse;
use handoff_auth::AuthConfig;
use handoff_core::codes;
use handoff_core::{Agent, Clock, Runtime, Store};
use handoff_host_worker::telemetry;
use handoff_http::{ApiError, Authenticator, Host, HostDeadline};
use handoff_store_cloudflare::DurableStore;
use tower::ServiceExt;
use tracing::Instrument;
use worker::{Context, Env, HttpRequest};

use crate::options::{HostOptions, authenticator_from_env, host_setters};

#[cfg(feature = "schedules")]
pub mod schedules;

pub use handoff_host_worker::store::{BLOBS, PARTITIONS};
pub use handoff_host_worker::{
    FetchOutbound, RandomIds, RandomTokens, WaitUntil, WorkerClock, WorkerSchema, WorkerSleep, var,
};
/// The Durable Object class that owns each partition: re-export it from your crate.
pub use handoff_store_cloudflare::PartitionObject;

/// What the fetch handler returns.
pub type Response = axum::http::Response<Body>;

/// Serves one request with `agent`, every setting from the bindings and variables.
pub async fn serve(
    req: HttpRequest,
    env: Env,
    ctx: Context,
    agent: impl Agent,
) -> worker::Result<Response> {
    Worker::new(env, ctx)?.serve(req, agent).await
}

/// The store from the bindings, with the inline limit from `HANDOFF_INLINE_LIMIT`.
pub fn store(env: &Env) -> worker::Result<DurableStore> {
    handoff_host_worker::store::from_env(env)
}

/// `scheme://host[:port]` of the request (empty when the URI has no authority).
pub fn origin(req: &HttpRequest) -> String {
    match (req.uri().scheme_str(), req.uri().authority()) {
        (Some(scheme), Some(authority)) => format!("{scheme}://{authority}"),
        _ => String::new(),
    }
}

/// One sweep of the outbox (push notifications and webhooks due again), for a Cron
/// Trigger's `scheduled` handler: `[triggers] crons = ["* * * * *"]` in `wrangler.toml`, and
///
/// ```ignore
/// #[worker::event(scheduled)]
/// async fn scheduled(_: worker::ScheduledEvent, env: worker::Env, _: worker::ScheduleContext) {
///     handoff::worker::sweep_outbox(&env).await;
/// }
/// ```
///
/// Reads the bindings and variables as a request would; a sweep that cannot start (a
/// binding missing) is logged.
pub async fn sweep_outbox(env: &Env) -> Option<handoff_core::outbox::DeliveryReport> {
    let store: Arc<dyn Store> = match store(env) {
        Ok(store) => Arc::new(store),
        Err(err) => {
            worker::console_error!("handoff: no outbox sweep: {err}");
            return None;
        }
    };
    let vars = |key: &str| var(env, key);
    let runtime = Runtime::new(WorkerClock, RandomIds, WorkerSleep);
    let mut options = HostOptions::default();
    outbounds(&mut options, &vars);
    let (outbox, _) = options.outbox(&store, &runtime, &vars);
    Some(outbox?.deliver_due(crate::sweep::SWEEP_LIMIT).await)
}

/// How long a request's sweep may spend re-driving runs: inside the roughly 30 s
/// `waitUntil` grants past the response.
const REDRIVE_BUDGET_MS: u64 = 25_000;

/// The guarded `fetch` clients of A2A pushes and webhooks, as the variables allow.
fn outbounds(options: &mut HostOptions, vars: &impl Fn(&str) -> Option<String>) {
    let allow_loopback = vars("HANDOFF_A2A_ALLOW_LOOPBACK")
        .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
    options.push_outbound = Some(Arc::new(FetchOutbound::guarded(allow_loopback)));
    #[cfg(feature = "webhooks")]
    {
        let webhook_loopback = handoff_http::webhooks::allows_loopback(vars).unwrap_or(false);
        options.webhook_outbound = Some(Arc::new(FetchOutbound::guarded(webhook_loopback)));
    }
}

/// The host for one request, with each part settable. Build it first when your
/// agent needs the store or the runtime too.
pub struct Worker {
    env: Env,
    store: Arc<dyn Store>,
    runtime: Runtime,
    options: HostOptions,
}

impl Worker {
    /// The store from the bindings ([`store`]) and the runtime of this request's `ctx`
    /// (a run outlives its response under `waitUntil`).
    pub fn new(env: Env, ctx: Context) -> worker::Result<Self> {
        Ok(Worker {
            store: Arc::new(store(&env)?),
            runtime: handoff_host_worker::runtime::runtime(ctx),
            env,
            options: HostOptions {
                host_schema_validator: Some(Arc::new(WorkerSchema)),
                ..HostOptions::default()
            },
        })
    }

    /// The store, to share with the agent.
    pub fn shared_store(&self) -> Arc<dyn Store> {
        self.store.clone()
    }

    /// This request's runtime, to share with the agent.
    pub fn runtime(&self) -> Runtime {
        self.runtime.clone()
    }

    /// The bindings and variables.
    pub fn env(&self) -> &Env {
        &self.env
    }

    /// Keeps state in `store` instead of the Durable Object store.
    pub fn store(mut self, store: Arc<dyn Store>) -> Self {
        self.store = store;
        self
    }

    host_setters!("Workers");

    /// Answers `req` with `agent`.
    pub async fn serve(mut self, req: HttpRequest, agent: impl Agent) -> worker::Result<Response> {
        let env = self.env.clone();
        let vars = |key: &str| var(&env, key);
        telemetry::init(&vars);
        #[cfg(feature = "llm")]
        match handoff_llm::capture_setting(vars(handoff_llm::CAPTURE_MESSAGE_CONTENT).as_deref()) {
            Ok(capture) => handoff_llm::set_capture_message_content(capture),
            Err(why) => return Ok(not_configured(&why)),
        }
        let authenticator = match self.options.authenticator.take() {
            Some(authenticator) => authenticator,
            None => match authenticator_from_vars(&env) {
                Ok(authenticator) => authenticator,
                Err(why) => return Ok(not_configured(&why)),
            },
        };
        outbounds(&mut self.options, &vars);
        let spawner = self.runtime.spawner.clone();
        #[cfg(feature = "schedules")]
        let arm_after = spawner.clone().filter(|_| {
            req.method() == axum::http::Method::POST && req.uri().path() == "/schedules"
        });
        let engine = self.options.engine(
            Host::Workers,
            Arc::new(agent),
            self.store,
            self.runtime,
            vars,
        );
        // Retries of pushes and webhooks, and the runs due for a re-drive (handed over, or
        // whose isolate went away), under this request's `waitUntil` (module docs).
        static LAST_SWEEP: AtomicU64 = AtomicU64::new(0);
        if let Some(spawner) = spawner
            && crate::sweep::claim(
                &LAST_SWEEP,
                WorkerClock.now_ms(),
                crate::sweep::poll_ms(vars),
            )
        {
            let (outbox, engine) = (engine.outbox().cloned(), engine.clone());
            // Inside what `waitUntil` grants past the response; a run still going then is
            // handed over again.
            let deadline = WorkerClock.now_ms().saturating_add(REDRIVE_BUDGET_MS);
            spawner.spawn(Box::pin(async move {
                if let Some(outbox) = outbox {
                    outbox.deliver_due(crate::sweep::SWEEP_LIMIT).await;
                }
                engine
                    .redrive_due(crate::sweep::SWEEP_LIMIT, Some(deadline))
                    .await;
            }));
        }
        let app = match self.options.app(Host::Workers, engine, authenticator, vars) {
            Ok(app) => app,
            Err(why) => return Ok(not_configured(&why)),
        };
        let mut req = req.map(Body::new);
        if let Some(budget_ms) = vars("HANDOFF_RUN_BUDGET_MS").and_then(|v| v.parse::<u64>().ok()) {
            let deadline = WorkerClock.now_ms().saturating_add(budget_ms);
            req.extensions_mut().insert(HostDeadline(Some(deadline)));
        }
        let span = request_span(&req);
        // Cloudflare's ray id names the request in its own logs too.
        if let Some(ray) = req.headers().get("cf-ray").and_then(|v| v.to_str().ok()) {
            let id = handoff_http::RequestId(ray.to_owned());
            req.extensions_mut().insert(id);
        }
        if let Some(trace) = telemetry::trace_id(&span) {
            req.extensions_mut().insert(handoff_http::TraceId(trace));
        }
        match app.oneshot(req).instrument(span.clone()).await {
            Ok(response) => {
                span.record("http.response.status_code", response.status().as_u16());
                // A new schedule may tick sooner than the ticker's alarm is set for.
                #[cfg(feature = "schedules")]
                if let Some(spawner) = arm_after.filter(|_| response.status().as_u16() == 201) {
                    spawner.spawn(Box::pin(worker::send::SendFuture::new(async move {
                        schedules::arm(&env).await;
                    })));
                }
                Ok(response)
            }
            Err(never) => match never {},
        }
    }
}

/// The request's server span, `{method}` (OpenTelemetry's name when no route is known),
/// continuing its `traceparent`.
fn request_span(req: &axum::http::Request<Body>) -> tracing::Span {
    let method = req.method();
    let path = req.uri().path();
    let traceparent = req
        .headers()
        .get("traceparent")
        .and_then(|v| v.to_str().ok());
    tracing::info_span!(
        target: "handoff::http",
        "request",
        // Before routing no route template is known; the path would make names unbounded.
        otel.name = %method,
        otel.kind = "server",
        http.request.method = %method,
        url.path = path,
        handoff.traceparent = traceparent,
        http.response.status_code = tracing::field::Empty,
    )
}

/// The authenticator `HANDOFF_AUTH` names, built once per isolate (its key-set cache
/// outlives requests). A configuration error is not cached: it is answered every time.
fn authenticator_from_vars(env: &Env) -> Result<Arc<dyn Authenticator>, String> {
    static AUTHENTICATOR: OnceLock<Arc<dyn Authenticator>> = OnceLock::new();
    if let Some(authenticator) = AUTHENTICATOR.get() {
        return Ok(authenticator.clone());
    }
    let config = AuthConfig::from_lookup(|key| var(env, key)).map_err(|e| e.to_string())?;
    let http = FetchOutbound::guarded(config.allows_insecure_jwks());
    let jwks = Arc::new(handoff_auth::HttpJwks(http));
    let authenticator = authenticator_from_env(Host::Workers, config, jwks, Arc::new(WorkerClock))?;
    Ok(AUTHENTICATOR.get_or_init(|| authenticator).clone())
}

/// A Worker that must not serve (no or bad `HANDOFF_AUTH`, bad `HANDOFF_CORS_ORIGINS`)
/// answers every request 500 `AUTH_NOT_CONFIGURED` and logs why.
fn not_configured(why: &str) -> Response {
    worker::console_error!("handoff: refusing to serve: {why}");
    ApiError::new(
        codes::AUTH_NOT_CONFIGURED,
        "this endpoint is not configured to authenticate callers; see its logs",
    )
    .into_response()
}

/// A2A on Workers: a receiver on `store` and the delegation client, both over
/// `fetch` behind the outbound URL guard (`HANDOFF_A2A_ALLOW_LOOPBACK=true` lets
/// loopback and `http://` through, tests only; `HANDOFF_A2A_*` tune the receiver).
#[cfg(feature = "a2a")]
pub fn a2a(
    env: &Env,
    store: Arc<dyn Store>,
    runtime: Runtime,
) -> (handoff_a2a::Receiver, handoff_a2a::A2aClient) {
    use std::sync::OnceLock;

    use handoff_a2a::{A2aClient, Receiver, ReceiverConfig};
    use handoff_auth::{CachedJwks, HttpJwks};

    /// Sender key sets, cached for the isolate's lifetime (engines are per request).
    static JWKS: OnceLock<Arc<CachedJwks<HttpJwks<FetchOutbound>>>> = OnceLock::new();
    let vars = |key: &str| var(env, key);
    let allow_loopback = vars("HANDOFF_A2A_ALLOW_LOOPBACK")
        .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
    let http = FetchOutbound::guarded(allow_loopback);
    let jwks = JWKS
        .get_or_init(|| Arc::new(CachedJwks::new(HttpJwks(http))))
        .clone();
    let receiver = Receiver::new(store, runtime, jwks, ReceiverConfig::from_lookup(vars));
    let client = A2aClient::new(Arc::new(http), Arc::new(RandomTokens), allow_loopback);
    (receiver, client)
}
