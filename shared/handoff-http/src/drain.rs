//! Every request body is read to its end before the answer leaves.
//!
//! A server that answers while the client is still sending (a 401 from the
//! authentication layer, a 404, a 413 that stopped reading at the limit) closes a
//! connection with unread bytes, which resets it: the client sees EPIPE or ECONNRESET
//! instead of the answer, and workerd restarts the request's isolate (the next request
//! gets a 503). Handlers do not have to remember this: [`read_unread_bodies`] wraps the
//! whole router, hands each handler a body that shares the request's, and once the
//! handler has answered (and let go of the body) reads and throws away whatever it
//! left, within bounds that keep a huge or stalled upload from holding the request;
//! past them the connection is closed as before.

use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use futures::future::{Either, select};
use handoff_core::Sleep;
use http::{HeaderMap, header};
use http_body::{Frame, SizeHint};

/// At least this much of an unread body is read and discarded (more when the body limit
/// is larger: see [`read_unread_bodies`]).
const DRAIN_MIN_BYTES: usize = 8 * 1024 * 1024;
/// The time the discarding may take in all.
const DRAIN_MAX_MS: u64 = 5_000;
/// A pause this long means the client stopped sending: answer now.
const DRAIN_IDLE_MS: u64 = 1_000;

/// `router`, with every request body read to its end (within bounds) before its answer
/// is sent. [`crate::Routes::build`] applies it; apply it yourself only to a router you
/// assemble from parts some other way. `sleep` times the bounds; `body_limit` is the
/// largest body the router accepts: bodies up to twice it (and at least 8 MiB) are
/// drained, so a client that overshoots the limit reads its 413 instead of a reset.
pub fn read_unread_bodies(router: Router, sleep: Arc<dyn Sleep>, body_limit: usize) -> Router {
    let bounds = Drain {
        sleep,
        max_bytes: body_limit.saturating_mul(2).max(DRAIN_MIN_BYTES),
    };
    router.layer(axum::middleware::from_fn_with_state(bounds, finish_reading))
}

#[derive(Clone)]
struct Drain {
    sleep: Arc<dyn Sleep>,
    max_bytes: usize,
}

async fn finish_reading(State(bounds): State<Drain>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    if body.is_end_stream() {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let declared = declared_length(&parts.headers);
    // A client that asked `Expect: 100-continue` sends nothing until it is told to go
    // ahead; an answer without that go-ahead replaces the body, so nothing is pending.
    let expects_continue = expects_continue(&parts.headers);
    let shared = Arc::new(Mutex::new(body));
    let handed = Body::new(SharedBody(shared.clone()));
    let response = next.run(Request::from_parts(parts, handed)).await;
    // A handler still holding the body (one that streams it into its answer) keeps
    // reading it itself.
    if let Ok(rest) = Arc::try_unwrap(shared) {
        let rest = rest.into_inner().unwrap_or_else(PoisonError::into_inner);
        if !expects_continue && !rest.is_end_stream() {
            discard(rest, declared, &bounds).await;
        }
    }
    response
}

/// The request's `Content-Length`, if it declared one.
pub(crate) fn declared_length(headers: &HeaderMap) -> Option<usize> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
}

fn expects_continue(headers: &HeaderMap) -> bool {
    headers
        .get(header::EXPECT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
}

/// Reads the rest of `body` and throws it away, within the drain bounds. `declared` is
/// the request's whole declared length: a body that could not be drained within the
/// bounds anyway is left alone.
async fn discard(body: Body, declared: Option<usize>, bounds: &Drain) {
    let (sleep, max_bytes) = (bounds.sleep.as_ref(), bounds.max_bytes);
    if declared.is_some_and(|len| len > max_bytes) {
        return;
    }
    let mut stream = body.into_data_stream();
    let drain = async {
        let mut drained = 0;
        while drained <= max_bytes {
            match select(
                futures::StreamExt::next(&mut stream),
                sleep.sleep(DRAIN_IDLE_MS),
            )
            .await
            {
                Either::Left((Some(Ok(chunk)), _)) => drained += chunk.len(),
                // The end of the body, a broken one, or a client that paused.
                _ => return,
            }
        }
    };
    select(pin!(drain), sleep.sleep(DRAIN_MAX_MS)).await;
}

/// The request body as the handler sees it: the same bytes, read through a handle the
/// middleware keeps so it can finish the job.
struct SharedBody(Arc<Mutex<Body>>);

impl SharedBody {
    fn body(&self) -> MutexGuard<'_, Body> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl HttpBody for SharedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut *self.body()).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body().is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body().size_hint()
    }
}
