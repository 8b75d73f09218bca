//! `HANDOFF_AUTH` and its companion variables.

use std::sync::Arc;

use crate::config_error::AuthConfigError;
use crate::jwks::JwksSource;
use crate::{NoAuth, vars};
use handoff_core::Clock;

use crate::url::check_key_set_url;
use crate::{ApiKeys, Authenticator, CfAccess, CfAccessConfig, Iam, Jwt, JwtConfig};

/// The authentication a host serves with, from `HANDOFF_AUTH`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AuthConfig {
    /// `HANDOFF_AUTH` is unset: the host decides (deployed hosts refuse to start, the
    /// local dev server uses `none`).
    Unset,
    /// `none`: everyone is `default/anonymous`.
    None,
    /// `api-key`.
    ApiKey(ApiKeys),
    /// `jwt`.
    Jwt(JwtConfig),
    /// `iam`, with the roles of `HANDOFF_IAM_ROLES`.
    Iam(Iam),
    /// `cf-access`.
    CfAccess(CfAccessConfig),
}

impl AuthConfig {
    /// Reads the configuration through `lookup` (e.g. `|name| std::env::var(name).ok()`, or
    /// a Workers binding lookup). Empty values count as unset.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<AuthConfig, AuthConfigError> {
        let get = |var: &str| {
            lookup(var)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let need = |mode: &'static str, var: &'static str| {
            get(var).ok_or(AuthConfigError::Missing { mode, var })
        };
        let Some(mode) = get(vars::AUTH) else {
            return Ok(AuthConfig::Unset);
        };
        let tenant_claim = get(vars::JWT_TENANT_CLAIM).unwrap_or_else(|| "tid".to_owned());
        let roles_claim = get(vars::JWT_ROLES_CLAIM).unwrap_or_else(|| "roles".to_owned());
        match mode.as_str() {
            "none" => Ok(AuthConfig::None),
            "api-key" => ApiKeys::parse(&need("api-key", vars::API_KEYS)?).map(AuthConfig::ApiKey),
            "iam" => match get(vars::IAM_ROLES) {
                Some(spec) => Iam::parse_roles(&spec).map(AuthConfig::Iam),
                None => Ok(AuthConfig::Iam(Iam::new())),
            },
            "jwt" => {
                let jwks_url = need("jwt", vars::JWT_JWKS_URL)?;
                let issuer = need("jwt", vars::JWT_ISSUER)?;
                let audience = need("jwt", vars::JWT_AUDIENCE)?;
                let allow_insecure_jwks = match get(vars::JWT_ALLOW_INSECURE_JWKS).as_deref() {
                    None | Some("false") => false,
                    Some("true") => true,
                    Some(_) => {
                        return Err(AuthConfigError::Invalid {
                            var: vars::JWT_ALLOW_INSECURE_JWKS,
                            reason: "must be true or false".to_owned(),
                        });
                    }
                };
                check_key_set_url(&jwks_url, allow_insecure_jwks).map_err(|reason| {
                    AuthConfigError::Invalid {
                        var: vars::JWT_JWKS_URL,
                        reason,
                    }
                })?;
                Ok(AuthConfig::Jwt(JwtConfig {
                    jwks_url,
                    issuer,
                    audience,
                    tenant_claim,
                    roles_claim,
                    allow_insecure_jwks,
                }))
            }
            "cf-access" => {
                let domain = need("cf-access", vars::CF_ACCESS_TEAM_DOMAIN)?;
                let audience = need("cf-access", vars::CF_ACCESS_AUD)?;
                Ok(AuthConfig::CfAccess(CfAccessConfig {
                    team_domain: team_domain(&domain)?,
                    audience,
                    tenant_claim,
                    roles_claim,
                }))
            }
            _ => Err(AuthConfigError::UnknownMode { value: mode }),
        }
    }

    /// [`AuthConfig::from_lookup`] over the process environment (natively; on Workers, pass
    /// the bindings to `from_lookup`).
    pub fn from_env() -> Result<AuthConfig, AuthConfigError> {
        AuthConfig::from_lookup(|name| std::env::var(name).ok())
    }

    /// The `HANDOFF_AUTH` value, `None` when unset.
    pub fn scheme(&self) -> Option<&'static str> {
        match self {
            AuthConfig::Unset => None,
            AuthConfig::None => Some("none"),
            AuthConfig::ApiKey(_) => Some("api-key"),
            AuthConfig::Jwt(_) => Some("jwt"),
            AuthConfig::Iam(_) => Some("iam"),
            AuthConfig::CfAccess(_) => Some("cf-access"),
        }
    }

    /// The key-set URL the host's HTTP client will be asked for (`jwt`, `cf-access`).
    pub fn jwks_url(&self) -> Option<String> {
        match self {
            AuthConfig::Jwt(config) => Some(config.jwks_url.clone()),
            AuthConfig::CfAccess(config) => Some(config.certs_url()),
            _ => None,
        }
    }

    /// Whether `jwt` mode allows an `http` key-set URL on a loopback host, so the native
    /// host can let its HTTP client reach loopback for that URL.
    pub fn allows_insecure_jwks(&self) -> bool {
        matches!(self, AuthConfig::Jwt(config) if config.allow_insecure_jwks)
    }

    /// The authenticator, `None` for [`AuthConfig::Unset`] (the host decides). `jwks`
    /// fetches key sets (host I/O; it is cached here) and is only used by `jwt` and
    /// `cf-access`; `clock` gives the time tokens are checked at.
    pub fn build(
        self,
        jwks: Arc<dyn JwksSource>,
        clock: Arc<dyn Clock>,
    ) -> Option<Arc<dyn Authenticator>> {
        Some(match self {
            AuthConfig::Unset => return None,
            AuthConfig::None => Arc::new(NoAuth),
            AuthConfig::ApiKey(keys) => Arc::new(keys),
            AuthConfig::Jwt(config) => Arc::new(Jwt::new(config, jwks, clock)),
            AuthConfig::Iam(iam) => Arc::new(iam),
            AuthConfig::CfAccess(config) => Arc::new(CfAccess::new(config, jwks, clock)),
        })
    }
}

/// `myteam.cloudflareaccess.com`, given with or without `https://` and a trailing `/`.
fn team_domain(value: &str) -> Result<String, AuthConfigError> {
    let lower = value.to_ascii_lowercase();
    let host = lower
        .strip_prefix("https://")
        .unwrap_or(&lower)
        .trim_end_matches('/');
    let valid = !host.is_empty()
        && host.contains('.')
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
    if valid {
        Ok(host.to_owned())
    } else {
        Err(AuthConfigError::Invalid {
            var: vars::CF_ACCESS_TEAM_DOMAIN,
            reason: "expected a host name such as myteam.cloudflareaccess.com".to_owned(),
        })
    }
}
