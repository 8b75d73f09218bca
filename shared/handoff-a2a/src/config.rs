//! Receiver tunables and what a subscription expects from the sender.

use a2a_types::AuthenticationInfo;
use serde::{Deserialize, Serialize};

/// Tunables of the receiver.
#[derive(Debug, Clone)]
pub struct ReceiverConfig {
    /// Largest accepted body (default 1 MiB); larger is 413.
    pub body_limit: usize,
    /// How long a delivered body is remembered for deduplication (default 24 h).
    pub dedupe_ttl_ms: u64,
    /// How long task snapshots and wake records live after their last update (default 30 days, like threads).
    pub snapshot_ttl_ms: u64,
    /// Lifetime of a subscription registered without one (default 7 days).
    pub default_subscription_ttl_ms: u64,
    /// How far a JWT's `iat` may be from now, either way (default 5 min).
    pub iat_window_ms: u64,
    /// Clock skew tolerated on `exp` and `nbf` (default 60 s).
    pub clock_skew_ms: u64,
    /// Read-merge-commit attempts under write contention before answering 503 (default 8).
    pub max_attempts: u32,
    /// Accept `http://` and loopback / private-address key-set URLs (development only; default false).
    pub allow_insecure_jwks_url: bool,
}

impl Default for ReceiverConfig {
    fn default() -> Self {
        const MINUTE: u64 = 60 * 1000;
        const DAY: u64 = 24 * 60 * MINUTE;
        ReceiverConfig {
            body_limit: 1024 * 1024,
            dedupe_ttl_ms: DAY,
            snapshot_ttl_ms: 30 * DAY,
            default_subscription_ttl_ms: 7 * DAY,
            iat_window_ms: 5 * MINUTE,
            clock_skew_ms: MINUTE,
            max_attempts: 8,
            allow_insecure_jwks_url: false,
        }
    }
}

impl ReceiverConfig {
    /// Reads `HANDOFF_A2A_BODY_LIMIT`, `HANDOFF_A2A_DEDUPE_TTL_SECS` and
    /// `HANDOFF_A2A_ALLOW_INSECURE_JWKS` from a lookup (hosts pass their environment).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let defaults = ReceiverConfig::default();
        ReceiverConfig {
            body_limit: lookup("HANDOFF_A2A_BODY_LIMIT")
                .and_then(|v| v.parse().ok())
                .unwrap_or(defaults.body_limit),
            dedupe_ttl_ms: lookup("HANDOFF_A2A_DEDUPE_TTL_SECS")
                .and_then(|v| v.parse::<u64>().ok())
                .map_or(defaults.dedupe_ttl_ms, |s| s.saturating_mul(1000)),
            allow_insecure_jwks_url: lookup("HANDOFF_A2A_ALLOW_INSECURE_JWKS")
                .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true")),
            ..defaults
        }
    }
}

/// A JWS algorithm the receiver verifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum JwtAlgorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RS256,
    /// ECDSA on P-256 with SHA-256.
    ES256,
}

impl JwtAlgorithm {
    pub(crate) fn to_jsonwebtoken(self) -> jsonwebtoken::Algorithm {
        match self {
            JwtAlgorithm::RS256 => jsonwebtoken::Algorithm::RS256,
            JwtAlgorithm::ES256 => jsonwebtoken::Algorithm::ES256,
        }
    }
}

fn both_algorithms() -> Vec<JwtAlgorithm> {
    vec![JwtAlgorithm::RS256, JwtAlgorithm::ES256]
}

fn yes() -> bool {
    true
}

/// A sender that signs each notification as a JWT with keys it publishes at a JWKS URL
/// (`Authorization: Bearer <jwt>`; the A2A topic docs' asymmetric-key flow).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JwtAuth {
    /// Where the sender publishes its keys (https; checked at registration).
    pub jwks_url: String,
    /// Accepted `alg`s (default RS256 and ES256).
    #[serde(default = "both_algorithms")]
    pub algorithms: Vec<JwtAlgorithm>,
    /// Required `iss`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// Required `aud` (one of), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    /// Reject JWTs without a `request_body_sha256` claim (default true: without
    /// it a captured JWT could carry any body within its `iat` window).
    #[serde(default = "yes")]
    pub require_body_hash: bool,
}

impl JwtAuth {
    /// Key set at `jwks_url`, both algorithms, body hash required.
    pub fn new(jwks_url: impl Into<String>) -> Self {
        JwtAuth {
            jwks_url: jwks_url.into(),
            algorithms: both_algorithms(),
            issuer: None,
            audience: None,
            require_body_hash: true,
        }
    }
}

/// How the sender must authenticate. At least one method; secrets are given in
/// clear here and stored only as SHA-256 digests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpectedAuth {
    /// Per-subscription token the sender echoes in `X-A2A-Notification-Token`
    /// or `A2A-Notification-Token` (at least 16 characters).
    pub token: Option<String>,
    /// `Authorization: {scheme} {credentials}` (v1.0 `AuthenticationInfo`; credentials at least 16 characters).
    pub authorization: Option<AuthenticationInfo>,
    /// A JWT signed with the sender's published keys.
    pub jwt: Option<JwtAuth>,
    /// Require every configured method (default: any one that verifies, and
    /// none presented that fails). Cannot combine `authorization` and `jwt`,
    /// which share the `Authorization` header.
    pub require_all: bool,
}

/// What [`crate::Receiver::register`] takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// The thread that waits on the task (its store partition keeps the snapshot).
    pub thread_id: String,
    /// The task, when known; else the first authenticated notification binds it.
    pub task_id: Option<String>,
    /// Public base URL of this host (`https://agents.example.com`); the webhook is
    /// `{base}/a2a/push/{configId}`.
    pub callback_base_url: String,
    /// Expected credentials.
    pub auth: ExpectedAuth,
    /// Lifetime; [`ReceiverConfig::default_subscription_ttl_ms`] when `None`.
    pub ttl_ms: Option<u64>,
}
