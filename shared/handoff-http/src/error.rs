//! Rejections answered before any stream byte: the single mapping to HTTP.

use axum::Json;
use axum::response::{IntoResponse, Response};
use handoff_core::CoreError;
use handoff_core::codes::Code;
use http::{HeaderValue, StatusCode, header};
use serde_json::json;

/// A request answered with a JSON error body `{"code","message"}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Stable code (the same vocabulary as `RUN_ERROR.code`).
    pub code: &'static str,
    /// Human-readable message, no internals.
    pub message: String,
    /// `Retry-After`, in milliseconds.
    pub retry_after_ms: Option<u64>,
    /// `WWW-Authenticate` challenge (401 only).
    pub www_authenticate: Option<String>,
    /// `RateLimit-Policy` and `RateLimit` (429 `RATE_LIMITED` only).
    pub rate_limit: Option<Box<RateLimitHeaders>>,
}

impl ApiError {
    /// A rejection with a registered code (its status is the code's).
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::from_u16(code.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            code: code.name,
            message: message.into(),
            retry_after_ms: None,
            www_authenticate: None,
            rate_limit: None,
        }
    }
}

impl From<CoreError> for ApiError {
    fn from(err: CoreError) -> Self {
        let status =
            StatusCode::from_u16(err.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let retry_after_ms = match &err {
            CoreError::ThreadBusy { retry_after_ms, .. }
            | CoreError::RateLimited { retry_after_ms, .. }
            | CoreError::BudgetExceeded { retry_after_ms } => Some(*retry_after_ms),
            e if e.retryable() => Some(1_000),
            _ => None,
        };
        if status.is_server_error() {
            tracing::error!(code = err.code(), error = %err, "request failed");
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
            status,
            code: err.code(),
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
pub struct RateLimitHeaders {
    /// `RateLimit-Policy`: `"runs";q=COUNT;w=SECONDS`.
    pub policy: String,
    /// `RateLimit`: `"runs";r=REMAINING;t=SECONDS` (until the bucket is full).
    pub state: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"code": self.code, "message": self.message});
        let mut response = (self.status, Json(body)).into_response();
        response
            .extensions_mut()
            .insert(crate::request_log::ErrorCode(self.code));
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
