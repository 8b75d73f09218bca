//! Rejections answered before any stream byte: the single mapping to HTTP.

use axum::Json;
use axum::response::{IntoResponse, Response};
use handoff_core::CoreError;
use handoff_core::codes::{Code, ErrorCode};
use http::{HeaderValue, StatusCode, header};
use serde_json::json;

/// A request answered with a JSON error body `{"code","message"}`.
///
/// Built only from a registered [`Code`] (which also sets the status), so no answer
/// carries a code the registry does not list.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    code: Code,
    /// Human-readable, no internals.
    message: String,
    /// `Retry-After`, in milliseconds.
    retry_after_ms: Option<u64>,
    /// `WWW-Authenticate` challenge (401 only).
    www_authenticate: Option<String>,
    /// `RateLimit-Policy` and `RateLimit` (429 `RATE_LIMITED` only).
    rate_limit: Option<Box<RateLimitHeaders>>,
}

impl ApiError {
    /// A rejection with a registered code (its status is the code's).
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            retry_after_ms: None,
            www_authenticate: None,
            rate_limit: None,
        }
    }

    /// With a `Retry-After` of `ms` (sent in whole seconds, at least 1).
    pub fn with_retry_after_ms(mut self, ms: u64) -> Self {
        self.retry_after_ms = Some(ms);
        self
    }

    /// With a `WWW-Authenticate` challenge.
    pub fn with_www_authenticate(mut self, challenge: impl Into<String>) -> Self {
        self.www_authenticate = Some(challenge.into());
        self
    }

    /// The HTTP status (the code's).
    pub fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.code.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The message sent.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `Retry-After` sent, in milliseconds.
    pub fn retry_after_ms(&self) -> Option<u64> {
        self.retry_after_ms
    }
}

impl ErrorCode for ApiError {
    fn code(&self) -> Code {
        self.code
    }
}

impl From<CoreError> for ApiError {
    fn from(err: CoreError) -> Self {
        let retry_after_ms = match &err {
            CoreError::ThreadBusy { retry_after_ms, .. }
            | CoreError::RateLimited { retry_after_ms, .. }
            | CoreError::BudgetExceeded { retry_after_ms } => Some(*retry_after_ms),
            e if e.retryable() => Some(1_000),
            _ => None,
        };
        let code = err.code();
        if code.status >= 500 {
            tracing::error!(code = code.name, error = %err, "request failed");
        }
        let rate_limit = match &err {
            CoreError::RateLimited {
                quota,
                remaining,
                reset_ms,
                ..
            } => Some(Box::new(RateLimitHeaders {
                policy: format!("\"runs\";q={};w={}", quota.count, quota.window_secs()),
                state: format!("\"runs\";r={remaining};t={}", reset_ms.div_ceil(1000)),
            })),
            _ => None,
        };
        ApiError {
            code,
            message: err.public_message(),
            retry_after_ms,
            www_authenticate: None,
            rate_limit,
        }
    }
}

/// The IETF draft's structured fields (`draft-ietf-httpapi-ratelimit-headers`) for a
/// refusal by the run rate limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RateLimitHeaders {
    /// `RateLimit-Policy`: `"runs";q=COUNT;w=SECONDS`.
    pub policy: String,
    /// `RateLimit`: `"runs";r=REMAINING;t=SECONDS` (until the bucket is full).
    pub state: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"code": self.code.name, "message": self.message});
        let mut response = (self.status(), Json(body)).into_response();
        response
            .extensions_mut()
            .insert(crate::request_log::ErrorCode(self.code.name));
        if let Some(ms) = self.retry_after_ms {
            let secs = ms.div_ceil(1000).max(1);
            if let Ok(value) = HeaderValue::from_str(&secs.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
        }
        if let Some(limit) = self.rate_limit.map(|l| *l) {
            for (name, value) in [
                ("ratelimit-policy", limit.policy),
                ("ratelimit", limit.state),
            ] {
                if let Ok(value) = HeaderValue::from_str(&value) {
                    response.headers_mut().insert(name, value);
                }
            }
        }
        if let Some(value) = self
            .www_authenticate
            .and_then(|c| HeaderValue::from_str(&c).ok())
        {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}
