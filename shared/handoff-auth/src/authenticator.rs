//! The [`Authenticator`] trait every host runs before its routes, its [`AuthError`], and
//! [`NoAuth`] (`HANDOFF_AUTH=none`). The HTTP layer that runs it lives in `handoff-http`.

use futures::future::BoxFuture;
pub use handoff_core::Principal;
use http::request::Parts;

/// Why a request was not authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// No, or bad, credentials: 401 `UNAUTHENTICATED`. The message is shown to the
    /// client, so it says what is wrong in general terms and never echoes a secret.
    Unauthenticated(String),
    /// Credentials could not be checked right now (an identity provider's key set is
    /// unreachable): 503 `AUTH_UNAVAILABLE`, retryable.
    Unavailable(String),
}

impl AuthError {
    /// A 401 with `message`.
    pub fn unauthenticated(message: impl Into<String>) -> Self {
        AuthError::Unauthenticated(message.into())
    }
}

impl std::fmt::Display for AuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthError::Unauthenticated(m) => write!(f, "unauthenticated: {m}"),
            AuthError::Unavailable(m) => write!(f, "authentication unavailable: {m}"),
        }
    }
}

impl std::error::Error for AuthError {}

/// Authenticates requests.
pub trait Authenticator: Send + Sync + 'static {
    /// The principal behind `request`. Must not read the body.
    fn authenticate<'a>(
        &'a self,
        request: &'a Parts,
    ) -> BoxFuture<'a, Result<Principal, AuthError>>;

    /// The `WWW-Authenticate` value sent with a 401.
    fn challenge(&self) -> String {
        "Bearer realm=\"handoff\"".to_owned()
    }

    /// Short name for logs and the start banner (`none`, `api-key`, `jwt`, …).
    fn scheme(&self) -> &'static str;

    /// The OAuth 2.1 authorization servers (issuers) whose access tokens this accepts,
    /// published as protected-resource metadata (RFC 9728) for MCP clients. None for
    /// schemes that are not OAuth.
    fn authorization_servers(&self) -> Vec<String> {
        Vec::new()
    }
}

/// `HANDOFF_AUTH=none`: every caller is [`Principal::anonymous`]. For local development
/// only; hosts print a warning when they serve with it.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoAuth;

impl Authenticator for NoAuth {
    fn authenticate<'a>(&'a self, _: &'a Parts) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(async { Ok(Principal::anonymous()) })
    }

    fn scheme(&self) -> &'static str {
        "none"
    }
}
