//! `HANDOFF_AUTH=jwt`: bearer JWTs signed by a key of a JWKS; also the verifier behind
//! [`CfAccess`](crate::CfAccess).

use std::sync::Arc;

use crate::jwks::{CachedJwks, JwksSource};
use crate::verify::{JwtPolicy, JwtRejection, verify_jwt};
use futures::future::BoxFuture;
use handoff_core::Clock;
use http::request::Parts;
use jsonwebtoken::Algorithm;
use serde_json::{Map, Value};

use crate::{AuthError, Authenticator, CHALLENGE, Principal, bearer_token, checked_principal};

/// Leeway on `exp` and `nbf`, for clock skew between the issuer and this host.
const LEEWAY_MS: u64 = 60_000;

/// What [`Jwt`] accepts (read from the `HANDOFF_JWT_*` variables by
/// [`AuthConfig::from_lookup`](crate::AuthConfig::from_lookup)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JwtConfig {
    /// Where the signing keys are published (checked: https, or loopback http with
    /// `allow_insecure_jwks`).
    pub jwks_url: String,
    /// The required `iss`.
    pub issuer: String,
    /// The required `aud` (one of them, when the token has several).
    pub audience: String,
    /// The claim holding the tenant (default `tid`).
    pub tenant_claim: String,
    /// The claim holding the roles, an array of strings (default `roles`).
    pub roles_claim: String,
    /// Whether `jwks_url` may be `http` on a loopback host (local tests only).
    pub allow_insecure_jwks: bool,
}

/// Which claim names the caller.
#[derive(Debug, Clone, Copy)]
pub(crate) enum SubjectClaim {
    /// `sub`.
    Sub,
    /// `email`, else `sub` (Cloudflare Access service tokens carry no email).
    EmailOrSub,
}

/// Verifies a token with [`verify_jwt`] and turns its claims into a [`Principal`].
pub(crate) struct Verifier {
    pub(crate) jwks_url: String,
    pub(crate) issuer: String,
    pub(crate) audience: String,
    pub(crate) tenant_claim: String,
    pub(crate) roles_claim: String,
    pub(crate) algorithms: &'static [Algorithm],
    pub(crate) subject: SubjectClaim,
    pub(crate) jwks: CachedJwks<Arc<dyn JwksSource>>,
    pub(crate) clock: Arc<dyn Clock>,
}

fn deny(message: &str) -> AuthError {
    AuthError::unauthenticated(message)
}

impl Verifier {
    pub(crate) async fn verify(&self, token: &str) -> Result<Principal, AuthError> {
        let policy = JwtPolicy {
            jwks_url: &self.jwks_url,
            algorithms: self.algorithms,
            issuer: Some(&self.issuer),
            audience: Some(&self.audience),
            require_exp: true,
            leeway_ms: LEEWAY_MS,
            iat_window_ms: None,
        };
        let claims = verify_jwt(token, &policy, &self.jwks, self.clock.now_ms())
            .await
            .map_err(|rejection| match rejection {
                JwtRejection::KeysUnavailable(e) => AuthError::Unavailable(e.0),
                other => AuthError::unauthenticated(other.to_string()),
            })?;
        self.principal(&claims)
    }

    fn principal(&self, claims: &Map<String, Value>) -> Result<Principal, AuthError> {
        let sub = string_claim(claims, "sub")?;
        let subject = match self.subject {
            SubjectClaim::Sub => sub,
            SubjectClaim::EmailOrSub => string_claim(claims, "email")?.or(sub),
        }
        .ok_or_else(|| deny("the token has no sub claim"))?;
        let tenant = string_claim(claims, &self.tenant_claim)?;
        let roles = match claims.get(&self.roles_claim) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| deny("the roles claim must be an array of strings"))?,
            Some(_) => return Err(deny("the roles claim must be an array of strings")),
        };
        checked_principal(tenant, subject, roles)
    }
}

/// A string claim; absent or null is `None`, any other type an error.
fn string_claim<'c>(
    claims: &'c Map<String, Value>,
    name: &str,
) -> Result<Option<&'c str>, AuthError> {
    match claims.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(AuthError::unauthenticated(format!(
            "the {name} claim must be a string"
        ))),
    }
}

/// Authenticates `Authorization: Bearer <JWT>` (`HANDOFF_AUTH=jwt`).
pub struct Jwt {
    verifier: Verifier,
}

impl std::fmt::Debug for Jwt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jwt")
            .field("jwks_url", &self.verifier.jwks_url)
            .field("issuer", &self.verifier.issuer)
            .field("audience", &self.verifier.audience)
            .finish_non_exhaustive()
    }
}

impl Jwt {
    /// Verifies tokens per `config` with keys from `jwks` (wrapped in a [`CachedJwks`]; pass
    /// the uncached source) and time from `clock`.
    pub fn new(config: JwtConfig, jwks: Arc<dyn JwksSource>, clock: Arc<dyn Clock>) -> Jwt {
        Jwt {
            verifier: Verifier {
                jwks_url: config.jwks_url,
                issuer: config.issuer,
                audience: config.audience,
                tenant_claim: config.tenant_claim,
                roles_claim: config.roles_claim,
                algorithms: &[Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA],
                subject: SubjectClaim::Sub,
                jwks: CachedJwks::new(jwks),
                clock,
            },
        }
    }
}

impl Authenticator for Jwt {
    fn authenticate<'a>(
        &'a self,
        request: &'a Parts,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(async move {
            let token = bearer_token(request).ok_or_else(|| {
                deny("this endpoint expects a bearer token: Authorization: Bearer <JWT>")
            })?;
            self.verifier.verify(token).await
        })
    }

    fn challenge(&self) -> String {
        CHALLENGE.to_owned()
    }

    fn scheme(&self) -> &'static str {
        "jwt"
    }

    fn authorization_servers(&self) -> Vec<String> {
        vec![self.verifier.issuer.clone()]
    }
}
