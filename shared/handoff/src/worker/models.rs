//! Model calls on Workers: a streaming `fetch` behind `handoff_llm::ModelClient`.
//!
//! The answer's body is handed to the run chunk by chunk as workerd reads it. The
//! request's timeout bounds the wait for the response head (the stream then runs until
//! the run's own deadline stops it). The base URL is the operator's: `http` and loopback
//! are allowed, unlike the A2A client's guarded calls.

use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use handoff_llm::{ByteStream, ModelClient, ModelError, ModelRequest};
use worker::send::{SendFuture, SendWrapper};
use worker::wasm_bindgen::JsValue;
use worker::{Headers, Method, Request, RequestInit};

use super::fetch::fetch_within;

/// How long to wait for the response head when the request names no timeout.
const HEAD_TIMEOUT: Duration = Duration::from_secs(60);

/// Model calls through `fetch`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FetchModels;

impl FetchModels {
    async fn stream_local(request: ModelRequest) -> Result<ByteStream, ModelError> {
        let failed = |what: &str, e: worker::Error| ModelError::Unavailable {
            detail: format!("{what}: {e}"),
        };
        let headers = Headers::new();
        for (name, value) in &request.headers {
            headers.set(name, value).map_err(|e| failed("header", e))?;
        }
        if let Some(traceparent) = handoff_host_worker::telemetry::traceparent() {
            let _ = headers.set("traceparent", &traceparent);
        }
        let body = serde_json::to_string(&request.body).map_err(|e| ModelError::Malformed {
            detail: format!("request body: {e}"),
        })?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(JsValue::from_str(&body)));
        let req = Request::new_with_init(&request.url, &init).map_err(|e| failed("request", e))?;
        let wait = request
            .timeout_ms
            .map_or(HEAD_TIMEOUT, Duration::from_millis);
        let Some(response) = fetch_within(req, wait).await else {
            return Err(ModelError::Unavailable {
                detail: "no response from the model in time".into(),
            });
        };
        let mut response = response.map_err(|e| failed("fetch", e))?;
        let status = response.status_code();
        if !(200..300).contains(&status) {
            let retry_after =
                ModelError::retry_after(|name| response.headers().get(name).ok().flatten());
            let text = response.text().await.unwrap_or_default();
            return Err(ModelError::from_http(status, retry_after.as_deref(), &text));
        }
        let mut body = SendWrapper(response.stream().map_err(|e| failed("body", e))?);
        // Workers run one thread; the wrapper (captured whole, through `DerefMut`) lets
        // the stream satisfy the client trait's `Send` bound.
        let chunks = futures::stream::poll_fn(move |cx| {
            std::ops::DerefMut::deref_mut(&mut body)
                .poll_next_unpin(cx)
                .map(|item| {
                    item.map(|chunk| {
                        chunk.map_err(|e| ModelError::Unavailable {
                            detail: format!("model stream broke: {e}"),
                        })
                    })
                })
        });
        Ok(Box::pin(chunks))
    }
}

#[async_trait]
impl ModelClient for FetchModels {
    async fn stream(&self, request: ModelRequest) -> Result<ByteStream, ModelError> {
        SendFuture::new(Self::stream_local(request)).await
    }
}
