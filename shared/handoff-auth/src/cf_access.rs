//! `HANDOFF_AUTH=cf-access`: the JWT Cloudflare Access puts in front of every request.

use std::sync::Arc;

use crate::jwks::{CachedJwks, JwksSource};
use futures::future::BoxFuture;
use handoff_core::Clock;
use http::request::Parts;
use jsonwebtoken::Algorithm;

use crate::jwt::{SubjectClaim, Verifier};
use crate::{AuthError, Authenticator, CHALLENGE, Principal};

/// The header Access adds to proxied requests.
const ASSERTION_HEADER: &str = "cf-access-jwt-assertion";
/// The cookie browsers carry after an Access login.
const COOKIE: &str = "CF_Authorization";

/// What [`CfAccess`] accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CfAccessConfig {
    /// The team domain, e.g. `myteam.cloudflareaccess.com` (no scheme, no path).
    pub team_domain: String,
    /// The Access application's AUD tag.
    pub audience: String,
    /// The claim holding the tenant (default `tid`; Access tokens normally have none).
    pub tenant_claim: String,
    /// The claim holding the roles (default `roles`; Access tokens normally have none).
    pub roles_claim: String,
}

impl CfAccessConfig {
    /// Where Access publishes its signing keys.
    pub fn certs_url(&self) -> String {
        format!("https://{}/cdn-cgi/access/certs", self.team_domain)
    }

    /// The `iss` of Access tokens.
    pub fn issuer(&self) -> String {
        format!("https://{}", self.team_domain)
    }
}

/// Authenticates requests that passed Cloudflare Access (`HANDOFF_AUTH=cf-access`).
///
/// The token is the `Cf-Access-Jwt-Assertion` header, else the `CF_Authorization` cookie;
/// it must be an RS256 JWT from the team's key set, for the configured AUD tag. The subject
/// is the `email` claim (service tokens have none: then `sub`).
pub struct CfAccess {
    verifier: Verifier,
}

impl std::fmt::Debug for CfAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CfAccess")
            .field("issuer", &self.verifier.issuer)
            .field("audience", &self.verifier.audience)
            .finish_non_exhaustive()
    }
}

impl CfAccess {
    /// Verifies tokens per `config` with keys from `jwks` (wrapped in a [`CachedJwks`]; it
    /// is asked for [`CfAccessConfig::certs_url`]) and time from `clock`.
    pub fn new(
        config: CfAccessConfig,
        jwks: Arc<dyn JwksSource>,
        clock: Arc<dyn Clock>,
    ) -> CfAccess {
        CfAccess {
            verifier: Verifier {
                jwks_url: config.certs_url(),
                issuer: config.issuer(),
                audience: config.audience,
                tenant_claim: config.tenant_claim,
                roles_claim: config.roles_claim,
                algorithms: &[Algorithm::RS256],
                subject: SubjectClaim::EmailOrSub,
                jwks: CachedJwks::new(jwks),
                clock,
            },
        }
    }
}

/// The Access token of a request: the header, else the cookie.
fn assertion(parts: &Parts) -> Option<&str> {
    if let Some(value) = parts.headers.get(ASSERTION_HEADER) {
        return value.to_str().ok().map(str::trim).filter(|v| !v.is_empty());
    }
    parts
        .headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim())
        .filter(|v| !v.is_empty())
}

impl Authenticator for CfAccess {
    fn authenticate<'a>(
        &'a self,
        request: &'a Parts,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(async move {
            let token = assertion(request).ok_or_else(|| {
                AuthError::unauthenticated(
                    "this endpoint expects Cloudflare Access: no Cf-Access-Jwt-Assertion header or CF_Authorization cookie",
                )
            })?;
            self.verifier.verify(token).await
        })
    }

    fn challenge(&self) -> String {
        CHALLENGE.to_owned()
    }

    fn scheme(&self) -> &'static str {
        "cf-access"
    }
}
