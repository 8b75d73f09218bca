//! Who is calling: the [`Authenticator`] hook every protected route runs first.
//!
//! An authenticator turns request parts into a [`Principal`] or an [`AuthError`]. The
//! router runs it before every route but `/healthz` (the A2A webhook, merged by hosts
//! outside this router, keeps its own credentials), puts the principal in the request
//! extensions, and answers a failure with 401 `UNAUTHENTICATED` (or 503 when a key set
//! cannot be had) and a `WWW-Authenticate` challenge, before anything is read or written.
//!
//! The built-ins chosen with `HANDOFF_AUTH` (`api-key`, `jwt`, `iam`, `cf-access`) live
//! in `handoff-auth`; [`NoAuth`] (`HANDOFF_AUTH=none`) is here.

use handoff_core::codes;
use std::sync::Arc;

use futures::future::BoxFuture;
pub use handoff_core::Principal;
use http::request::Parts;

use crate::error::ApiError;

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

/// A shared [`Authenticator`].
#[derive(Clone)]
pub struct AuthHook(pub Arc<dyn Authenticator>);

impl std::fmt::Debug for AuthHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AuthHook({})", self.0.scheme())
    }
}

impl Default for AuthHook {
    fn default() -> Self {
        AuthHook(Arc::new(NoAuth))
    }
}

impl AuthHook {
    /// The rejection answered for `error`.
    pub(crate) fn reject(&self, error: &AuthError) -> ApiError {
        match error {
            AuthError::Unauthenticated(message) => {
                let mut rejection = ApiError::new(codes::UNAUTHENTICATED, message.clone());
                rejection.www_authenticate = Some(self.0.challenge());
                rejection
            }
            AuthError::Unavailable(why) => {
                tracing::warn!(error = %why, "authentication unavailable");
                let mut rejection = ApiError::new(
                    codes::AUTH_UNAVAILABLE,
                    "credentials cannot be checked right now; retry shortly",
                );
                rejection.retry_after_ms = Some(5_000);
                rejection
            }
        }
    }
}

/// The layer every protected route runs: the principal goes into the request
/// extensions, a failure is answered before the handler (nothing read or written).
pub(crate) async fn authenticate(
    axum::extract::State(hook): axum::extract::State<AuthHook>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let (mut parts, body) = request.into_parts();
    match hook.0.authenticate(&parts).await {
        Ok(principal) => {
            parts.extensions.insert(principal);
            next.run(axum::extract::Request::from_parts(parts, body))
                .await
        }
        Err(error) => {
            tracing::info!(scheme = hook.0.scheme(), error = %error, path = parts.uri.path(), "request not authenticated");
            hook.reject(&error).into_response()
        }
    }
}
