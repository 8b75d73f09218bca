//! Posting an event to every endpoint, signed as Standard Webhooks says: `webhook-id` (the
//! outbox item's id, the same on every attempt), `webhook-timestamp` (Unix seconds of the
//! attempt) and `webhook-signature`, `v1,` + base64 of HMAC-SHA256 over
//! `{id}.{timestamp}.{body}` under the endpoint's secret.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine as _;
use handoff_core::Clock;
use handoff_core::outbound::{Outbound, Timeout};
use handoff_core::outbox::{OutboxItem, SendOutcome, Sender};
use hmac::{KeyInit, Mac};
use serde_json::{Value, json};

use super::config::{Endpoint, Secret, WebhookConfig, WebhookFormat};

/// How long one endpoint may take.
const SEND_TIMEOUT: Duration = Duration::from_secs(15);

/// `v1,` + base64(HMAC-SHA256(secret, "{id}.{timestamp}.{body}")).
pub fn signature(secret: &Secret, id: &str, timestamp: u64, body: &[u8]) -> String {
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&secret.0)
        .expect("HMAC takes a key of any length");
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    let digest = mac.finalize().into_bytes();
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// Slack's `{"text"}`: what happened, and the approval link.
pub(crate) fn slack_message(event: &Value) -> Value {
    let data = &event["data"];
    let text = |key: &str| data[key].as_str().unwrap_or_default().to_owned();
    let thread = text("threadId");
    let line = match event["type"].as_str().unwrap_or_default() {
        "interrupt.created" => {
            let roles = data["requiredRoles"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect::<Vec<_>>())
                .unwrap_or_default();
            let who = match (
                roles.is_empty(),
                data["notRequester"].as_bool() == Some(true),
            ) {
                (true, _) => "the thread's owner".to_owned(),
                (false, false) => format!("role {}", roles.join(" or ")),
                (false, true) => {
                    format!("role {}, not {}", roles.join(" or "), text("requestedBy"))
                }
            };
            let asks = data["message"].as_str().unwrap_or("An approval is waiting");
            format!(
                "{asks} (thread {thread}, asked by {}; who may answer: {who}). Review: <{}>",
                text("requestedBy"),
                text("consoleUrl")
            )
        }
        "run.finished" => format!(
            "Run {} on thread {thread} finished: {}",
            text("runId"),
            text("outcome")
        ),
        "run.failed" => format!(
            "Run {} on thread {thread} failed: {}",
            text("runId"),
            data["error"]["code"].as_str().unwrap_or_default()
        ),
        other => format!("{other} on thread {thread}"),
    };
    json!({ "text": line })
}

/// Delivers webhook events to the configured endpoints with `outbound` (which applies
/// the outbound URL guard under `HANDOFF_WEBHOOK_ALLOW_LOOPBACK`).
#[derive(Clone)]
pub struct WebhookSender {
    config: Arc<WebhookConfig>,
    outbound: Arc<dyn Outbound>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for WebhookSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookSender")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl WebhookSender {
    /// A sender to `config`'s endpoints, timestamped by `clock`.
    pub fn new(config: WebhookConfig, outbound: Arc<dyn Outbound>, clock: Arc<dyn Clock>) -> Self {
        WebhookSender {
            config: Arc::new(config),
            outbound,
            clock,
        }
    }

    async fn post(&self, endpoint: &Endpoint, id: &str, body: &[u8]) -> Result<(), String> {
        let timestamp = self.clock.now_ms() / 1_000;
        let mut request = http::Request::post(&endpoint.url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .body(body.to_vec())
            .map_err(|_| "the request could not be built".to_owned())?;
        if let Some(secret) = &endpoint.secret {
            let value = http::HeaderValue::from_str(&signature(secret, id, timestamp, body))
                .map_err(|_| "the signature is not a header value".to_owned())?;
            request.headers_mut().insert("webhook-signature", value);
        }
        request.extensions_mut().insert(Timeout(SEND_TIMEOUT));
        // The URL may carry a credential (Slack's do): it is kept out of the error.
        let response = self
            .outbound
            .send(request)
            .await
            .map_err(|e| e.to_string().replace(&endpoint.url, "<url>"))?;
        match response.status() {
            s if s.is_success() => Ok(()),
            s => Err(format!("answered {s}")),
        }
    }
}

#[async_trait]
impl Sender for WebhookSender {
    async fn send(&self, _partition: &str, item: &OutboxItem) -> SendOutcome {
        let body = match self.config.format {
            WebhookFormat::Standard => serde_json::to_vec(&item.body),
            WebhookFormat::Slack => serde_json::to_vec(&slack_message(&item.body)),
        }
        .unwrap_or_default();
        let (mut done, mut errors) = (Vec::new(), Vec::new());
        for endpoint in &self.config.endpoints {
            if item.done.contains(&endpoint.name) {
                continue;
            }
            match self.post(endpoint, &item.id, &body).await {
                Ok(()) => done.push(endpoint.name.clone()),
                Err(error) => errors.push(format!("{}: {error}", endpoint.name)),
            }
        }
        SendOutcome::of_receivers(done, errors)
    }
}
