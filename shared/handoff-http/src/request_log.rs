//! One log line per request, written when its response has been sent to the end (a
//! run's stream included): `request` on target `handoff::request` with `request_id`,
//! `method`, `route` (the route template, else the path), `status`, `code` (the error
//! code of a refusal), `tenant`, `thread_id` and `run_id` (of a run it started),
//! `trace_id`, `store_calls` (of that run), `duration_ms` and `aborted` (the client went
//! away first). The run itself ends with its own `run ended` line carrying the same
//! `request_id` and `trace_id`, so the two join.
//!
//! The request id is the host's ([`RequestId`] in the request extensions: Lambda's
//! request id, Cloudflare's ray id), else a well-formed `X-Request-Id` the caller sent,
//! else a fresh one; it is echoed as `X-Request-Id`. Nothing is done when no subscriber
//! wants the line.

use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use handoff_core::{Runtime, StoreCalls};
use http::{HeaderName, HeaderValue};
use http_body::{Body as _, Frame, SizeHint};

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The id of the request being served, when the host has one (put it in the request
/// extensions before the router); otherwise the router makes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(pub String);

/// The trace a host's own tracing put the request in (32 hex digits): the router uses it
/// for the log lines instead of the incoming `traceparent`'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceId(pub String);

/// What the routes learn while answering, for the request's line.
#[derive(Debug, Default)]
pub(crate) struct RequestFacts(Mutex<Facts>);

#[derive(Debug, Default)]
struct Facts {
    tenant: Option<String>,
    thread_id: Option<String>,
    run_id: Option<String>,
    store_calls: Option<StoreCalls>,
}

impl RequestFacts {
    fn with<R>(&self, f: impl FnOnce(&mut Facts) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Who was authenticated.
    pub(crate) fn tenant(&self, tenant: &str) {
        self.with(|f| f.tenant = Some(tenant.to_owned()));
    }

    /// The run the request started, and the counter of its store calls.
    pub(crate) fn run(&self, thread_id: &str, run_id: &str, store_calls: &StoreCalls) {
        self.with(|f| {
            f.thread_id = Some(thread_id.to_owned());
            f.run_id = Some(run_id.to_owned());
            f.store_calls = Some(store_calls.clone());
        });
    }
}

/// The error code a refusal answered with (set by `ApiError`'s response).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ErrorCode(pub(crate) &'static str);

/// The middleware: see the [module docs](self).
pub(crate) async fn log_request(
    State(runtime): State<Runtime>,
    mut request: Request,
    next: Next,
) -> Response {
    if !tracing::enabled!(target: "handoff::request", tracing::Level::INFO) {
        return next.run(request).await;
    }
    let started_ms = runtime.now_ms();
    let extensions = request.extensions();
    let request_id = extensions
        .get::<RequestId>()
        .map(|id| id.0.clone())
        .or_else(|| {
            let sent = request.headers().get(&REQUEST_ID)?.to_str().ok()?;
            well_formed(sent).then(|| sent.to_owned())
        })
        .unwrap_or_else(|| runtime.ids.next_id("req"));
    let trace_id = extensions
        .get::<TraceId>()
        .map(|t| t.0.clone())
        .or_else(|| {
            let header = request.headers().get("traceparent")?.to_str().ok()?;
            crate::parse_traceparent(header).map(|(trace, _)| trace)
        });
    let route = match extensions.get::<MatchedPath>() {
        Some(matched) => matched.as_str().to_owned(),
        None => request.uri().path().to_owned(),
    };
    let facts = Arc::new(RequestFacts::default());
    let method = request.method().to_string();
    let extensions = request.extensions_mut();
    extensions.insert(RequestId(request_id.clone()));
    if let Some(trace) = &trace_id {
        extensions.insert(TraceId(trace.clone()));
    }
    extensions.insert(facts.clone());
    let response = next.run(request).await;
    let (mut parts, body) = response.into_parts();
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        parts.headers.insert(REQUEST_ID, value);
    }
    let line = RequestLine {
        runtime,
        started_ms,
        request_id,
        trace_id,
        method,
        route,
        status: parts.status.as_u16(),
        code: parts.extensions.get::<ErrorCode>().map(|c| c.0),
        facts,
    };
    Response::from_parts(
        parts,
        Body::new(LoggedBody {
            body,
            line: Some(line),
        }),
    )
}

/// An id a caller may choose: short, printable, no separators a log parser could trip on.
fn well_formed(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
}

struct RequestLine {
    runtime: Runtime,
    started_ms: u64,
    request_id: String,
    trace_id: Option<String>,
    method: String,
    route: String,
    status: u16,
    code: Option<&'static str>,
    facts: Arc<RequestFacts>,
}

impl RequestLine {
    fn write(self, aborted: bool) {
        let duration_ms = self.runtime.now_ms().saturating_sub(self.started_ms);
        self.facts.with(|facts| {
            tracing::info!(
                target: "handoff::request",
                request_id = self.request_id,
                method = self.method,
                route = self.route,
                status = self.status,
                code = self.code,
                tenant = facts.tenant.as_deref(),
                thread_id = facts.thread_id.as_deref(),
                run_id = facts.run_id.as_deref(),
                trace_id = self.trace_id.as_deref(),
                store_calls = facts.store_calls.as_ref().map(StoreCalls::count),
                duration_ms,
                aborted,
                "request"
            );
        });
    }
}

/// The response body, writing the request's line once it has been sent whole (or
/// dropped unfinished: the client went away).
struct LoggedBody {
    body: Body,
    line: Option<RequestLine>,
}

impl http_body::Body for LoggedBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = std::pin::Pin::new(&mut self.body).poll_frame(cx);
        if let Poll::Ready(None) = polled
            && let Some(line) = self.line.take()
        {
            line.write(false);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for LoggedBody {
    fn drop(&mut self) {
        if let Some(line) = self.line.take() {
            // Sent whole if nothing was left to send; else the client left first.
            let aborted = !self.body.is_end_stream();
            line.write(aborted);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::well_formed;

    #[test]
    fn a_callers_request_id_is_kept_only_when_well_formed() {
        assert!(well_formed("req-01HX.a:b_c"));
        for bad in ["", "a b", "a\nb", "a\"b", &"x".repeat(129)] {
            assert!(!well_formed(bad), "{bad:?}");
        }
    }
}
