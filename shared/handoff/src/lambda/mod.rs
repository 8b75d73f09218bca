//! The AWS Lambda host: your agent behind the Handoff router, streamed through
//! a Function URL with `InvokeMode: RESPONSE_STREAM`.
//!
//! [`run`] reads everything from the environment; [`Lambda`] sets any part
//! explicitly and falls back to the environment for the rest:
//!
//! | variable | default |
//! |---|---|
//! | `HANDOFF_TABLE` | required: the DynamoDB table (`HANDOFF_CREATE_TABLE=true` creates it in a debug build, for local development, and fails Init in a release build; `AWS_ENDPOINT_URL_DYNAMODB` points the SDK at moto) |
//! | `AWS_CA_BUNDLE` | unset: DynamoDB's certificate is checked against the platform's root certificates; a path to a PEM file: its certificates are trusted too (an endpoint behind a private CA, a TLS-intercepting proxy). A file that cannot be read, or holds no certificate or one that cannot be parsed, refuses to start, naming `AWS_CA_BUNDLE` |
//! | `HANDOFF_STORE` | DynamoDB; `memory` keeps state inside one instance, so it is refused unless `HANDOFF_ALLOW_LOCAL_STORE=true` (a single-instance test); `sqlite` is refused |
//! | `HANDOFF_BODY_LIMIT` | 6,000,000 (Lambda's own request limit is 6 MB) |
//! | `HANDOFF_KEEP_ALIVE_MS` | 15000 |
//! | `HANDOFF_LEASE_MS` | 15 min, capped by each invocation's deadline |
//! | `HANDOFF_STOP_POLL_MS` | 1000: how often a running run looks for a stop sent to another instance |
//! | `HANDOFF_LIVE_FLUSH_MS` | 250: how often a running run journals its events for reconnecting clients |
//! | `HANDOFF_COPILOTKIT_BASE` | `/copilotkit`: where the CopilotKit runtime protocol is served |
//! | `HANDOFF_WEBHOOK_URLS`, `HANDOFF_WEBHOOK_SECRETS`, … | no webhooks (feature `webhooks`, see `handoff_http::webhooks`); posted when a run ends, within its invocation; a failed one is retried by the outbox sweeps (see push notifications below) |
//! | `HANDOFF_OUTBOX_POLL_MS` | 1000: at most one outbox sweep per instance this often (see push notifications below) |
//! | `HANDOFF_MCP_ELICIT_WAIT_MS` | 45000, never past 5 s before the invocation's deadline: how long an MCP session call waits for the answer to the elicitation it sent |
//! | `HANDOFF_RUN_BUDGET_MS` | unset: a run may use its invocation up to the deadline; set: at most this long of it (a background run or a re-drive is then handed over to the next scheduled invocation) |
//! | `RUST_LOG` | `info`; `level` and `target=level` directives (comma-separated) |
//! | `HANDOFF_LOG` | `json`: JSON lines with the current spans' fields (run, thread, tenant); `text` |
//! | `OTEL_EXPORTER_OTLP_ENDPOINT` | unset: no traces; set (feature `otel`): OTLP/HTTP export, flushed before each invocation ends, X-Ray's header the parent when sampled |
//!
//! Init opens the store's connection: after the store is built, [`Lambda::run`] reads one
//! key that never exists (a DynamoDB `GetItem`, which the function's role already may
//! do), so DNS, TCP and the TLS handshake happen during Init rather than in the first
//! request. A failure there (or no answer within 2 s) is logged as a warning and never
//! fails Init; the first request then connects as it would have.
//!
//! **Push notifications** (A2A tasks served here) leave from the store's outbox. The
//! first attempt is made right after the run's end, within the invocation that ran it.
//! An attempt that failed, or was frozen with the instance, is retried by a sweep at the
//! start of a later invocation, at most once per `HANDOFF_OUTBOX_POLL_MS` (1000) per
//! instance and never in the first poll period after Init (a cold start's first requests
//! carry none), run in the background; the invocation's response ends once its sweep did
//! (2 s at most). A function nobody calls does not sweep: `infra/template.yaml` invokes it
//! every minute (an EventBridge schedule sending a Function URL `GET /healthz`).
//!
//! **Schedules** (`POST /schedules`, see `handoff_http::schedules`) tick when the template's
//! `ScheduleTick` rule (EventBridge Scheduler, every minute) invokes the function with a
//! Function URL `GET /healthz` from user agent `handoff-schedule-tick`: that invocation
//! claims the ticks due, runs them as background runs of its own and answers once they
//! ended (by its deadline, within `HANDOFF_RUN_BUDGET_MS`; a run still going then is
//! handed over and finished by a later scheduled invocation, as a background run is).
//! Ticks are at most a minute late here; a schedule of fewer seconds ticks once a minute
//! (its missed ticks collapse into one).
//!
//! The invocation deadline becomes the engine's deadline: a streamed run that would
//! outlive the function is stopped a few seconds before, closes what it opened
//! and ends with `RUN_FINISHED{cancelled}`, and its lease ends with the
//! invocation instead of blocking the thread.
//!
//! **Background runs and re-drives.** A background run (`Prefer: respond-async`) is only
//! claimed in its request's invocation (the environment freezes once the response ends)
//! and answered `202`. The template's scheduled invocation (user-agent
//! `handoff-outbox-sweep`) finishes, before it answers, every run due for a re-drive: the
//! background runs waiting, the runs handed over at an invocation's deadline, and those
//! whose instance died mid-way (see `handoff_core::Engine::redrive_due`). So a run longer
//! than one invocation goes on from invocation to invocation, replaying what it did.
//!
//! ```no_run
//! # use handoff::{Agent, AgentError, Finish, RunContext};
//! # struct MyAgent;
//! # #[handoff::async_trait]
//! # impl Agent for MyAgent {
//! #     async fn run(&self, _: &mut RunContext) -> Result<Finish, AgentError> { Ok(Finish::done()) }
//! # }
//! #[tokio::main]
//! async fn main() -> Result<(), handoff::lambda::Error> {
//!     handoff::lambda::run(MyAgent).await
//! }
//! ```

mod caller;
mod deadline;
mod restart;
mod store;
mod sweep;
mod tls;
mod warm;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use handoff_core::{Agent, Clock, Runtime, Store};
use handoff_http::{Host, HostDeadline};
pub use lambda_http::Error;
use lambda_http::{Request, RequestExt};
use tower::ServiceExt;

use crate::options::{HostOptions, host_setters, native_authenticator};
use caller::iam_caller;
use deadline::absolute_deadline;
pub use store::store_from_env;
use warm::warm_up;

/// Serves `agent` with every setting from the environment (see the [module docs](self)).
pub async fn run(agent: impl Agent) -> Result<(), Error> {
    Lambda::new(agent).run().await
}

/// Serves plain `routes` in Lambda's default buffered mode (small JSON answers,
/// e.g. an A2A webhook), with the same logs.
pub async fn run_buffered(routes: Router) -> Result<(), Error> {
    init_logs();
    lambda_http::run(routes).await
}

/// JSON logs (`RUST_LOG`, default `info`; `HANDOFF_LOG=text` for text): one object per
/// line with the current span's fields; no timestamp, since CloudWatch stamps every line.
/// Traces over OTLP when an endpoint is set (feature `otel`), flushed before each
/// invocation ends. Does nothing if a subscriber is already installed.
pub fn init_logs() {
    match crate::telemetry::init(env, crate::telemetry::LogFormat::Json, false) {
        Ok(true) => startup_mark("logs ready"),
        Ok(false) => {}
        Err(error) => eprintln!("{error}"),
    }
}

/// A startup milestone at debug level on the `handoff::startup` target, stamped with
/// wall-clock microseconds, so a cold start can be broken down from outside
/// (`RUST_LOG=warn,handoff::startup=debug`; `make bench-lambda` does).
fn startup_mark(stage: &'static str) {
    tracing::debug!(target: "handoff::startup", unix_us = unix_us(), stage);
}

fn unix_us() -> u64 {
    #[allow(clippy::disallowed_methods)] // A log stamp, not engine time.
    let now = std::time::SystemTime::now();
    now.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// Clock, ids, timers and a task spawner for tokio.
pub fn runtime() -> Runtime {
    handoff_host_native::runtime()
}

/// Everything [`run`] does, with each part settable.
pub struct Lambda {
    agent: Arc<dyn Agent>,
    store: Option<Arc<dyn Store>>,
    runtime: Option<Runtime>,
    options: HostOptions,
}

impl Lambda {
    /// A function serving `agent`; unset parts come from the environment.
    pub fn new(agent: impl Agent) -> Self {
        Lambda {
            agent: Arc::new(agent),
            store: None,
            runtime: None,
            options: HostOptions::default(),
        }
    }

    /// Keeps state in `store` instead of [`store_from_env`].
    pub fn store(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some(store);
        self
    }

    /// Uses `runtime` (clock, ids, timers) instead of [`runtime()`].
    pub fn runtime(mut self, runtime: Runtime) -> Self {
        self.runtime = Some(runtime);
        self
    }

    host_setters!("Lambda");

    /// Serves invocations until the runtime stops the function.
    pub async fn run(mut self) -> Result<(), Error> {
        if crate::telemetry::init(env, crate::telemetry::LogFormat::Json, false)? {
            startup_mark("logs ready");
        }
        // Before anything else: a function without HANDOFF_AUTH must not start at all.
        let authenticator = match self.options.authenticator.take() {
            Some(authenticator) => authenticator,
            None => native_authenticator(Host::Lambda)?,
        };
        if authenticator.scheme() == "none" {
            tracing::warn!("HANDOFF_AUTH=none: this function serves without authentication");
        }
        let store = match self.store {
            Some(store) => store,
            None => store_from_env().await?,
        };
        let runtime = self.runtime.unwrap_or_else(runtime);
        // Connect during Init, not in the first request (see the module docs).
        warm_up(store.as_ref(), runtime.clock.now_ms()).await;
        self.options.native_outbounds(&store, &runtime, env);
        let engine = self
            .options
            .engine(Host::Lambda, self.agent, store, runtime, env);
        let sweeps = sweep::Sweeps {
            outbox: engine.outbox().cloned(),
            engine: engine.clone(),
            every_ms: crate::sweep::poll_ms(env),
            budget: deadline::RunBudget::from_env(env),
            #[cfg(feature = "schedules")]
            scheduler: self.options.scheduler(&engine),
        };
        let app = self.options.app(Host::Lambda, engine, authenticator, env)?;

        // Lambda requests carry a `lambda_http::Body`; the router takes axum bodies and
        // the invocation deadline as an extension.
        let clock = handoff_host_native::SystemClock;
        let budget = deadline::RunBudget::from_env(env);
        let app = crate::telemetry::traced(app);
        let service = app.map_request(move |request: Request| {
            let deadline = request
                .lambda_context_ref()
                .map(|context| absolute_deadline(context.deadline, clock.now_ms()))
                .map(|deadline| budget.within(deadline, clock.now_ms()));
            let caller = iam_caller(&request);
            let request_id = request
                .lambda_context_ref()
                .map(|context| handoff_http::RequestId(context.request_id.clone()));
            #[cfg(feature = "otel")]
            let xray = request
                .lambda_context_ref()
                .and_then(|context| context.xray_trace_id.clone());
            let (mut parts, body) = request.into_parts();
            #[cfg(feature = "otel")]
            if let Some(xray) = xray {
                parts.extensions.insert(crate::telemetry::XRayHeader(xray));
            }
            parts.extensions.insert(HostDeadline(deadline));
            if let Some(request_id) = request_id {
                parts.extensions.insert(request_id);
            }
            if let Some(caller) = caller {
                parts.extensions.insert(caller);
            }
            axum::http::Request::from_parts(parts, axum::body::Body::from(body.to_vec()))
        });
        // The instance is frozen as soon as the response ends: its spans leave first.
        #[cfg(feature = "otel")]
        let service = service.map_response(|response: axum::response::Response| {
            match crate::telemetry::telemetry() {
                Some(telemetry) => response.map(|body| flushed_at_end(body, telemetry)),
                None => response,
            }
        });
        let service = sweep::sweeping(service, sweeps);
        // Counts the invocations the runtime loop hands over (see `keep_serving`).
        let invocations = Arc::new(AtomicU64::new(0));
        let service = service.map_request({
            let invocations = invocations.clone();
            move |request: Request| {
                invocations.fetch_add(1, Ordering::Relaxed);
                request
            }
        });
        startup_mark("serving");
        restart::keep_serving(
            || lambda_http::run_with_streaming_response(service.clone()),
            || invocations.load(Ordering::Relaxed),
        )
        .await
    }
}

/// `body`, then a flush of the spans before the stream ends (the runs it streamed
/// close their spans just after their last event, so the flush waits for them briefly).
#[cfg(feature = "otel")]
fn flushed_at_end(
    body: axum::body::Body,
    telemetry: &'static handoff_host_native::telemetry::Telemetry,
) -> axum::body::Body {
    use futures::StreamExt;
    let flush = futures::stream::once(async move {
        telemetry.flush(std::time::Duration::from_millis(500)).await;
        None
    })
    .filter_map(futures::future::ready);
    axum::body::Body::from_stream(body.into_data_stream().chain(flush))
}

fn env(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

/// A lookup over `vars`, for the tests of the modules that read the environment.
#[cfg(test)]
fn test_env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |key| {
        vars.iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| (*v).to_owned())
    }
}
