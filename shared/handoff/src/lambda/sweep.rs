//! Outbox sweeps at the start of invocations, the re-drives of the template's scheduled
//! invocation, and the schedules' ticks of its `ScheduleTick` invocation (see the
//! [module docs](super)).

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use futures::StreamExt;
use handoff_core::Clock;
use handoff_core::Engine;
use handoff_core::outbox::Outbox;
#[cfg(feature = "schedules")]
use handoff_http::schedules::Scheduler;
use lambda_http::Request;
use lambda_http::RequestExt;
use tower::{Service, ServiceExt};

/// How long a response's end waits for its invocation's sweep: past that, the sweep is
/// frozen with the instance and goes on when it thaws (its items' leases keep other
/// instances off them for a minute).
const SWEEP_WAIT: Duration = Duration::from_secs(2);

/// What an invocation sweeps.
pub(super) struct Sweeps {
    /// The outbox, when the function sends anything from it.
    pub(super) outbox: Option<Arc<Outbox>>,
    /// The engine, whose abandoned and handed-over runs the scheduled invocation finishes.
    pub(super) engine: Engine,
    /// At most one outbox sweep per instance this often.
    pub(super) every_ms: u64,
    /// `HANDOFF_RUN_BUDGET_MS`, for the runs a scheduled invocation re-drives or starts.
    pub(super) budget: super::deadline::RunBudget,
    /// The schedules' ticks, run by the `ScheduleTick` invocation ([`SCHEDULE_TICK_AGENT`]).
    #[cfg(feature = "schedules")]
    pub(super) scheduler: Scheduler,
}

/// `service`, with a background sweep of the outbox at the start of an invocation (at most
/// one per `every_ms`), whose response ends once the sweep did; and, in the template's
/// scheduled invocation ([`SCHEDULE_USER_AGENT`]), the runs to re-drive (background runs
/// handed over, runs whose instance died) finished first, within its deadline; in the
/// template's `ScheduleTick` invocation ([`SCHEDULE_TICK_AGENT`]), the schedules' due ticks
/// claimed and their runs driven to their ends first, within its deadline.
pub(super) fn sweeping<S>(
    service: S,
    sweeps: Sweeps,
) -> impl Service<
    Request,
    Response = Response,
    Error = Infallible,
    Future = impl Future<Output = Result<Response, Infallible>> + Send,
> + Clone
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    let clock = handoff_host_native::SystemClock;
    // Counted from Init: a cold start's first invocations (the health check, the request
    // that woke the instance) carry no sweep and no store call for it.
    let last = Arc::new(AtomicU64::new(clock.now_ms()));
    let Sweeps {
        outbox,
        engine,
        every_ms,
        budget,
        #[cfg(feature = "schedules")]
        scheduler,
    } = sweeps;
    tower::service_fn(move |request: Request| {
        let sweep = outbox
            .clone()
            .filter(|_| crate::sweep::claim(&last, clock.now_ms(), every_ms))
            .map(|outbox| {
                tokio::spawn(async move {
                    let report = outbox.deliver_due(crate::sweep::SWEEP_LIMIT).await;
                    if report != Default::default() {
                        tracing::info!(?report, "outbox: swept");
                    }
                })
            });
        let deadline = request
            .lambda_context_ref()
            .map(|context| super::deadline::absolute_deadline(context.deadline, clock.now_ms()))
            .map(|deadline| budget.within(deadline, clock.now_ms()));
        let redrive = scheduled(&request).then(|| (engine.clone(), deadline));
        #[cfg(feature = "schedules")]
        let ticks = is_schedule_tick(&request).then(|| scheduler.clone());
        let call = service.clone().oneshot(request);
        async move {
            #[cfg(feature = "schedules")]
            if let Some(scheduler) = ticks {
                let report = scheduler.tick_until(deadline).await;
                tracing::info!(?report, "schedules: ticked");
            }
            if let Some((engine, deadline)) = redrive {
                let report = engine
                    .redrive_due(crate::sweep::SWEEP_LIMIT, deadline)
                    .await;
                if report != Default::default() {
                    tracing::info!(?report, "runs re-driven");
                }
            }
            let response = call.await?;
            Ok(match sweep {
                Some(sweep) => response.map(|body| ended_after(body, sweep)),
                None => response,
            })
        }
    })
}

/// The `user-agent` of the template's scheduled invocation (`infra/template.yaml`,
/// `OutboxSweep`: a Function URL `GET /healthz` as its input).
pub(super) const SCHEDULE_USER_AGENT: &str = "handoff-outbox-sweep";

/// Whether `request` is the template's scheduled invocation. Anyone may send its
/// user-agent through the Function URL: what it triggers (finishing runs that are due) is
/// safe to run at any time and at most costs the store reads of a sweep.
fn scheduled(request: &Request) -> bool {
    request
        .headers()
        .get(http::header::USER_AGENT)
        .is_some_and(|agent| agent == SCHEDULE_USER_AGENT)
}

/// The `user-agent` of the invocation that claims the schedules' due ticks (feature
/// `schedules`; without it that invocation only sweeps): a Function URL
/// `GET /healthz` the template's `ScheduleTick` rule sends every minute. Anyone may send
/// it: it starts only ticks that are due anyway, each once.
#[cfg(feature = "schedules")]
pub(super) const SCHEDULE_TICK_AGENT: &str = "handoff-schedule-tick";

/// Whether `request` is the schedules' tick ([`SCHEDULE_TICK_AGENT`]).
#[cfg(feature = "schedules")]
fn is_schedule_tick(request: &Request) -> bool {
    request
        .headers()
        .get(http::header::USER_AGENT)
        .is_some_and(|agent| agent == SCHEDULE_TICK_AGENT)
}

/// `body`, then a wait for `sweep` (at most [`SWEEP_WAIT`]) before the stream ends.
fn ended_after(body: Body, sweep: tokio::task::JoinHandle<()>) -> Body {
    let wait = futures::stream::once(async move {
        let _ = tokio::time::timeout(SWEEP_WAIT, sweep).await;
        None
    })
    .filter_map(futures::future::ready);
    Body::from_stream(body.into_data_stream().chain(wait))
}
