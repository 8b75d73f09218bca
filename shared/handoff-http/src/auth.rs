//! Who is calling: the [`Authenticator`] hook every protected route runs first.
//!
//! An authenticator turns request parts into a [`Principal`] or an [`AuthError`]. The
//! router runs it before every route but `/healthz` (the A2A webhook, merged by hosts
//! outside this router, keeps its own credentials), puts the principal in the request
//! extensions, and answers a failure with 401 `UNAUTHENTICATED` (or 503 when a key set
//! cannot be had) and a `WWW-Authenticate` challenge, before anything is read or written.
//!
//! The trait, its error and [`NoAuth`] (`HANDOFF_AUTH=none`) live in `handoff-auth`, with
//! the built-ins chosen with `HANDOFF_AUTH` (`api-key`, `jwt`, `iam`, `cf-access`); they
//! are re-exported here. This module is the layer that runs them.

use std::sync::Arc;

pub use handoff_auth::{AuthError, Authenticator, NoAuth};
pub use handoff_core::Principal;
use handoff_core::codes;

use crate::error::ApiError;
use crate::request_log::RequestFacts;

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
                ApiError::new(codes::UNAUTHENTICATED, message.clone())
                    .with_www_authenticate(self.0.challenge())
            }
            // Unavailable, and whatever a later version adds: never a pass.
            other => {
                tracing::warn!(error = %other, "authentication unavailable");
                ApiError::new(
                    codes::AUTH_UNAVAILABLE,
                    "credentials cannot be checked right now; retry shortly",
                )
                .with_retry_after_ms(5_000)
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
            if let Some(facts) = parts.extensions.get::<Arc<RequestFacts>>() {
                facts.tenant(&principal.tenant);
            }
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
