//! The Workers [`Outbound`]: `fetch`, for every outbound call (A2A delegation, key sets,
//! model providers, MCP servers and their OAuth tokens).
//!
//! Workers cannot see DNS answers, so a guarded client's address check is the URL
//! guard's ([`FetchOutbound::guarded`]: https only, no private, loopback or link-local
//! literals or names); Cloudflare's edge cannot reach a deployer's private network in
//! any case. The operator's own endpoints (a model provider's base URL) are not checked
//! ([`FetchOutbound::operator`]). Redirects are not followed. The request's [`Timeout`]
//! bounds the wait for the answer's head and then, again, its body (an SSE answer runs
//! until the server ends it); without one, the head is awaited 60 s and the body is not
//! bounded (a model's stream runs until the run's own deadline stops it). The body is
//! handed on in the chunks workerd reads, so a caller's cap stops the reading.

use std::time::Duration;

use async_trait::async_trait;
use futures::future::{Either, select};
use futures::stream::LocalBoxStream;
use futures::{FutureExt, StreamExt, stream};
use handoff_auth::url_guard::check_outbound_url;
use handoff_core::outbound::{Body, Outbound, OutboundError, Timeout};
use worker::send::{SendFuture, SendWrapper};
use worker::wasm_bindgen::JsValue;
use worker::{
    AbortController, Delay, Fetch, Headers, Method, Request, RequestInit, RequestRedirect,
    ResponseBody,
};

/// How long to wait for the answer's head when the request names no [`Timeout`].
const HEAD_TIMEOUT: Duration = Duration::from_secs(60);

/// `fetch`, guarded or for the operator's own endpoints.
#[derive(Debug, Clone, Copy)]
pub struct FetchOutbound {
    /// `None` for the operator's own endpoints; else whether loopback and plain `http`
    /// are allowed (tests only).
    guard: Option<bool>,
}

impl FetchOutbound {
    /// For users' URLs (agents, key sets, MCP servers): behind the URL guard;
    /// `allow_loopback` (tests only) lets loopback and plain `http` through.
    pub fn guarded(allow_loopback: bool) -> Self {
        FetchOutbound {
            guard: Some(allow_loopback),
        }
    }

    /// For the operator's own endpoints (model providers): no URL check.
    pub fn operator() -> Self {
        FetchOutbound { guard: None }
    }

    async fn send_local(
        self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError> {
        let url = request.uri().to_string();
        if let Some(allow_loopback) = self.guard {
            check_outbound_url(&url, allow_loopback).map_err(OutboundError::Refused)?;
        }
        let not_sent = |e: worker::Error| OutboundError::NotSent(e.to_string());
        let headers = Headers::new();
        for (name, value) in request.headers() {
            let value = value
                .to_str()
                .map_err(|_| OutboundError::NotSent(format!("header {name} is not text")))?;
            headers.set(name.as_str(), value).map_err(not_sent)?;
        }
        if let Some(traceparent) = crate::telemetry::traceparent() {
            let _ = headers.set("traceparent", &traceparent);
        }
        let mut init = RequestInit::new();
        init.with_method(Method::from(request.method().to_string()))
            .with_headers(headers)
            .with_redirect(RequestRedirect::Manual);
        if !request.body().is_empty() {
            let bytes = worker::js_sys::Uint8Array::from(request.body().as_slice());
            init.with_body(Some(JsValue::from(bytes)));
        }
        let req = Request::new_with_init(&url, &init).map_err(not_sent)?;
        let timeout = request.extensions().get::<Timeout>().map(|t| t.0);
        let Some(response) = fetch_within(req, timeout.unwrap_or(HEAD_TIMEOUT)).await else {
            return Err(OutboundError::InDoubt("no answer in time".to_owned()));
        };
        // workerd does not say whether a failed fetch reached the server.
        let mut response = response.map_err(|e| OutboundError::InDoubt(e.to_string()))?;
        let mut head = http::Response::builder().status(response.status_code());
        for (name, value) in response.headers().entries() {
            head = head.header(name, value);
        }
        let chunks: LocalBoxStream<'static, Result<Vec<u8>, OutboundError>> = match response.body()
        {
            ResponseBody::Stream(_) => response
                .stream()
                .map_err(|e| OutboundError::InDoubt(e.to_string()))?
                .map(|chunk| chunk.map_err(|e| OutboundError::InDoubt(e.to_string())))
                .boxed_local(),
            ResponseBody::Body(bytes) => stream::iter([Ok(bytes.clone())]).boxed_local(),
            ResponseBody::Empty => stream::empty().boxed_local(),
        };
        let chunks = match timeout {
            Some(timeout) => within(chunks, timeout),
            None => chunks,
        };
        // Workers run one thread; the wrapper (captured whole, through `DerefMut`) lets
        // the stream satisfy the trait's `Send` bound.
        let mut chunks = SendWrapper(chunks);
        let body: Body = Box::pin(stream::poll_fn(move |cx| {
            std::ops::DerefMut::deref_mut(&mut chunks).poll_next_unpin(cx)
        }));
        head.body(body)
            .map_err(|e| OutboundError::InDoubt(format!("answer head: {e}")))
    }
}

/// `chunks`, ended by an in-doubt error if they have not ended within `timeout`.
fn within(
    mut chunks: LocalBoxStream<'static, Result<Vec<u8>, OutboundError>>,
    timeout: Duration,
) -> LocalBoxStream<'static, Result<Vec<u8>, OutboundError>> {
    let mut deadline = Some(Delay::from(timeout).boxed_local());
    stream::poll_fn(move |cx| {
        let Some(delay) = deadline.as_mut() else {
            return std::task::Poll::Ready(None);
        };
        if delay.poll_unpin(cx).is_ready() {
            deadline = None;
            let late = OutboundError::InDoubt("the answer did not end in time".into());
            return std::task::Poll::Ready(Some(Err(late)));
        }
        chunks.poll_next_unpin(cx)
    })
    .boxed_local()
}

/// Sends `req`, giving up (and aborting it) if no response head arrives within `timeout`:
/// `None` then.
pub(super) async fn fetch_within(
    req: Request,
    timeout: Duration,
) -> Option<worker::Result<worker::Response>> {
    let controller = AbortController::default();
    let signal = controller.signal();
    let fetch = Fetch::Request(req);
    let sent = Box::pin(fetch.send_with_signal(&signal));
    match select(sent, Box::pin(Delay::from(timeout))).await {
        Either::Left((response, _)) => Some(response),
        Either::Right(((), _)) => {
            controller.abort();
            None
        }
    }
}

#[async_trait]
impl Outbound for FetchOutbound {
    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError> {
        SendFuture::new(self.send_local(request)).await
    }
}
