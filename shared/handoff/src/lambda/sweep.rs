//! Outbox sweeps at the start of invocations (see the [module docs](super)).

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use futures::StreamExt;
use handoff_core::Clock;
use handoff_core::outbox::Outbox;
use lambda_http::Request;
use tower::{Service, ServiceExt};

/// How long a response's end waits for its invocation's sweep: past that, the sweep is
/// frozen with the instance and goes on when it thaws (its items' leases keep other
/// instances off them for a minute).
const SWEEP_WAIT: Duration = Duration::from_secs(2);

/// `service`, with a background sweep of `outbox` at the start of an invocation (at most
/// one per `every_ms`), whose response ends once the sweep did.
pub(super) fn sweeping<S>(
    service: S,
    outbox: Option<Arc<Outbox>>,
    every_ms: u64,
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
        let call = service.clone().oneshot(request);
        async move {
            let response = call.await?;
            Ok(match sweep {
                Some(sweep) => response.map(|body| ended_after(body, sweep)),
                None => response,
            })
        }
    })
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
