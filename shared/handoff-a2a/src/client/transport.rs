//! What a host provides for outbound A2A calls (token randomness; the HTTP client is
//! the host's one [`Outbound`](handoff_core::outbound::Outbound)). The URL policy every
//! call is checked against is [`handoff_auth::url_guard::check_outbound_url`].

use std::time::Duration;

use handoff_core::outbound::OutboundError;

use crate::error::ReceiverError;

/// Path of the agent card under an agent's base URL.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";
/// Largest accepted response body (agent card or JSON-RPC answer).
pub const MAX_RESPONSE: usize = 1024 * 1024;
/// One request's bound, the answer's body included.
pub const TIMEOUT: Duration = Duration::from_secs(10);

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

impl ClientError {
    /// A short, stable name of the failure's kind (a span's `error.type`; no URL or
    /// message in it).
    pub fn kind(&self) -> &'static str {
        match self {
            ClientError::Refused(_) => "refused",
            ClientError::Transport(_) => "transport",
            ClientError::Status { .. } => "http_status",
            ClientError::Protocol(_) => "protocol",
            ClientError::Rpc { .. } => "rpc_error",
            ClientError::Subscription(_) => "subscription",
        }
    }
}

/// As a `ctx.effect` error: a refused URL was never called, and a JSON-RPC error is the
/// agent's definite refusal; a network failure, a timeout or an unexpected answer may
/// have reached the agent, so those stay in doubt (re-driven with the same message id).
impl handoff_core::EffectFailure for ClientError {
    fn not_executed(&self) -> bool {
        matches!(self, ClientError::Refused(_) | ClientError::Rpc { .. })
    }
}

/// A refusal by the host's guard stays a refusal (never sent); every other failure is
/// the transport's, an over-long answer among them.
impl From<OutboundError> for ClientError {
    fn from(e: OutboundError) -> Self {
        match e {
            OutboundError::Refused(reason) => ClientError::Refused(reason),
            OutboundError::NotSent(why) | OutboundError::InDoubt(why) => {
                ClientError::Transport(why)
            }
            OutboundError::TooLarge(cap) => {
                ClientError::Transport(format!("response over {cap} bytes"))
            }
        }
    }
}

impl From<ReceiverError> for ClientError {
    fn from(e: ReceiverError) -> Self {
        ClientError::Subscription(e.to_string())
    }
}
