//! The names of the variables read by [`AuthConfig::from_lookup`](crate::AuthConfig::from_lookup).
//!
//! A leaf: the authenticators that parse their own variables (`api_key`, `iam`) name
//! them from here, and `config` reads them, without the two depending on each other.

/// `none`, `api-key`, `jwt`, `iam` or `cf-access`.
pub const AUTH: &str = "HANDOFF_AUTH";
/// `tenant/subject[+role]...=KEY|sha256:HEX`, comma-separated.
pub const API_KEYS: &str = "HANDOFF_API_KEYS";
/// The JWKS URL for `jwt`.
pub const JWT_JWKS_URL: &str = "HANDOFF_JWT_JWKS_URL";
/// The required `iss` for `jwt`.
pub const JWT_ISSUER: &str = "HANDOFF_JWT_ISSUER";
/// The required `aud` for `jwt`.
pub const JWT_AUDIENCE: &str = "HANDOFF_JWT_AUDIENCE";
/// `true`: the JWKS URL may be `http` on a loopback host (local tests).
pub const JWT_ALLOW_INSECURE_JWKS: &str = "HANDOFF_JWT_ALLOW_INSECURE_JWKS";
/// The tenant claim (default `tid`), for `jwt` and `cf-access`.
pub const JWT_TENANT_CLAIM: &str = "HANDOFF_JWT_TENANT_CLAIM";
/// The roles claim (default `roles`), for `jwt` and `cf-access`.
pub const JWT_ROLES_CLAIM: &str = "HANDOFF_JWT_ROLES_CLAIM";
/// The Access team domain for `cf-access`.
pub const CF_ACCESS_TEAM_DOMAIN: &str = "HANDOFF_CF_ACCESS_TEAM_DOMAIN";
/// The Access application AUD tag for `cf-access`.
pub const CF_ACCESS_AUD: &str = "HANDOFF_CF_ACCESS_AUD";
/// Optional `arn=role1+role2,...` for `iam`.
pub const IAM_ROLES: &str = "HANDOFF_IAM_ROLES";
