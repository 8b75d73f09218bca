//! MCP servers on Workers: `handoff_llm::mcp::McpHttp` over `fetch`, behind the same
//! outbound URL guard as A2A delegation ([`super::FetchOutbound`]): `https` only, no
//! private, loopback or link-local literals or names (Workers cannot see DNS answers;
//! Cloudflare's edge cannot reach a private network either), no redirects, the body
//! read in chunks and refused once over the cap, the whole exchange bounded by the
//! request's timeout.
//! `HANDOFF_MCP_ALLOW_LOOPBACK=true` (tests only) allows loopback and `http://`.

use std::time::Duration;

use async_trait::async_trait;
use futures::future::{Either, select};
use futures::{StreamExt, stream};
use handoff_a2a::client::check_outbound_url;
use handoff_llm::mcp::{
    MAX_ANSWER_BYTES, McpHttp, McpHttpError, McpRequest, McpResponse, read_capped,
};
use worker::send::SendFuture;
use worker::wasm_bindgen::JsValue;
use worker::{Delay, Headers, Method, Request, RequestInit, RequestRedirect, ResponseBody};

use super::fetch::fetch_within;

/// `fetch` to MCP servers behind the outbound URL guard.
#[derive(Debug, Clone, Copy)]
pub struct FetchMcp {
    /// Allow loopback and plain http (`HANDOFF_MCP_ALLOW_LOOPBACK=true`, tests only).
    pub allow_loopback: bool,
}

impl FetchMcp {
    async fn post_local(self, request: McpRequest) -> Result<McpResponse, McpHttpError> {
        check_outbound_url(&request.url, self.allow_loopback).map_err(McpHttpError::NotSent)?;
        let not_sent = |e: worker::Error| McpHttpError::NotSent(e.to_string());
        let headers = Headers::new();
        for (name, value) in &request.headers {
            headers.set(name, value).map_err(not_sent)?;
        }
        if let Some(traceparent) = super::log_lines::traceparent() {
            let _ = headers.set("traceparent", &traceparent);
        }
        let mut init = RequestInit::new();
        let body = worker::js_sys::Uint8Array::from(request.body.as_slice());
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_redirect(RequestRedirect::Manual)
            .with_body(Some(JsValue::from(body)));
        let req = Request::new_with_init(&request.url, &init).map_err(not_sent)?;
        let timeout = Duration::from_millis(request.timeout_ms.max(1));
        let Some(response) = fetch_within(req, timeout).await else {
            return Err(McpHttpError::InDoubt("no answer in time".to_owned()));
        };
        // workerd does not say whether a failed fetch reached the server.
        let mut response = response.map_err(|e| McpHttpError::InDoubt(e.to_string()))?;
        let header = |name: &str| response.headers().get(name).ok().flatten();
        let (status, content_type, session_id) = (
            response.status_code(),
            header("content-type").unwrap_or_default(),
            header("mcp-session-id"),
        );
        // Read in chunks and stop at the cap: `bytes()` would hold a body of any size
        // before its length could be checked.
        let chunks = match response.body() {
            ResponseBody::Stream(_) => response
                .stream()
                .map_err(|e| McpHttpError::InDoubt(e.to_string()))?
                .boxed_local(),
            ResponseBody::Body(bytes) => stream::iter([Ok(bytes.clone())]).boxed_local(),
            ResponseBody::Empty => stream::empty().boxed_local(),
        };
        // The head came in time; the body (an SSE stream until the response) gets the
        // same bound again rather than none.
        let read = Box::pin(read_capped(chunks, MAX_ANSWER_BYTES));
        let body = match select(read, Box::pin(Delay::from(timeout))).await {
            Either::Left((body, _)) => body?,
            Either::Right(((), _)) => {
                return Err(McpHttpError::InDoubt(
                    "the answer did not end in time".into(),
                ));
            }
        };
        Ok(McpResponse {
            status,
            content_type,
            session_id,
            body,
        })
    }
}

#[async_trait]
impl McpHttp for FetchMcp {
    async fn post(&self, request: McpRequest) -> Result<McpResponse, McpHttpError> {
        SendFuture::new(self.post_local(request)).await
    }
}
