//! Why a model call failed, and the stable code a run ends with.

use handoff_core::codes::{self, Code, ErrorCode};
use handoff_core::{AgentError, RunContext};

/// A failed model call. The `detail` (the provider's words) is for logs only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// 429 or a rate-limit error frame.
    #[error("model rate limited: {detail}")]
    RateLimited {
        /// From `retry-after-ms` / `retry-after` (seconds), when sent.
        retry_after_ms: Option<u64>,
        /// Provider detail.
        detail: String,
    },
    /// 5xx, overloaded, unreachable or timed out.
    #[error("model unavailable: {detail}")]
    Unavailable {
        /// Provider or transport detail.
        detail: String,
    },
    /// The provider refused the request (bad request, authentication, an error frame).
    #[error("model error ({status:?}): {detail}")]
    Rejected {
        /// HTTP status, when the refusal came as one.
        status: Option<u16>,
        /// Provider detail.
        detail: String,
    },
    /// The stream did not parse.
    #[error("malformed model stream: {detail}")]
    Malformed {
        /// What did not parse.
        detail: String,
    },
}

impl ModelError {
    /// From a non-2xx HTTP answer: its status, `retry-after-ms` or `retry-after` header
    /// and body.
    pub fn from_http(status: u16, retry_after: Option<&str>, body: &str) -> Self {
        let detail = format!("HTTP {status}: {}", truncate(body));
        match status {
            429 => ModelError::RateLimited {
                retry_after_ms: retry_after.and_then(parse_retry_after),
                detail,
            },
            408 | 500..=599 => ModelError::Unavailable { detail },
            _ => ModelError::Rejected {
                status: Some(status),
                detail,
            },
        }
    }

    /// The wait a provider asked for, from its `retry-after-ms` or `retry-after` header
    /// (`header` looks one up), in the form [`ModelError::from_http`] takes.
    pub fn retry_after(header: impl Fn(&str) -> Option<String>) -> Option<String> {
        header("retry-after-ms")
            .map(|ms| format!("{ms}ms"))
            .or_else(|| header("retry-after"))
    }

    /// From an error object inside a stream (`{"type": …, "message": …}` or OpenAI's
    /// `{"message", "type", "code"}`).
    pub(crate) fn from_frame(kind: &str, message: &str) -> Self {
        let detail = format!("{kind}: {}", truncate(message));
        match kind {
            "rate_limit_error" | "rate_limit_exceeded" | "tokens" | "requests" => {
                ModelError::RateLimited {
                    retry_after_ms: None,
                    detail,
                }
            }
            "overloaded_error" | "api_error" | "server_error" | "service_unavailable" => {
                ModelError::Unavailable { detail }
            }
            _ => ModelError::Rejected {
                status: None,
                detail,
            },
        }
    }

    /// What the client is told (the provider's words are not).
    pub fn public_message(&self) -> String {
        match self {
            ModelError::RateLimited {
                retry_after_ms: Some(ms),
                ..
            } => format!(
                "the model is rate limited; retry in {} s",
                ms.div_ceil(1000)
            ),
            ModelError::RateLimited { .. } => "the model is rate limited; retry shortly".into(),
            ModelError::Unavailable { .. } => "the model is unavailable; retry later".into(),
            ModelError::Rejected { .. } | ModelError::Malformed { .. } => {
                "the model could not answer this request".into()
            }
        }
    }

    /// Whether the same request may succeed later.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            ModelError::RateLimited { .. } | ModelError::Unavailable { .. }
        )
    }

    /// Ends the run with this error's code and public message (the detail is logged):
    /// `return Err(error.fail_run(ctx))`.
    pub fn fail_run(&self, ctx: &mut RunContext) -> AgentError {
        ctx.fail_with(self.code(), self.public_message(), self.retryable(), self)
    }
}

/// The code of the run's `RUN_ERROR`.
impl ErrorCode for ModelError {
    fn code(&self) -> Code {
        match self {
            ModelError::RateLimited { .. } => codes::MODEL_RATE_LIMITED,
            ModelError::Unavailable { .. } => codes::MODEL_UNAVAILABLE,
            ModelError::Rejected { .. } | ModelError::Malformed { .. } => codes::MODEL_ERROR,
        }
    }
}

/// `retry-after-ms: 1500` or `retry-after: 2` (seconds); HTTP dates are not honoured.
fn parse_retry_after(value: &str) -> Option<u64> {
    let value = value.trim();
    if let Some(ms) = value.strip_suffix("ms") {
        return ms.trim().parse().ok();
    }
    value
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| (s * 1000.0) as u64)
}

fn truncate(text: &str) -> &str {
    match text.char_indices().nth(500) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_statuses_map_to_stable_codes() {
        let limited = ModelError::from_http(429, Some("2"), "{\"error\":\"slow down\"}");
        assert_eq!(limited.code().name, "MODEL_RATE_LIMITED");
        assert!(limited.retryable());
        assert_eq!(
            limited.public_message(),
            "the model is rate limited; retry in 2 s"
        );
        assert!(!limited.public_message().contains("slow down"));
        assert_eq!(
            ModelError::from_http(503, None, "").code().name,
            "MODEL_UNAVAILABLE"
        );
        let auth = ModelError::from_http(401, None, "bad key sk-123");
        assert_eq!((auth.code().name, auth.retryable()), ("MODEL_ERROR", false));
        assert!(!auth.public_message().contains("sk-123"));
    }

    #[test]
    fn retry_after_takes_seconds_or_milliseconds() {
        assert_eq!(parse_retry_after("1.5"), Some(1500));
        assert_eq!(parse_retry_after("250ms"), Some(250));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2026 07:28:00 GMT"), None);
        let headers = |ms: Option<&str>, s: Option<&str>| {
            ModelError::retry_after(|name| match name {
                "retry-after-ms" => ms.map(str::to_owned),
                "retry-after" => s.map(str::to_owned),
                _ => None,
            })
        };
        assert_eq!(headers(Some("1500"), Some("9")).as_deref(), Some("1500ms"));
        assert_eq!(headers(None, Some("9")).as_deref(), Some("9"));
        assert_eq!(headers(None, None), None);
    }
}
