//! Authenticating one delivery against its subscription.
//!
//! Methods, each checked only when the subscription configures it:
//!
//! - **token**: `X-A2A-Notification-Token` or `A2A-Notification-Token` (the two
//!   spellings SDKs use; if both are sent they must agree);
//! - **authorization**: `Authorization: {scheme} {credentials}` (v1.0
//!   `AuthenticationInfo`; scheme case-insensitive);
//! - **jwt**: `Authorization: Bearer <jwt>` verified against the sender's keys.
//!
//! Policy: by default at least one configured method must verify and none that
//! was presented may fail (a wrong credential is never outweighed by a right
//! one); with `require_all`, every configured method must verify. Headers for
//! methods the subscription does not configure are ignored. Secrets are compared
//! as SHA-256 digests in constant time.

use http::{HeaderMap, HeaderName};

use crate::config::ReceiverConfig;
use crate::digest::secret_matches;
use crate::error::{AuthFailure, ReceiverError};
use crate::jwt::{self, VerifiedJwt};
use crate::records::PushConfigRecord;
use handoff_auth::jwks::JwksSource;

/// Header names SDKs use for the per-subscription token.
pub const TOKEN_HEADERS: [&str; 2] = ["x-a2a-notification-token", "a2a-notification-token"];

/// What verified.
#[derive(Debug, Default)]
pub(crate) struct Authenticated {
    pub(crate) jwt: Option<VerifiedJwt>,
}

#[derive(Debug, PartialEq, Eq)]
enum Check {
    Absent,
    Passed,
    Failed(AuthFailure),
}

/// The single value of a header; several values, or a value that is not
/// visible ASCII, count as a malformed (failed) credential.
fn single<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, ()> {
    let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| ())?;
    let mut values = headers.get_all(name).iter();
    match (values.next(), values.next()) {
        (None, _) => Ok(None),
        (Some(value), None) => value.to_str().map(|v| Some(v.trim())).map_err(|_| ()),
        (Some(_), Some(_)) => Err(()),
    }
}

fn check_token(record: &PushConfigRecord, headers: &HeaderMap) -> Check {
    let Some(expected) = &record.token_sha256 else {
        return Check::Absent;
    };
    let mut presented: Option<&str> = None;
    for name in TOKEN_HEADERS {
        match single(headers, name) {
            Err(()) => return Check::Failed(AuthFailure::BadToken),
            Ok(None) => {}
            Ok(Some(value)) => match presented {
                Some(other) if other != value => return Check::Failed(AuthFailure::BadToken),
                _ => presented = Some(value),
            },
        }
    }
    match presented {
        None => Check::Absent,
        Some(token) if secret_matches(token, expected) => Check::Passed,
        Some(_) => Check::Failed(AuthFailure::BadToken),
    }
}

/// Checks the `Authorization` header against the static credentials, then as a JWT.
async fn check_authorization(
    record: &PushConfigRecord,
    headers: &HeaderMap,
    body: &[u8],
    body_sha256: &str,
    now_ms: u64,
    jwks: &dyn JwksSource,
    config: &ReceiverConfig,
) -> Result<(Check, Check, Option<VerifiedJwt>), ReceiverError> {
    let configured = (record.authorization.is_some(), record.jwt.is_some());
    if configured == (false, false) {
        return Ok((Check::Absent, Check::Absent, None));
    }
    let header = match single(headers, "authorization") {
        Err(()) => {
            return Ok((
                Check::Failed(AuthFailure::BadAuthorization),
                Check::Absent,
                None,
            ));
        }
        Ok(None) => return Ok((Check::Absent, Check::Absent, None)),
        Ok(Some(header)) => header,
    };
    let (scheme, credentials) = match header.split_once([' ', '\t']) {
        Some((scheme, credentials)) => (scheme, credentials.trim()),
        None => (header, ""),
    };
    if let Some(expected) = &record.authorization
        && scheme.eq_ignore_ascii_case(&expected.scheme)
        && secret_matches(credentials, &expected.credentials_sha256)
    {
        return Ok((Check::Passed, Check::Absent, None));
    }
    if let Some(expect) = &record.jwt
        && scheme.eq_ignore_ascii_case("bearer")
        && jwt::looks_like_jwt(credentials)
    {
        return match jwt::verify(credentials, expect, jwks, body, body_sha256, now_ms, config).await
        {
            Ok(verified) => Ok((Check::Absent, Check::Passed, Some(verified))),
            Err(ReceiverError::Unauthorized(reason)) => {
                Ok((Check::Absent, Check::Failed(reason), None))
            }
            Err(other) => Err(other),
        };
    }
    let reason = if record.jwt.is_some() && record.authorization.is_none() {
        AuthFailure::MalformedJwt
    } else {
        AuthFailure::BadAuthorization
    };
    Ok((Check::Failed(reason), Check::Absent, None))
}

pub(crate) async fn authenticate(
    record: &PushConfigRecord,
    headers: &HeaderMap,
    body: &[u8],
    body_sha256: &str,
    now_ms: u64,
    jwks: &dyn JwksSource,
    config: &ReceiverConfig,
) -> Result<Authenticated, ReceiverError> {
    let token = check_token(record, headers);
    let (static_auth, jwt_auth, verified) =
        check_authorization(record, headers, body, body_sha256, now_ms, jwks, config).await?;
    let checks = [
        (record.token_sha256.is_some(), token),
        (record.authorization.is_some(), static_auth),
        (record.jwt.is_some(), jwt_auth),
    ];
    if let Some(reason) = checks.iter().find_map(|(_, c)| match c {
        Check::Failed(reason) => Some(*reason),
        _ => None,
    }) {
        return Err(ReceiverError::Unauthorized(reason));
    }
    let configured = checks.iter().filter(|(configured, _)| *configured);
    let passed = |c: &&(bool, Check)| c.1 == Check::Passed;
    let ok = if record.require_all {
        configured.clone().all(|c| passed(&c))
    } else {
        configured.clone().any(|c| passed(&c))
    };
    if !ok {
        return Err(ReceiverError::Unauthorized(AuthFailure::MissingCredentials));
    }
    Ok(Authenticated { jwt: verified })
}
