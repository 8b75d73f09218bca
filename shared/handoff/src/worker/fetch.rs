//! A2A on Workers: outbound requests and sender key sets through `fetch`.
//!
//! Workers cannot see DNS answers, so the address check is the URL guard's
//! (https only, no private, loopback or link-local literals or names);
//! Cloudflare's edge cannot reach a deployer's private network in any case.
//! Redirects are not followed, bodies are capped and requests time out.

use std::time::Duration;

use async_trait::async_trait;
use futures::future::{Either, select};
use handoff_a2a::client::{
    ClientError, HttpClient, HttpRequest, HttpResponse, MAX_RESPONSE, TokenSource,
};
use handoff_auth::url_guard::check_outbound_url;
use worker::send::SendFuture;
use worker::wasm_bindgen::JsValue;
use worker::{
    AbortController, Delay, Fetch, Headers, Method, Request, RequestInit, RequestRedirect,
};

const TIMEOUT: Duration = Duration::from_secs(10);

/// `fetch` behind the outbound URL guard.
#[derive(Debug, Clone, Copy)]
pub struct FetchHttp {
    /// Allow loopback and plain http (`HANDOFF_A2A_ALLOW_LOOPBACK=true`, tests only).
    pub allow_loopback: bool,
}

impl FetchHttp {
    async fn send_local(self, request: HttpRequest) -> Result<HttpResponse, ClientError> {
        check_outbound_url(&request.url, self.allow_loopback).map_err(ClientError::Refused)?;
        let headers = Headers::new();
        for (name, value) in &request.headers {
            headers
                .set(name, value)
                .map_err(|e| ClientError::Transport(e.to_string()))?;
        }
        if let Some(traceparent) = handoff_host_worker::telemetry::traceparent() {
            let _ = headers.set("traceparent", &traceparent);
        }
        let mut init = RequestInit::new();
        init.with_method(if request.method == "POST" {
            Method::Post
        } else {
            Method::Get
        })
        .with_headers(headers)
        .with_redirect(RequestRedirect::Manual);
        if let Some(body) = &request.body {
            let bytes = worker::js_sys::Uint8Array::from(body.as_slice());
            init.with_body(Some(JsValue::from(bytes)));
        }
        let req = Request::new_with_init(&request.url, &init)
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        let Some(response) = fetch_within(req, TIMEOUT).await else {
            return Err(ClientError::Transport("timed out".to_owned()));
        };
        let mut response = response.map_err(|e| ClientError::Transport(e.to_string()))?;
        let status = response.status_code();
        let body = response
            .bytes()
            .await
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        if body.len() > MAX_RESPONSE {
            return Err(ClientError::Transport(format!(
                "response over {MAX_RESPONSE} bytes"
            )));
        }
        Ok(HttpResponse { status, body })
    }
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
impl HttpClient for FetchHttp {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, ClientError> {
        SendFuture::new(self.send_local(request)).await
    }
}

/// 256-bit tokens from `crypto.getRandomValues`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomTokens;

impl TokenSource for RandomTokens {
    fn token(&self) -> String {
        let mut bytes = [0u8; 32];
        // Never fails in workerd; a token must not be guessable, so fail loudly rather than weakly.
        getrandom::fill(&mut bytes).expect("crypto.getRandomValues");
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}
