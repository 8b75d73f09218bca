//! The receiver's one error type and its single mapping to codes and HTTP statuses.

use handoff_core::StoreError;
use handoff_core::codes::{self, Code, ErrorCode};

/// Why a request was not authenticated. Never sent to the caller (the answer
/// is a bare 401 whatever the reason); kept for logs and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthFailure {
    /// No live subscription has this id (never created, expired, revoked, malformed id).
    UnknownConfig,
    /// None of the configured credentials was presented.
    MissingCredentials,
    /// A notification token header does not match (or its two spellings disagree).
    BadToken,
    /// The `Authorization` header does not match the expected scheme and credentials.
    BadAuthorization,
    /// The bearer token is not a well-formed JWT.
    MalformedJwt,
    /// The JWT's `alg` is not one the subscription allows.
    UnsupportedAlgorithm,
    /// No key of the sender's key set fits the JWT's `kid` and `alg`.
    UnknownKey,
    /// The JWT's signature does not verify.
    BadSignature,
    /// `iss` or `aud` is missing or not the expected one.
    ClaimMismatch,
    /// `iat` is missing or more than the allowed window away from now.
    StaleIat,
    /// `exp` has passed or `nbf` has not come.
    Expired,
    /// The JWT (its `jti`, or the token itself) was already used for another body.
    Replayed,
    /// The `request_body_sha256` claim does not match the body.
    BodyHashMismatch,
    /// The subscription requires a `request_body_sha256` claim and the JWT has none.
    BodyHashMissing,
}

/// Everything the receiver can answer other than an acknowledgement.
///
/// Its [`ErrorCode`] implementation is the only mapping to HTTP. Unknown
/// subscriptions and every credential failure are the same bare 401, so a
/// caller learns nothing about which ids exist or which check failed; 403,
/// 400 and 413 are only reachable after authentication (413 excepted: the
/// size is checked first and says nothing but the limit). Bad input never
/// yields a 5xx.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReceiverError {
    /// 401: unknown subscription or bad credentials; the reason stays private.
    #[error("unauthorized")]
    Unauthorized(AuthFailure),
    /// 403: authenticated, but the notification is about a task this subscription does not watch.
    #[error("this subscription does not accept notifications for that task")]
    TaskMismatch,
    /// 400: the authenticated body is not a readable A2A stream response.
    #[error("invalid notification: {0}")]
    InvalidNotification(String),
    /// 400: the ownership challenge lacks a usable `validationToken`.
    #[error("invalid challenge: {0}")]
    InvalidChallenge(String),
    /// 413: the body is over the limit (or the task it grows would not fit the store).
    #[error("the body exceeds {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// 400 (API misuse, not HTTP): a subscription that cannot be registered.
    #[error("invalid subscription: {0}")]
    InvalidSubscription(String),
    /// 409 (API misuse, not HTTP): the subscription is already bound to another task.
    #[error("the subscription is bound to another task")]
    AlreadyBound,
    /// 503: the sender's key set could not be fetched; the sender should retry.
    #[error("signing keys unavailable")]
    KeysUnavailable(String),
    /// 503: storage is unavailable or contended; the sender should retry.
    #[error("storage is temporarily unavailable")]
    Unavailable(String),
    /// 500: storage failed or holds an unreadable record.
    #[error("storage failure")]
    Store(String),
}

impl ErrorCode for ReceiverError {
    fn code(&self) -> Code {
        match self {
            ReceiverError::Unauthorized(_) => codes::UNAUTHORIZED,
            ReceiverError::TaskMismatch => codes::TASK_MISMATCH,
            ReceiverError::InvalidNotification(_) => codes::INVALID_NOTIFICATION,
            ReceiverError::InvalidChallenge(_) => codes::INVALID_CHALLENGE,
            ReceiverError::TooLarge { .. } => codes::BODY_TOO_LARGE,
            ReceiverError::InvalidSubscription(_) => codes::INVALID_SUBSCRIPTION,
            ReceiverError::AlreadyBound => codes::SUBSCRIPTION_BOUND,
            ReceiverError::KeysUnavailable(_) => codes::KEYS_UNAVAILABLE,
            ReceiverError::Unavailable(_) => codes::STORE_UNAVAILABLE,
            ReceiverError::Store(_) => codes::STORE_ERROR,
        }
    }
}

impl ReceiverError {
    /// Whether the sender should retry the same request later.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            ReceiverError::KeysUnavailable(_) | ReceiverError::Unavailable(_)
        )
    }

    /// The message safe to send (the `Display` text; internals never appear in it).
    pub fn public_message(&self) -> String {
        self.to_string()
    }

    /// The private reason of a 401, for logs and tests.
    pub fn auth_failure(&self) -> Option<AuthFailure> {
        match self {
            ReceiverError::Unauthorized(reason) => Some(*reason),
            _ => None,
        }
    }
}

impl From<StoreError> for ReceiverError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Unavailable(detail) => ReceiverError::Unavailable(detail),
            StoreError::ConditionFailed { .. } => {
                ReceiverError::Unavailable("write contention".to_owned())
            }
            other => ReceiverError::Store(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_401_reads_the_same() {
        let a = ReceiverError::Unauthorized(AuthFailure::UnknownConfig);
        let b = ReceiverError::Unauthorized(AuthFailure::BadSignature);
        assert_eq!(
            (a.http_status(), a.code(), a.public_message()),
            (b.http_status(), b.code(), b.public_message())
        );
        assert_eq!(a.public_message(), "unauthorized");
        assert_eq!(a.auth_failure(), Some(AuthFailure::UnknownConfig));
    }

    #[test]
    fn internals_stay_out_of_messages() {
        let err = ReceiverError::Store("dynamodb said: secret table name".into());
        assert_eq!(err.public_message(), "storage failure");
        let err = ReceiverError::KeysUnavailable("https://internal/jwks: refused".into());
        assert!(!err.public_message().contains("internal"));
        assert!(err.retryable());
    }
}
