//! What a host provides for outbound A2A calls (token randomness; the HTTP client is
//! the host's one [`Outbound`](handoff_core::outbound::Outbound)) and the URL policy
//! every call is checked against.

use std::time::Duration;

use handoff_core::outbound::OutboundError;

use crate::error::ReceiverError;
use handoff_auth::url_guard::check_jwks_url;

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
