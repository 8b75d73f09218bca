//! The one JWT verifier: every token Handoff accepts goes through [`verify_jwt`], the
//! inbound bearer tokens of [`Jwt`](crate::Jwt) and [`CfAccess`](crate::CfAccess) as well
//! as the sender-signed tokens of A2A push notifications (`handoff_a2a`). What differs
//! between them is a [`JwtPolicy`]; what a caller reads from the verified claims (a
//! principal, a body digest, a single-use key) is the caller's.
//!
//! Order of the checks: the header's `alg` against the policy (before any key is touched:
//! HS* would turn a public key into an HMAC secret), the key named by `kid` (or the only
//! one that fits) from the key set, refetched once when it is missing (the signer may have
//! rotated keys; [`CachedJwks`](crate::CachedJwks) rate-limits that), the signature, `iss`
//! and `aud`, then the times with the caller's clock: `iat` within a window either way,
//! `exp` and `nbf` with a leeway.

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use crate::jwks::{JwksError, JwksSource, select_key};

/// What a token must satisfy besides a valid signature by a key of `jwks_url`.
#[derive(Debug, Clone, Copy)]
pub struct JwtPolicy<'a> {
    /// Where the signer publishes its keys.
    pub jwks_url: &'a str,
    /// The accepted `alg`s (key sets are searched for RS256, ES256 and EdDSA keys only).
    pub algorithms: &'a [Algorithm],
    /// The required `iss`; `None`: not checked.
    pub issuer: Option<&'a str>,
    /// The required `aud` (one of them, when the token has several); `None`: not checked.
    pub audience: Option<&'a str>,
    /// Whether a token without `exp` is refused.
    pub require_exp: bool,
    /// Tolerance on `exp` and `nbf`, for clock skew between the signer and this host.
    pub leeway_ms: u64,
    /// How far `iat` may be from now, either way; `Some` also makes `iat` required.
    pub iat_window_ms: Option<u64>,
}

/// Why a token was refused. Its `Display` is the message [`Jwt`](crate::Jwt) sends with a
/// 401: general terms, never a claim's value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JwtRejection {
    /// The header names an algorithm the library does not know (`none` included) or is
    /// not JSON.
    #[error("unsupported algorithm or malformed token")]
    UnreadableHeader,
    /// Not a well-formed JWT (encoding, structure, a payload that is not a JSON object).
    #[error("malformed token")]
    Malformed,
    /// The `alg` is not one the policy accepts.
    #[error("unsupported algorithm")]
    UnsupportedAlgorithm,
    /// The key set could not be had; the caller should answer 503 so the sender retries.
    #[error("{0}")]
    KeysUnavailable(JwksError),
    /// No key of the set fits the token's `kid` and `alg`.
    #[error("unknown signing key")]
    UnknownKey,
    /// The signature does not verify.
    #[error("bad signature")]
    BadSignature,
    /// `iss` is not the policy's.
    #[error("wrong issuer")]
    WrongIssuer,
    /// `aud` is not (or does not contain) the policy's.
    #[error("wrong audience")]
    WrongAudience,
    /// A claim the policy requires is absent.
    #[error("the token has no {0} claim")]
    MissingClaim(String),
    /// A time claim (`iat`, `exp`, `nbf`) that is not a number.
    #[error("the {0} claim must be a number")]
    NotANumber(&'static str),
    /// `iat` is absent or further from now than the policy's window.
    #[error("the token's iat is missing or outside the accepted window")]
    StaleIat,
    /// `exp` has passed (beyond the leeway).
    #[error("token expired")]
    Expired,
    /// `nbf` has not come (beyond the leeway).
    #[error("token not yet valid")]
    NotYetValid,
}

/// Verifies `token` per `policy` with keys from `jwks`, at `now_ms` (the caller's clock),
/// and answers its claims.
pub async fn verify_jwt(
    token: &str,
    policy: &JwtPolicy<'_>,
    jwks: &dyn JwksSource,
    now_ms: u64,
) -> Result<Map<String, Value>, JwtRejection> {
    // An unknown `alg` (including `none`) already fails here: the library has no such variant.
    let header = jsonwebtoken::decode_header(token).map_err(|e| match e.kind() {
        ErrorKind::InvalidAlgorithmName | ErrorKind::Json(_) => JwtRejection::UnreadableHeader,
        _ => JwtRejection::Malformed,
    })?;
    // Checked before any key is touched: HS* would turn a public key into an HMAC secret.
    let alg = header.alg;
    if !policy.algorithms.contains(&alg) {
        return Err(JwtRejection::UnsupportedAlgorithm);
    }
    let kid = header.kid.as_deref();
    let keys = |refresh| jwks.key_set(policy.jwks_url, now_ms, refresh);
    let set = keys(false).await.map_err(JwtRejection::KeysUnavailable)?;
    let jwk = match select_key(&set, kid, alg) {
        Some(jwk) => jwk,
        None => {
            // The signer may have rotated keys; CachedJwks rate-limits this refetch.
            let set = keys(true).await.map_err(JwtRejection::KeysUnavailable)?;
            select_key(&set, kid, alg).ok_or(JwtRejection::UnknownKey)?
        }
    };
    let key = DecodingKey::from_jwk(&jwk).map_err(|_| JwtRejection::UnknownKey)?;
    crate::jwt_crypto::install();

    let mut validation = Validation::new(alg);
    // Time is checked below with the caller's clock, not the library's system clock.
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.required_spec_claims.clear();
    if let Some(issuer) = policy.issuer {
        validation.set_issuer(&[issuer]);
        validation.required_spec_claims.insert("iss".to_owned());
    }
    match policy.audience {
        Some(audience) => {
            validation.set_audience(&[audience]);
            validation.required_spec_claims.insert("aud".to_owned());
        }
        None => validation.validate_aud = false,
    }
    let claims = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
        .map_err(|e| classify(e.kind()))?
        .claims;
    check_times(&claims, policy, now_ms)?;
    Ok(claims)
}

fn check_times(
    claims: &Map<String, Value>,
    policy: &JwtPolicy<'_>,
    now_ms: u64,
) -> Result<(), JwtRejection> {
    let seconds = |ms: u64| ms as f64 / 1000.0;
    let (now, leeway) = (seconds(now_ms), seconds(policy.leeway_ms));
    let number = |name: &'static str| match claims.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_f64()
            .filter(|n| n.is_finite())
            .map(Some)
            .ok_or(JwtRejection::NotANumber(name)),
    };
    if let Some(window) = policy.iat_window_ms {
        let iat = number("iat")?.ok_or(JwtRejection::StaleIat)?;
        if (now - iat).abs() > seconds(window) {
            return Err(JwtRejection::StaleIat);
        }
    }
    match number("exp")? {
        Some(exp) if now > exp + leeway => return Err(JwtRejection::Expired),
        None if policy.require_exp => return Err(JwtRejection::MissingClaim("exp".to_owned())),
        _ => {}
    }
    if number("nbf")?.is_some_and(|nbf| nbf > now + leeway) {
        return Err(JwtRejection::NotYetValid);
    }
    Ok(())
}

fn classify(kind: &ErrorKind) -> JwtRejection {
    match kind {
        ErrorKind::InvalidSignature => JwtRejection::BadSignature,
        ErrorKind::InvalidIssuer => JwtRejection::WrongIssuer,
        ErrorKind::InvalidAudience => JwtRejection::WrongAudience,
        ErrorKind::MissingRequiredClaim(claim) => JwtRejection::MissingClaim(claim.clone()),
        ErrorKind::InvalidAlgorithm
        | ErrorKind::MissingAlgorithm
        | ErrorKind::UnsupportedAlgorithm => JwtRejection::UnsupportedAlgorithm,
        _ => JwtRejection::Malformed,
    }
}
