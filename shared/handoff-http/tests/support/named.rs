//! An authenticator for the approval tests: `authorization: alice` (no role), `bob`
//! (role `approver`) or `carol` (role `admin`), all of tenant acme.

use handoff_core::Principal;
use handoff_http::{AuthError, Authenticator};

/// `alice` (no role), `bob` (approver) or `carol` (admin), tenant acme; anything else is
/// unauthenticated.
pub(crate) struct Named;

impl Authenticator for Named {
    fn authenticate<'a>(
        &'a self,
        request: &'a http::request::Parts,
    ) -> futures::future::BoxFuture<'a, Result<Principal, AuthError>> {
        let who = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        let principal = match who {
            Some("alice") => Ok(Principal::new("acme", "alice")),
            Some("bob") => Ok(Principal::new("acme", "bob").with_roles(["approver"])),
            Some("carol") => Ok(Principal::new("acme", "carol").with_roles(["admin"])),
            _ => Err(AuthError::unauthenticated("who are you?")),
        };
        Box::pin(async move { principal })
    }
    fn scheme(&self) -> &'static str {
        "test-names"
    }
}
