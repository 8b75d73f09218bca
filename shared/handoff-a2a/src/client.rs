//! A small outbound A2A client for delegation: fetch (and cache) a remote
//! agent's card, register a push subscription with the [`Receiver`], then send
//! the task with `SendMessage` asking the agent to push its updates to us.
//!
//! The HTTP transport is injected ([`HttpClient`]), as is the token randomness
//! ([`TokenSource`]), so this stays runtime-agnostic (native hosts use
//! `handoff_native::a2a`). Every URL is checked with [`check_outbound_url`]
//! before use; transports must refuse private addresses after DNS resolution.
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
use async_trait::async_trait;
use serde_json::{Value, json};

use crate::config::{ExpectedAuth, JwtAuth, Subscription};
use crate::error::ReceiverError;
use crate::receiver::Receiver;
use crate::url_guard::check_jwks_url;

/// Path of the agent card under an agent's base URL.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";
/// Largest accepted response body (agent card or JSON-RPC answer).
pub const MAX_RESPONSE: usize = 1024 * 1024;

/// One outbound request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// `GET` or `POST`.
    pub method: &'static str,
    /// Absolute URL (already checked by [`check_outbound_url`]).
    pub url: String,
    /// Headers.
    pub headers: Vec<(String, String)>,
    /// Body, for `POST`.
    pub body: Option<Vec<u8>>,
}

/// One answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// Body (at most [`MAX_RESPONSE`] bytes).
    pub body: Vec<u8>,
}

/// The host's HTTP client. Implementations must time out, cap the body, and
/// refuse loopback / private / link-local addresses after DNS resolution
/// (unless the host explicitly allows loopback for tests).
#[async_trait]
pub trait HttpClient: Send + Sync + 'static {
    /// Sends `request`; any HTTP status is an `Ok`.
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, ClientError>;
}

/// Secure randomness for per-subscription tokens.
pub trait TokenSource: Send + Sync + 'static {
    /// A fresh, unguessable token of at least 16 characters.
    fn token(&self) -> String;
}

/// What can go wrong while delegating.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientError {
    /// The URL is not allowed (scheme, private address, ...).
    #[error("refused URL: {0}")]
    Refused(String),
    /// Network failure or timeout.
    #[error("transport: {0}")]
    Transport(String),
    /// Unexpected HTTP status.
    #[error("HTTP {status} from {url}")]
    Status {
        /// The status.
        status: u16,
        /// The URL.
        url: String,
    },
    /// An answer that is not what A2A says.
    #[error("protocol: {0}")]
    Protocol(String),
    /// A JSON-RPC error from the agent.
    #[error("A2A error {code}: {message}")]
    Rpc {
        /// JSON-RPC code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// Registering the push subscription failed.
    #[error("push subscription: {0}")]
    Subscription(String),
}

impl From<ReceiverError> for ClientError {
    fn from(e: ReceiverError) -> Self {
        ClientError::Subscription(e.to_string())
    }
}

/// Outbound URL policy: `https` to public hosts; with `allow_loopback`,
/// `http` too and loopback hosts (`localhost`, `127.0.0.0/8`, `::1`), never
/// private or link-local ones.
pub fn check_outbound_url(url: &str, allow_loopback: bool) -> Result<(), String> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let rest = if lower.starts_with("https://") {
        &url[8..]
    } else if lower.starts_with("http://") && allow_loopback {
        &url[7..]
    } else {
        return Err("outbound A2A URLs must be https".to_owned());
    };
    let as_https = format!("https://{rest}");
    match check_jwks_url(&as_https, false) {
        Ok(()) => Ok(()),
        Err(reason) => {
            // Structural checks (user info, ports, spaces) pass in insecure mode only if well-formed.
            check_jwks_url(&as_https, true)?;
            if allow_loopback && is_loopback_host(rest) {
                Ok(())
            } else {
                Err(reason.replace("key-set", "outbound"))
            }
        }
    }
}

fn is_loopback_host(rest: &str) -> bool {
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(b) => b.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    }
    .to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Protocol version a card speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireVersion {
    /// A2A 1.0 (`SendMessage`).
    V1,
    /// A2A 0.3 (`message/send`).
    V03,
}

/// What the client needs from an agent card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardInfo {
    /// The agent's name.
    pub name: String,
    /// JSON-RPC endpoint.
    pub rpc_url: String,
    /// Version to speak.
    pub version: WireVersion,
    /// `capabilities.pushNotifications`.
    pub push_notifications: bool,
}

/// Reads the parts of an agent card the client uses (v1.0 or v0.3).
pub fn parse_card(card: &Value) -> Result<CardInfo, ClientError> {
    let name = card
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("agent")
        .to_owned();
    let push_notifications = card
        .pointer("/capabilities/pushNotifications")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let interfaces = card
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let jsonrpc = |i: &&Value| {
        i.get("protocolBinding")
            .or_else(|| i.get("transport"))
            .and_then(Value::as_str)
            .is_some_and(|b| b.eq_ignore_ascii_case("JSONRPC"))
    };
    if let Some(iface) = interfaces.iter().filter(jsonrpc).find(|i| {
        i.get("protocolVersion")
            .and_then(Value::as_str)
            .is_none_or(|v| v.starts_with('1'))
    }) && let Some(url) = iface.get("url").and_then(Value::as_str)
    {
        return Ok(CardInfo {
            name,
            rpc_url: url.to_owned(),
            version: WireVersion::V1,
            push_notifications,
        });
    }
    let url = card
        .get("url")
        .and_then(Value::as_str)
        .or_else(|| {
            interfaces
                .iter()
                .find(jsonrpc)
                .and_then(|i| i.get("url"))
                .and_then(Value::as_str)
        })
        .ok_or_else(|| ClientError::Protocol("the agent card has no JSON-RPC URL".to_owned()))?;
    Ok(CardInfo {
        name,
        rpc_url: url.to_owned(),
        version: WireVersion::V03,
        push_notifications,
    })
}

/// What to delegate.
#[derive(Debug, Clone)]
pub struct Delegate {
    /// The waiting thread.
    pub thread_id: String,
    /// The remote agent's base URL (its card is at `{base}/.well-known/agent-card.json`).
    pub agent_url: String,
    /// Our public base URL (the webhook is `{base}/a2a/push/{configId}`).
    pub callback_base_url: String,
    /// The message to send (its `messageId` should be stable for retries).
    pub message: Message,
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
    http: Arc<dyn HttpClient>,
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
        http: Arc<dyn HttpClient>,
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
        let response = self
            .http
            .send(HttpRequest {
                method: "GET",
                url: url.clone(),
                headers: vec![("Accept".to_owned(), "application/json".to_owned())],
                body: None,
            })
            .await?;
        if response.status != 200 {
            return Err(ClientError::Status {
                status: response.status,
                url,
            });
        }
        let value: Value = serde_json::from_slice(&response.body)
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
        match self
            .send(&card, req.message, registration.push_config.clone())
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

    /// Sends `message` asking for an immediate answer and pushes to `push`.
    pub async fn send(
        &self,
        card: &CardInfo,
        message: Message,
        push: TaskPushNotificationConfig,
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
        let mut headers = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Accept".to_owned(), "application/json".to_owned()),
        ];
        if card.version == WireVersion::V1 {
            headers.push(("A2A-Version".to_owned(), "1.0".to_owned()));
        }
        let response = self
            .http
            .send(HttpRequest {
                method: "POST",
                url: card.rpc_url.clone(),
                headers,
                body: Some(body),
            })
            .await?;
        if response.status != 200 {
            return Err(ClientError::Status {
                status: response.status,
                url: card.rpc_url.clone(),
            });
        }
        let answer: JsonRpcResponse<Value> = serde_json::from_slice(&response.body)
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
    fn outbound_urls_are_guarded() {
        assert!(check_outbound_url("https://agent.example.com/a2a", false).is_ok());
        assert!(check_outbound_url("http://agent.example.com/a2a", false).is_err());
        assert!(check_outbound_url("https://127.0.0.1/a2a", false).is_err());
        assert!(check_outbound_url("https://10.0.0.1/a2a", false).is_err());
        assert!(check_outbound_url("https://169.254.169.254/", false).is_err());
        assert!(check_outbound_url("http://127.0.0.1:9000/a2a", true).is_ok());
        assert!(check_outbound_url("http://localhost:9000/", true).is_ok());
        assert!(check_outbound_url("http://[::1]:9000/", true).is_ok());
        assert!(check_outbound_url("http://10.0.0.1/", true).is_err());
        assert!(check_outbound_url("http://169.254.169.254/", true).is_err());
        assert!(check_outbound_url("ftp://x/", true).is_err());
    }

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
