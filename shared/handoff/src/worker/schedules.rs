//! Schedules on Workers (`POST /schedules`, see `handoff_http::schedules`): the Cron
//! Trigger ticks them every minute, and a Durable Object's alarm ticks them in between,
//! at each next due tick, for schedules of less than a minute.
//!
//! The ticker is one object (named `ticker`) of a class of your crate, bound as
//! `SCHEDULES` (its alarm runs your agent, so the class is yours; [`ticker_fetch`] and
//! [`ticker_alarm`] do its work). Its alarm is armed at the soonest due tick by every
//! Cron Trigger ([`Worker::tick_schedules`] then [`arm`]), by each `POST /schedules`
//! (under the request's `waitUntil`) and by the alarm itself after each tick. Without the
//! binding, schedules tick on the Cron Trigger alone, once a minute.
//!
//! ```ignore
//! #[worker::durable_object]
//! pub struct ScheduleTicker { state: worker::State, env: worker::Env }
//!
//! impl worker::DurableObject for ScheduleTicker {
//!     fn new(state: worker::State, env: worker::Env) -> Self { Self { state, env } }
//!     async fn fetch(&self, req: worker::Request) -> worker::Result<worker::Response> {
//!         handoff::worker::schedules::ticker_fetch(&self.state, req).await
//!     }
//!     async fn alarm(&self) -> worker::Result<worker::Response> {
//!         let host = handoff::worker::Worker::for_schedules(self.env.clone())?;
//!         handoff::worker::schedules::ticker_alarm(&self.state, host, MyAgent::default()).await
//!     }
//! }
//! ```
//!
//! Each tick is claimed with the store's compare-and-set, so the trigger and the alarm
//! (and several isolates) never run one twice. A run is driven to its end by the handler
//! that claimed it (a `scheduled` event or an alarm, which last as long as it does).

use std::sync::Arc;

use handoff_core::{Agent, Clock, Store};
use handoff_http::Host;
use handoff_http::schedules::TickReport;
use worker::{Env, Headers, Method, Request, RequestInit, Response, State};

use super::{Worker, WorkerClock, outbounds, var};

/// The binding of the ticker's Durable Object class.
pub const SCHEDULES_BINDING: &str = "SCHEDULES";
/// The ticker's name in its namespace.
const TICKER: &str = "ticker";
/// The soonest an alarm is set after now.
const MIN_WAIT_MS: u64 = 200;
/// The header of an arm request that says when to wake (Unix ms). A header rather than a
/// query: reading a query parses the URL, which links a URL parser into the Worker.
const WAKE_AT: &str = "x-handoff-wake-at";

impl Worker {
    /// The host for a `scheduled` event or an alarm: the store from the bindings and a
    /// runtime without a request (the runs it starts are driven by its caller).
    pub fn for_schedules(env: Env) -> worker::Result<Self> {
        let runtime = handoff_core::Runtime::new(
            WorkerClock,
            handoff_host_worker::RandomIds,
            handoff_host_worker::WorkerSleep,
        );
        Ok(Worker {
            store: Arc::new(super::store(&env)?),
            runtime,
            env,
            options: super::HostOptions {
                host_schema_validator: Some(Arc::new(handoff_host_worker::WorkerSchema)),
                ..super::HostOptions::default()
            },
        })
    }

    /// Claims the schedules' due ticks and runs them with `agent` (and the CopilotKit
    /// agents set on this host) to their ends; `HANDOFF_RUN_BUDGET_MS` bounds each run. Then
    /// finishes the runs due for a re-drive (handed over, or whose isolate went away;
    /// `handoff_core::Engine::redrive_due`), each for up to 25 s or that budget.
    pub async fn tick_schedules(mut self, agent: impl Agent) -> TickReport {
        let env = self.env.clone();
        let vars = |key: &str| var(&env, key);
        handoff_host_worker::telemetry::init(&vars);
        outbounds(&mut self.options, &vars);
        let engine = self.options.engine(
            Host::Workers,
            Arc::new(agent),
            self.store.clone(),
            self.runtime.clone(),
            vars,
        );
        let deadline = vars("HANDOFF_RUN_BUDGET_MS")
            .and_then(|v| v.parse::<u64>().ok())
            .map(|budget| WorkerClock.now_ms().saturating_add(budget));
        let report = self.options.scheduler(&engine).tick_until(deadline).await;
        let until = deadline.unwrap_or_else(|| {
            WorkerClock
                .now_ms()
                .saturating_add(super::REDRIVE_BUDGET_MS)
        });
        let redriven = engine
            .redrive_due(crate::sweep::SWEEP_LIMIT, Some(until))
            .await;
        if redriven != handoff_core::RedriveReport::default() {
            tracing::info!(?redriven, "runs re-driven");
        }
        report
    }
}

/// When the ticker should next wake: the soonest due tick (not before a moment from now).
async fn wake_at(store: &dyn Store) -> Option<u64> {
    let now = WorkerClock.now_ms();
    match handoff_core::schedule::next_due(store, now).await {
        Ok(next) => next.map(|at| at.max(now + MIN_WAIT_MS)),
        Err(err) => {
            tracing::warn!(error = %err, "schedules: the next due tick could not be read");
            None
        }
    }
}

/// Arms the ticker (binding [`SCHEDULES_BINDING`]) at the soonest due tick; nothing when
/// no schedule exists or the binding is absent.
pub async fn arm(env: &Env) {
    let Ok(store) = super::store(env) else {
        return;
    };
    let Some(at) = wake_at(&store).await else {
        return;
    };
    let Ok(namespace) = env.durable_object(SCHEDULES_BINDING) else {
        return;
    };
    let stub = namespace.id_from_name(TICKER).and_then(|id| id.get_stub());
    let request = arm_request(at);
    let armed = match (stub, request) {
        (Ok(stub), Ok(request)) => stub.fetch_with_request(request).await.map(|_| ()),
        (Err(err), _) | (_, Err(err)) => Err(err),
    };
    if let Err(err) = armed {
        tracing::warn!(error = %err, "schedules: the ticker could not be armed");
    }
}

/// The request that arms the ticker at `at`.
fn arm_request(at: u64) -> worker::Result<Request> {
    let headers = Headers::new();
    headers.set(WAKE_AT, &at.to_string())?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_headers(headers);
    Request::new_with_init("https://ticker/arm", &init)
}

/// The ticker's `fetch`: `POST /arm` with `x-handoff-wake-at: {unixMs}` sets its alarm
/// then unless one is set sooner.
pub async fn ticker_fetch(state: &State, req: Request) -> worker::Result<Response> {
    let at = req
        .headers()
        .get(WAKE_AT)?
        .and_then(|v| v.parse::<u64>().ok());
    let Some(at) = at else {
        return Response::error("x-handoff-wake-at (Unix ms) is required", 400);
    };
    let storage = state.storage();
    let now = WorkerClock.now_ms();
    let set = storage.get_alarm().await?;
    let sooner = set
        .and_then(|s| u64::try_from(s).ok())
        .filter(|s| *s > now && *s <= at);
    if sooner.is_none() {
        set_alarm_at(state, at).await?;
    }
    Response::ok("armed")
}

/// The ticker's `alarm`: ticks the due schedules with `agent` on `host`, then sets the
/// alarm at the next due tick.
pub async fn ticker_alarm(
    state: &State,
    host: Worker,
    agent: impl Agent,
) -> worker::Result<Response> {
    let store = host.shared_store();
    let report = host.tick_schedules(agent).await;
    if report != TickReport::default() {
        tracing::info!(?report, "schedules: ticked by the alarm");
    }
    if let Some(at) = wake_at(store.as_ref()).await {
        set_alarm_at(state, at).await?;
    }
    Response::ok("ticked")
}

async fn set_alarm_at(state: &State, at: u64) -> worker::Result<()> {
    let offset = i64::try_from(at.saturating_sub(WorkerClock.now_ms())).unwrap_or(i64::MAX);
    state.storage().set_alarm(offset).await
}
