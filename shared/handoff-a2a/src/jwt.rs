//! Verifying a sender-signed JWT (`Authorization: Bearer <jwt>`).
//!
//! Signature with a key of the sender's JWKS (RS256 / ES256, `kid` lookup with
//! one forced refresh for rotated keys); `iat` within the window either way;
//! `exp` / `nbf` when present; `iss` / `aud` when configured;
//! `request_body_sha256` against the body; the token's single-use key (its
//! `jti`, or the token itself when it has none) for the store to consume.

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{DecodingKey, Validation};
use serde::Deserialize;

use crate::config::{JwtAlgorithm, JwtAuth, ReceiverConfig};
use crate::digest::{ct_eq, python_compact_json, sha256_hex};
use crate::error::{AuthFailure, ReceiverError};
use handoff_auth::jwks::{JwksSource, select_key};

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

#[derive(Deserialize)]
struct Claims {
    #[serde(default)]
    iat: Option<f64>,
    #[serde(default)]
    exp: Option<f64>,
    #[serde(default)]
    nbf: Option<f64>,
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
    let header = jsonwebtoken::decode_header(token).map_err(|_| deny(AuthFailure::MalformedJwt))?;
    let alg = JwtAlgorithm::from_jsonwebtoken(header.alg)
        .filter(|alg| expect.algorithms.contains(alg))
        .ok_or(deny(AuthFailure::UnsupportedAlgorithm))?;
    let kid = header.kid.as_deref();
    let keys = |refresh| jwks.key_set(&expect.jwks_url, now_ms, refresh);
    let set = keys(false)
        .await
        .map_err(|e| ReceiverError::KeysUnavailable(e.0))?;
    let jwk = match select_key(&set, kid, alg.to_jsonwebtoken()) {
        Some(jwk) => jwk,
        None => {
            let set = keys(true)
                .await
                .map_err(|e| ReceiverError::KeysUnavailable(e.0))?;
            select_key(&set, kid, alg.to_jsonwebtoken()).ok_or(deny(AuthFailure::UnknownKey))?
        }
    };
    let key = DecodingKey::from_jwk(&jwk).map_err(|_| deny(AuthFailure::UnknownKey))?;
    handoff_auth::jwt_crypto::install();

    let mut validation = Validation::new(alg.to_jsonwebtoken());
    // Time checks use the injected clock below, not the library's.
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.leeway = 0;
    validation.required_spec_claims.clear();
    if let Some(issuer) = &expect.issuer {
        validation.set_issuer(&[issuer]);
        validation.required_spec_claims.insert("iss".to_owned());
    }
    match &expect.audience {
        Some(audience) => {
            validation.set_audience(&[audience]);
            validation.required_spec_claims.insert("aud".to_owned());
        }
        None => validation.validate_aud = false,
    }
    let claims = jsonwebtoken::decode::<Claims>(token, &key, &validation)
        .map_err(|e| deny(classify(e.kind())))?
        .claims;

    check_times(&claims, now_ms, config)?;
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

fn check_times(claims: &Claims, now_ms: u64, config: &ReceiverConfig) -> Result<(), ReceiverError> {
    let now = now_ms as f64 / 1000.0;
    let window = config.iat_window_ms as f64 / 1000.0;
    let skew = config.clock_skew_ms as f64 / 1000.0;
    let iat = claims
        .iat
        .filter(|iat| iat.is_finite())
        .ok_or(deny(AuthFailure::StaleIat))?;
    if (now - iat).abs() > window {
        return Err(deny(AuthFailure::StaleIat));
    }
    if claims
        .exp
        .is_some_and(|exp| !exp.is_finite() || now > exp + skew)
        || claims
            .nbf
            .is_some_and(|nbf| !nbf.is_finite() || nbf > now + skew)
    {
        return Err(deny(AuthFailure::Expired));
    }
    Ok(())
}

fn classify(kind: &ErrorKind) -> AuthFailure {
    match kind {
        ErrorKind::InvalidSignature => AuthFailure::BadSignature,
        ErrorKind::InvalidAlgorithm | ErrorKind::MissingAlgorithm => {
            AuthFailure::UnsupportedAlgorithm
        }
        ErrorKind::InvalidIssuer
        | ErrorKind::InvalidAudience
        | ErrorKind::InvalidSubject
        | ErrorKind::MissingRequiredClaim(_) => AuthFailure::ClaimMismatch,
        _ => AuthFailure::MalformedJwt,
    }
}
