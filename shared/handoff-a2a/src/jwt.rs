//! A sender-signed JWT (`Authorization: Bearer <jwt>`): verified by handoff-auth's one
//! verifier ([`verify_jwt`]) under the subscription's policy (its key set and algorithms,
//! RS256 / ES256; `iat` within the window either way; `exp` / `nbf` when present, with the
//! clock skew; `iss` / `aud` when configured), then the checks only a push notification
//! has: `request_body_sha256` against the body, and the token's single-use key (its `jti`,
//! or the token itself when it has none) for the store to consume.

use handoff_auth::jwks::JwksSource;
use handoff_auth::{JwtPolicy, JwtRejection, verify_jwt};
use jsonwebtoken::Algorithm;
use serde::Deserialize;

use crate::config::{JwtAuth, ReceiverConfig};
use crate::digest::{ct_eq, python_compact_json, sha256_hex};
use crate::error::{AuthFailure, ReceiverError};

/// A JWT that verified.
#[derive(Debug, Clone)]
pub(crate) struct VerifiedJwt {
    /// Digest identifying the token for single use.
    pub(crate) single_use: String,
    /// Until when the single-use record must be kept.
    pub(crate) keep_until_ms: u64,
    /// The `taskId` claim, if any.
    pub(crate) task_id: Option<String>,
}

/// The claims only a push notification reads, from the verified claims. A claim of the
/// wrong type makes the token malformed.
#[derive(Deserialize)]
struct PushClaims {
    #[serde(default)]
    jti: Option<String>,
    #[serde(default)]
    iss: Option<String>,
    #[serde(default)]
    request_body_sha256: Option<String>,
    #[serde(default, rename = "taskId", alias = "task_id")]
    task_id: Option<String>,
}

fn deny(reason: AuthFailure) -> ReceiverError {
    ReceiverError::Unauthorized(reason)
}

pub(crate) fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3
}

pub(crate) async fn verify(
    token: &str,
    expect: &JwtAuth,
    jwks: &dyn JwksSource,
    body: &[u8],
    body_sha256: &str,
    now_ms: u64,
    config: &ReceiverConfig,
) -> Result<VerifiedJwt, ReceiverError> {
    let algorithms: Vec<Algorithm> = expect
        .algorithms
        .iter()
        .map(|alg| alg.to_jsonwebtoken())
        .collect();
    let policy = JwtPolicy {
        jwks_url: &expect.jwks_url,
        algorithms: &algorithms,
        issuer: expect.issuer.as_deref(),
        audience: expect.audience.as_deref(),
        require_exp: false,
        leeway_ms: config.clock_skew_ms,
        iat_window_ms: Some(config.iat_window_ms),
    };
    let claims =
        verify_jwt(token, &policy, jwks, now_ms)
            .await
            .map_err(|rejection| match rejection {
                JwtRejection::KeysUnavailable(e) => ReceiverError::KeysUnavailable(e.0),
                other => deny(failure(&other)),
            })?;
    let claims: PushClaims = serde_json::from_value(serde_json::Value::Object(claims))
        .map_err(|_| deny(AuthFailure::MalformedJwt))?;

    match &claims.request_body_sha256 {
        Some(claimed) => {
            let claimed = claimed.to_ascii_lowercase();
            let matches = ct_eq(&claimed, body_sha256)
                || python_compact_json(body)
                    .is_some_and(|compact| ct_eq(&claimed, &sha256_hex(compact.as_bytes())));
            if !matches {
                return Err(deny(AuthFailure::BodyHashMismatch));
            }
        }
        None if expect.require_body_hash => return Err(deny(AuthFailure::BodyHashMissing)),
        None => {}
    }
    let single_use = match &claims.jti {
        Some(jti) => {
            sha256_hex(format!("jti\n{}\n{jti}", claims.iss.as_deref().unwrap_or("")).as_bytes())
        }
        None => sha256_hex(format!("token\n{token}").as_bytes()),
    };
    Ok(VerifiedJwt {
        single_use,
        keep_until_ms: now_ms + 2 * config.iat_window_ms + config.clock_skew_ms,
        task_id: claims.task_id,
    })
}

/// The private reason a refused token is logged with (the sender sees a bare 401).
fn failure(rejection: &JwtRejection) -> AuthFailure {
    match rejection {
        JwtRejection::UnsupportedAlgorithm => AuthFailure::UnsupportedAlgorithm,
        JwtRejection::UnknownKey => AuthFailure::UnknownKey,
        JwtRejection::BadSignature => AuthFailure::BadSignature,
        JwtRejection::WrongIssuer | JwtRejection::WrongAudience | JwtRejection::MissingClaim(_) => {
            AuthFailure::ClaimMismatch
        }
        JwtRejection::StaleIat => AuthFailure::StaleIat,
        JwtRejection::Expired | JwtRejection::NotYetValid => AuthFailure::Expired,
        // Header or payload unreadable, a time claim that is not a number.
        _ => AuthFailure::MalformedJwt,
    }
}
