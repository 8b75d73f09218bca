//! The native [`ModelClient`]: a streaming POST on the blocking `ureq` client (the one
//! HTTP stack native hosts already carry), read on tokio's blocking pool and handed to
//! the run chunk by chunk as it arrives.
//!
//! The base URL is the operator's, not a user's: `http://` and loopback (a local Ollama
//! or vLLM) are allowed, unlike the A2A client's guarded outbound calls.

use std::io::Read;
use std::time::Duration;

use async_trait::async_trait;
use futures::channel::oneshot;
use handoff_llm::{ByteStream, ModelClient, ModelError, ModelRequest};
use tokio::sync::mpsc;

/// Longest a model answer may stream when the request names no timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// Largest error body read (to log; never sent to a client).
const MAX_ERROR_BODY: u64 = 64 * 1024;

/// Model calls over `ureq` (rustls with ring).
#[derive(Debug, Clone)]
pub struct UreqModels {
    agent: ureq::Agent,
}

impl Default for UreqModels {
    fn default() -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(10)))
            .build();
        UreqModels {
            agent: config.new_agent(),
        }
    }
}

impl UreqModels {
    /// A client with connection reuse across calls.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl ModelClient for UreqModels {
    async fn stream(&self, mut request: ModelRequest) -> Result<ByteStream, ModelError> {
        // Read here, on the run's task: the blocking thread has no current span.
        if let Some(traceparent) = crate::traceparent() {
            request
                .headers
                .insert("traceparent".to_owned(), traceparent);
        }
        let (head_tx, head_rx) = oneshot::channel();
        let (chunks, mut body) = mpsc::channel::<Result<Vec<u8>, ModelError>>(8);
        let agent = self.agent.clone();
        tokio::task::spawn_blocking(move || {
            let response = match send(&agent, &request) {
                Ok(response) => response,
                Err(error) => {
                    let _ = head_tx.send(Err(error));
                    return;
                }
            };
            if head_tx.send(Ok(())).is_err() {
                return;
            }
            let mut reader = response.into_body().into_reader();
            let mut buf = vec![0u8; 8 * 1024];
            loop {
                let item = match reader.read(&mut buf) {
                    Ok(0) => return,
                    Ok(n) => Ok(buf[..n].to_vec()),
                    Err(e) => Err(ModelError::Unavailable {
                        detail: format!("model stream broke: {e}"),
                    }),
                };
                let failed = item.is_err();
                // A closed receiver is a run that stopped reading: stop downloading.
                if chunks.blocking_send(item).is_err() || failed {
                    return;
                }
            }
        });
        match head_rx.await {
            Ok(Ok(())) => Ok(Box::pin(futures::stream::poll_fn(move |cx| {
                body.poll_recv(cx)
            }))),
            Ok(Err(error)) => Err(error),
            Err(_) => Err(ModelError::Unavailable {
                detail: "model request task ended early".into(),
            }),
        }
    }
}

/// Sends the request; a non-2xx answer becomes its [`ModelError`].
fn send(
    agent: &ureq::Agent,
    request: &ModelRequest,
) -> Result<ureq::http::Response<ureq::Body>, ModelError> {
    let timeout = request
        .timeout_ms
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
    let mut builder = agent
        .post(&request.url)
        .config()
        .timeout_global(Some(timeout))
        .build();
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    let body = serde_json::to_vec(&request.body).map_err(|e| ModelError::Malformed {
        detail: format!("request body: {e}"),
    })?;
    let response = builder
        .send(&body[..])
        .map_err(|e| ModelError::Unavailable {
            detail: format!("model request failed: {e}"),
        })?;
    let status = response.status().as_u16();
    if (200..300).contains(&status) {
        return Ok(response);
    }
    let retry_after = ModelError::retry_after(|name| {
        let value = response.headers().get(name)?.to_str().ok()?;
        Some(value.to_owned())
    });
    let text = response
        .into_body()
        .into_with_config()
        .limit(MAX_ERROR_BODY)
        .read_to_string()
        .unwrap_or_default();
    Err(ModelError::from_http(status, retry_after.as_deref(), &text))
}
