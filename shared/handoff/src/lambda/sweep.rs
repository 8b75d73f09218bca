//! Outbox sweeps at the start of invocations, and the schedules' ticks of the invocation
//! the template's EventBridge Scheduler rule sends (see the [module docs](super)).

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use futures::StreamExt;
use handoff_core::Clock;
use handoff_core::outbox::Outbox;
use handoff_http::schedules::Scheduler;
use lambda_http::{Request, RequestExt};
use tower::{Service, ServiceExt};

/// How long a response's end waits for its invocation's sweep: past that, the sweep is
/// frozen with the instance and goes on when it thaws (its items' leases keep other
/// instances off them for a minute).
const SWEEP_WAIT: Duration = Duration::from_secs(2);

/// The `user-agent` of the invocation that claims the schedules' due ticks: a Function URL
/// `GET /healthz` the template's `ScheduleTick` rule sends every minute. Anyone may send
/// it: it starts only ticks that are due anyway, each once.
pub(super) const SCHEDULE_TICK_AGENT: &str = "handoff-schedule-tick";

/// `service`, with a background sweep of `outbox` at the start of an invocation (at most
/// one per `every_ms`), whose response ends once the sweep did; an invocation from
/// [`SCHEDULE_TICK_AGENT`] also ticks `scheduler`, and its response ends once the runs it
/// started did (by the invocation's deadline).
pub(super) fn sweeping<S>(
    service: S,
    outbox: Option<Arc<Outbox>>,
    every_ms: u64,
    scheduler: Scheduler,
) -> impl Service<
    Request,
    Response = Response,
    Error = Infallible,
    Future = impl Future<Output = Result<Response, Infallible>> + Send,
>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    let clock = handoff_host_native::SystemClock;
    // Counted from Init: a cold start's first invocations (the health check, the request
    // that woke the instance) carry no sweep and no store call for it.
    let last = Arc::new(AtomicU64::new(clock.now_ms()));
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
        let ticks = is_schedule_tick(&request).then(|| {
            let deadline = request
                .lambda_context_ref()
                .map(|context| super::absolute_deadline(context.deadline, clock.now_ms()));
            let scheduler = scheduler.clone();
            tokio::spawn(async move {
                let report = scheduler.tick_until(deadline).await;
                tracing::info!(?report, "schedules: ticked");
            })
        });
        let call = service.clone().oneshot(request);
        async move {
            let response = call.await?;
            let response = match ticks {
                // Until its runs end: the instance is frozen once the response does.
                Some(ticks) => response.map(|body| ended_after(body, ticks, None)),
                None => response,
            };
            Ok(match sweep {
                Some(sweep) => response.map(|body| ended_after(body, sweep, Some(SWEEP_WAIT))),
                None => response,
            })
        }
    })
}

/// Whether `request` is the schedules' tick ([`SCHEDULE_TICK_AGENT`] on `GET /healthz`).
fn is_schedule_tick(request: &Request) -> bool {
    request.uri().path() == "/healthz"
        && request
            .headers()
            .get(http::header::USER_AGENT)
            .is_some_and(|agent| agent.as_bytes() == SCHEDULE_TICK_AGENT.as_bytes())
}

/// `body`, then a wait for `task` (at most `limit`) before the stream ends.
fn ended_after(body: Body, task: tokio::task::JoinHandle<()>, limit: Option<Duration>) -> Body {
    let wait = futures::stream::once(async move {
        match limit {
            Some(limit) => drop(tokio::time::timeout(limit, task).await),
            None => drop(task.await),
        }
        None
    })
    .filter_map(futures::future::ready);
    Body::from_stream(body.into_data_stream().chain(wait))
}
