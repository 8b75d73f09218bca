//! The built-in [`Authenticator`]s chosen with `HANDOFF_AUTH`.
//!
//! | `HANDOFF_AUTH` | Authenticator | Credentials |
//! |---|---|---|
//! | `none` | [`NoAuth`] | none: every caller is `default/anonymous` (the dev server prints a warning); local only |
//! | `api-key` | [`ApiKeys`] | `Authorization: Bearer KEY`; `HANDOFF_API_KEYS=tenant/subject=KEY,tenant/subject+approver=sha256:HEX` (store digests, not keys; `+role` grants roles) |
//! | `jwt` | [`Jwt`] | `Authorization: Bearer <JWT>` (RS256, ES256, EdDSA) signed by a key of a JWKS: `HANDOFF_JWT_JWKS_URL`, `HANDOFF_JWT_ISSUER`, `HANDOFF_JWT_AUDIENCE`, `HANDOFF_JWT_TENANT_CLAIM`, `HANDOFF_JWT_ROLES_CLAIM` |
//! | `cf-access` | [`CfAccess`] | Workers behind Cloudflare Access: its `Cf-Access-Jwt-Assertion` header (or `CF_Authorization` cookie); `HANDOFF_CF_ACCESS_TEAM_DOMAIN`, `HANDOFF_CF_ACCESS_AUD` |
//! | `iam` | [`Iam`] | AWS SigV4, checked by a Lambda Function URL (`AuthType: AWS_IAM`): account = tenant, caller ARN = subject; `HANDOFF_IAM_ROLES=arn=role+role,...` |
//!
//! Unset, [`AuthConfig::from_lookup`] answers [`AuthConfig::Unset`] and the host decides:
//! deployed hosts refuse to start, the local dev server serves with `none`.
//!
//! **`api-key`**: `HANDOFF_API_KEYS` is a comma-separated list of
//! `tenant/subject[+role]...=KEY` entries; `KEY` may instead be `sha256:HEX`, the hex SHA-256
//! of the key, so the secret itself is not stored in the configuration. Keys must not contain
//! commas. Example: `acme/ci-bot=s3cr3t-key,acme/alice+approver+auditor=sha256:9f86…`.
//!
//! **`jwt`**: `HANDOFF_JWT_JWKS_URL` (https; `HANDOFF_JWT_ALLOW_INSECURE_JWKS=true` also allows
//! `http://` on a loopback host, for local tests), `HANDOFF_JWT_ISSUER`,
//! `HANDOFF_JWT_AUDIENCE`; RS256, ES256 and EdDSA only; `exp` and `sub` are required, `exp`
//! and `nbf` are checked with 60 s of leeway. The tenant is the claim named by
//! `HANDOFF_JWT_TENANT_CLAIM` (default `tid`; absent: `default`), the roles the string array
//! named by `HANDOFF_JWT_ROLES_CLAIM` (default `roles`; absent: none).
//!
//! **`cf-access`**: `HANDOFF_CF_ACCESS_TEAM_DOMAIN` (`myteam.cloudflareaccess.com`, with or
//! without `https://`) and `HANDOFF_CF_ACCESS_AUD` (the application's AUD tag). RS256 tokens
//! from `https://{team}/cdn-cgi/access/certs`, issuer `https://{team}`. The subject is the
//! `email` claim (service tokens have none: then `sub`); tenant and roles are read like
//! `jwt`'s (the same two variables), so Access tokens, which carry neither, get the
//! `default` tenant and no roles.
//!
//! **`iam`**: the Lambda host puts an [`IamCaller`] (from the Function URL's request context)
//! in the request extensions; the tenant is the caller's account id, the subject its ARN. An
//! assumed role is its role, `arn:aws:iam::ACCOUNT:role/NAME`: the session name is the
//! caller's choice, so it never decides ownership or roles.
//! `HANDOFF_IAM_ROLES` optionally grants roles: `arn=role1+role2,arn2=role3`.
//!
//! Key sets are host I/O: the host passes a [`JwksSource`] (e.g. [`HttpJwks`]
//! over its outbound client), which [`Jwt`] and [`CfAccess`] wrap in a [`CachedJwks`]
//! (cached, refetched on an unknown `kid` at most once a minute). Time comes from an injected
//! [`Clock`].
//!
//! Every JWT, these and the A2A receiver's sender-signed push tokens, is checked by one
//! verifier, [`verify_jwt`]: algorithm, key selection, signature, `iss` / `aud` and times per
//! a [`JwtPolicy`]; callers read what they need from the verified claims.
//!
//! ```
//! use std::sync::Arc;
//! use handoff_auth::StaticJwks;
//! use handoff_auth::AuthConfig;
//! use handoff_core::runtime::ManualClock;
//!
//! let env = |name: &str| match name {
//!     "HANDOFF_AUTH" => Some("api-key".to_owned()),
//!     "HANDOFF_API_KEYS" => Some("acme/ci=correct-horse-battery".to_owned()),
//!     _ => None,
//! };
//! let config = AuthConfig::from_lookup(env).expect("valid configuration");
//! assert_eq!(config.scheme(), Some("api-key"));
//! let auth = config
//!     .build(Arc::new(StaticJwks::new()), Arc::new(ManualClock::new(0)))
//!     .expect("configured");
//!
//! let (parts, ()) = http::Request::builder()
//!     .header("authorization", "Bearer correct-horse-battery")
//!     .body(())
//!     .unwrap()
//!     .into_parts();
//! let principal = futures::executor::block_on(auth.authenticate(&parts)).unwrap();
//! assert_eq!((principal.tenant.as_str(), principal.subject.as_str()), ("acme", "ci"));
//! ```

mod api_key;
mod authenticator;
mod cf_access;
mod config;
mod config_error;
mod http_jwks;
mod iam;
pub mod jwks;
mod jwt;
pub mod jwt_crypto;
#[cfg(not(target_arch = "wasm32"))]
mod push_keys;
mod push_signer;
mod url;
pub mod url_guard;
pub mod vars;
mod verify;

pub use api_key::ApiKeys;
pub use authenticator::{AuthError, Authenticator, NoAuth, Principal};
pub use cf_access::{CfAccess, CfAccessConfig};
pub use config::AuthConfig;
pub use config_error::AuthConfigError;
pub use handoff_core::Clock;
pub use http_jwks::HttpJwks;
pub use iam::{Iam, IamCaller};
pub use jwks::{CachedJwks, JwkSet, JwksError, JwksSource, StaticJwks};
pub use jwt::{Jwt, JwtConfig};
#[cfg(not(target_arch = "wasm32"))]
pub use push_keys::PushKeys;
pub use push_signer::PushSigner;
pub use verify::{JwtPolicy, JwtRejection, verify_jwt};

use handoff_core::principal::{DEFAULT_TENANT, MAX_ID_LEN};
use http::request::Parts;

/// The challenge every built-in answers a 401 with.
const CHALLENGE: &str = "Bearer realm=\"handoff\"";

/// The token of an `Authorization: Bearer <token>` header (scheme matched case-insensitively).
fn bearer_token(parts: &Parts) -> Option<&str> {
    let value = parts
        .headers
        .get(http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// A principal whose ids are safe to scope store partitions with: 1 to [`MAX_ID_LEN`]
/// characters, no control characters (they could forge another tenant's partition).
fn checked_principal(
    tenant: Option<&str>,
    subject: &str,
    roles: Vec<String>,
) -> Result<Principal, AuthError> {
    let tenant = tenant.unwrap_or(DEFAULT_TENANT);
    for (name, value) in [("tenant", tenant), ("subject", subject)] {
        if value.trim().is_empty() || value.len() > MAX_ID_LEN {
            return Err(AuthError::unauthenticated(format!(
                "the {name} must be 1 to {MAX_ID_LEN} characters"
            )));
        }
        if value.chars().any(char::is_control) {
            return Err(AuthError::unauthenticated(format!(
                "the {name} must not contain control characters"
            )));
        }
    }
    Ok(Principal::new(tenant, subject).with_roles(roles))
}
