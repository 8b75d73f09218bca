//! A small outbound A2A client for delegation: fetch (and cache) a remote
//! agent's card, register a push subscription with the [`Receiver`], then send
//! the task with `SendMessage` asking the agent to push its updates to us.
//!
//! The HTTP client is injected (the host's one [`Outbound`]), as is the token
//! randomness ([`TokenSource`]), so this stays runtime-agnostic (native hosts use
//! `handoff_host_native::outbound`). Every URL is checked with
//! [`check_outbound_url`](handoff_auth::url_guard::check_outbound_url) before use;
//! clients must refuse private addresses after DNS resolution. Each request is bounded
//! by [`TIMEOUT`] and its answer by [`MAX_RESPONSE`].
//!
//! Wire: v1.0 cards (`supportedInterfaces[]` with `protocolBinding: "JSONRPC"`)
//! get `SendMessage` with `A2A-Version: 1.0`, `returnImmediately: true` and
//! `taskPushNotificationConfig`; v0.3 cards (`protocolVersion: "0.3.x"`, `url`)
//! get `message/send` with `blocking: false` and `pushNotificationConfig`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use a2a_types::jsonrpc::{JsonRpcId, JsonRpcPayload, JsonRpcRequest, JsonRpcResponse};
use a2a_types::{
    Message, SendMessageConfiguration, SendMessageRequest, SendMessageResponse, Task,
    TaskPushNotificationConfig,
};
use handoff_core::outbound::{Outbound, Timeout, read_capped};
use serde_json::{Value, json};
use tracing::Instrument;

use crate::config::{ExpectedAuth, JwtAuth, Subscription};
use crate::error::ReceiverError;
use crate::receiver::Receiver;
use handoff_auth::url_guard::check_outbound_url;

mod card;
mod transport;

pub use card::{CardInfo, WireVersion, parse_card};
pub use transport::{AGENT_CARD_PATH, ClientError, MAX_RESPONSE, TIMEOUT, TokenSource};

/// What to delegate.
#[derive(Debug, Clone)]
pub struct Delegate {
    /// The waiting thread's store partition (`RunContext::partition`: its id, scoped by tenant).
    pub thread_id: String,
    /// The remote agent's base URL (its card is at `{base}/.well-known/agent-card.json`).
    pub agent_url: String,
    /// Our public base URL (the webhook is `{base}/a2a/push/{configId}`).
    pub callback_base_url: String,
    /// The message to send; its `messageId` is replaced by `idempotency_key`.
    pub message: Message,
    /// The key of the `RunContext::effect` the delegation runs in (stable
    /// across retries of that effect). It becomes the message's `messageId`
    /// and the `Idempotency-Key` header, so a retry after an in-doubt send (the
    /// answer was lost) is the same request to the agent, which can answer it
    /// with the task it already created instead of creating a second one.
    pub idempotency_key: String,
    /// Subscription lifetime; the receiver's default when `None`.
    pub ttl_ms: Option<u64>,
    /// For a sender that signs its pushes: each must then carry both the
    /// subscription's token and a JWT signed with keys from `jwks_url`
    /// (`require_all`), so a leaked token alone cannot forge an update.
    pub sender_jwt: Option<JwtAuth>,
}

/// A delegated task.
#[derive(Debug, Clone, PartialEq)]
pub struct Delegation {
    /// The remote task id.
    pub task_id: String,
    /// Our push subscription.
    pub config_id: String,
    /// The task as the agent answered `SendMessage`.
    pub task: Task,
}

/// The delegating client. Cheap to clone.
#[derive(Clone)]
pub struct A2aClient {
    http: Arc<dyn Outbound>,
    tokens: Arc<dyn TokenSource>,
    allow_loopback: bool,
    cards: Arc<Mutex<HashMap<String, CardInfo>>>,
}

impl std::fmt::Debug for A2aClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aClient")
            .field("allow_loopback", &self.allow_loopback)
            .finish_non_exhaustive()
    }
}

fn next_rpc_id() -> JsonRpcId {
    use std::sync::atomic::{AtomicI64, Ordering};
    static NEXT: AtomicI64 = AtomicI64::new(1);
    JsonRpcId::Number(NEXT.fetch_add(1, Ordering::Relaxed))
}

impl A2aClient {
    /// A client over `http`, with tokens from `tokens`; `allow_loopback` for tests only.
    pub fn new(
        http: Arc<dyn Outbound>,
        tokens: Arc<dyn TokenSource>,
        allow_loopback: bool,
    ) -> Self {
        A2aClient {
            http,
            tokens,
            allow_loopback,
            cards: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    fn check(&self, url: &str) -> Result<(), ClientError> {
        check_outbound_url(url, self.allow_loopback).map_err(ClientError::Refused)
    }

    /// Sends `request` within [`TIMEOUT`] and reads the answer, up to [`MAX_RESPONSE`].
    async fn exchange(
        &self,
        request: http::request::Builder,
        body: Vec<u8>,
    ) -> Result<http::Response<Vec<u8>>, ClientError> {
        let mut request = request
            .body(body)
            .map_err(|e| ClientError::Refused(format!("bad request: {e}")))?;
        request.extensions_mut().insert(Timeout(TIMEOUT));
        let response = self.http.send(request).await?;
        Ok(read_capped(response, MAX_RESPONSE).await?)
    }

    /// The agent card at `{agent_url}/.well-known/agent-card.json`, cached per base URL.
    pub async fn card(&self, agent_url: &str) -> Result<CardInfo, ClientError> {
        let base = agent_url.trim_end_matches('/');
        if let Some(card) = self
            .cards
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(base)
        {
            return Ok(card.clone());
        }
        let url = format!("{base}{AGENT_CARD_PATH}");
        self.check(&url)?;
        let request = http::Request::get(&url).header("Accept", "application/json");
        let response = self.exchange(request, Vec::new()).await?;
        if response.status() != http::StatusCode::OK {
            return Err(ClientError::Status {
                status: response.status().as_u16(),
                url,
            });
        }
        let value: Value = serde_json::from_slice(response.body())
            .map_err(|e| ClientError::Protocol(format!("agent card: {e}")))?;
        let card = parse_card(&value)?;
        self.check(&card.rpc_url)?;
        self.cards
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(base.to_owned(), card.clone());
        Ok(card)
    }

    /// Registers a push subscription for `req.thread_id` (task bound by the
    /// first notification, so early pushes are not lost), then sends the
    /// message. The subscription is revoked if the send fails.
    pub async fn delegate(
        &self,
        receiver: &Receiver,
        req: Delegate,
    ) -> Result<Delegation, ClientError> {
        let card = self.card(&req.agent_url).await?;
        if !card.push_notifications {
            return Err(ClientError::Protocol(format!(
                "agent {} does not support push notifications",
                card.name
            )));
        }
        let registration = receiver
            .register(Subscription {
                thread_id: req.thread_id.clone(),
                task_id: None,
                callback_base_url: req.callback_base_url.clone(),
                auth: ExpectedAuth {
                    token: Some(self.tokens.token()),
                    require_all: req.sender_jwt.is_some(),
                    jwt: req.sender_jwt,
                    ..Default::default()
                },
                ttl_ms: req.ttl_ms,
            })
            .await?;
        let mut message = req.message;
        message.message_id.clone_from(&req.idempotency_key);
        match self
            .send(
                &card,
                message,
                registration.push_config.clone(),
                Some(&req.idempotency_key),
            )
            .await
        {
            Ok(task) => {
                if let Err(err) = receiver.bind_task(&registration.config_id, &task.id).await
                    && err != ReceiverError::AlreadyBound
                {
                    tracing::warn!(error = %err, "could not bind the push subscription");
                }
                Ok(Delegation {
                    task_id: task.id.clone(),
                    config_id: registration.config_id,
                    task,
                })
            }
            Err(err) => {
                if let Err(revoke) = receiver.revoke(&registration.config_id).await {
                    tracing::warn!(error = %revoke, "could not revoke the push subscription");
                }
                Err(err)
            }
        }
    }

    /// Sends `message` asking for an immediate answer and pushes to `push`,
    /// with an `Idempotency-Key` header when `idempotency_key` is given.
    ///
    /// Traced as an `a2a.client` span named by the method (`SendMessage`, or v0.3's
    /// `message/send`) with `a2a.method.name`, `a2a.protocol.version`, `a2a.message.id`,
    /// and the answer's `a2a.task.id` and `a2a.task.state`.
    pub async fn send(
        &self,
        card: &CardInfo,
        message: Message,
        push: TaskPushNotificationConfig,
        idempotency_key: Option<&str>,
    ) -> Result<Task, ClientError> {
        let (method, version) = match card.version {
            WireVersion::V1 => ("SendMessage", "1.0"),
            WireVersion::V03 => ("message/send", "0.3"),
        };
        let span = tracing::info_span!(
            target: "handoff::a2a",
            "a2a.client",
            otel.name = method,
            otel.kind = "client",
            otel.status_code = tracing::field::Empty,
            a2a.method.name = method,
            a2a.protocol.version = version,
            a2a.message.id = message.message_id.as_str(),
            a2a.task.id = tracing::field::Empty,
            a2a.task.state = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        let result = self
            .send_once(card, message, push, idempotency_key)
            .instrument(span.clone())
            .await;
        match &result {
            Ok(task) => {
                span.record("a2a.task.id", task.id.as_str());
                span.record("a2a.task.state", task.status.state.as_str());
            }
            Err(error) => {
                span.record("otel.status_code", "ERROR");
                span.record("error.type", error.kind());
            }
        }
        result
    }

    async fn send_once(
        &self,
        card: &CardInfo,
        message: Message,
        push: TaskPushNotificationConfig,
        idempotency_key: Option<&str>,
    ) -> Result<Task, ClientError> {
        self.check(&card.rpc_url)?;
        let body = match card.version {
            WireVersion::V1 => serde_json::to_vec(&JsonRpcRequest::new(
                next_rpc_id(),
                "SendMessage",
                SendMessageRequest {
                    tenant: None,
                    message,
                    configuration: Some(SendMessageConfiguration {
                        accepted_output_modes: Vec::new(),
                        task_push_notification_config: Some(push),
                        history_length: None,
                        return_immediately: true,
                    }),
                    metadata: None,
                },
            )),
            WireVersion::V03 => serde_json::to_vec(&JsonRpcRequest::new(
                next_rpc_id(),
                "message/send",
                v03_params(&message, &push),
            )),
        }
        .map_err(|e| ClientError::Protocol(e.to_string()))?;
        let mut request = http::Request::post(&card.rpc_url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json");
        if card.version == WireVersion::V1 {
            request = request.header("A2A-Version", "1.0");
        }
        if let Some(key) = idempotency_key {
            request = request.header("Idempotency-Key", key);
        }
        let response = self.exchange(request, body).await?;
        if response.status() != http::StatusCode::OK {
            return Err(ClientError::Status {
                status: response.status().as_u16(),
                url: card.rpc_url.clone(),
            });
        }
        let answer: JsonRpcResponse<Value> = serde_json::from_slice(response.body())
            .map_err(|e| ClientError::Protocol(format!("JSON-RPC answer: {e}")))?;
        match answer.payload {
            JsonRpcPayload::Error(e) => Err(ClientError::Rpc {
                code: e.code,
                message: e.message,
            }),
            JsonRpcPayload::Result(value) => match serde_json::from_value(value)
                .map_err(|e| ClientError::Protocol(format!("SendMessage result: {e}")))?
            {
                SendMessageResponse::Task(task) => Ok(task),
                SendMessageResponse::Message(_) => Err(ClientError::Protocol(
                    "the agent answered with a message, not a task".to_owned(),
                )),
            },
        }
    }
}

/// v0.3 `message/send` params: `kind` discriminators, lowercase roles, `blocking: false`.
fn v03_params(message: &Message, push: &TaskPushNotificationConfig) -> Value {
    let parts: Vec<Value> = message
        .parts
        .iter()
        .map(|p| match p.as_text() {
            Some(text) => json!({"kind": "text", "text": text}),
            None => {
                let mut v = serde_json::to_value(p).unwrap_or(Value::Null);
                if let Some(data) = v.get("data").cloned() {
                    v = json!({"kind": "data", "data": data});
                }
                v
            }
        })
        .collect();
    let mut config = json!({"url": push.url});
    if let Some(id) = &push.id {
        config["id"] = json!(id);
    }
    if let Some(token) = &push.token {
        config["token"] = json!(token);
    }
    json!({
        "message": {
            "kind": "message",
            "messageId": message.message_id,
            "role": "user",
            "parts": parts,
        },
        "configuration": {"blocking": false, "pushNotificationConfig": config}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_v1_and_v03_cards() {
        let v1 = parse_card(&json!({
            "name": "fraud",
            "capabilities": {"pushNotifications": true},
            "supportedInterfaces": [{"url": "http://127.0.0.1:1/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
        }))
        .unwrap();
        assert_eq!(v1.version, WireVersion::V1);
        assert!(v1.push_notifications);
        let v03 = parse_card(
            &json!({"name": "old", "url": "https://x.example/rpc", "protocolVersion": "0.3.0"}),
        )
        .unwrap();
        assert_eq!(v03.version, WireVersion::V03);
        assert_eq!(v03.rpc_url, "https://x.example/rpc");
        assert!(parse_card(&json!({"name": "none"})).is_err());
    }
}
