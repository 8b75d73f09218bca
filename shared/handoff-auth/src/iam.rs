//! `HANDOFF_AUTH=iam`: callers a Lambda Function URL (`AuthType: AWS_IAM`) already verified.

use std::collections::HashMap;

use futures::future::BoxFuture;
use http::request::Parts;

use crate::config::{AuthConfigError, vars};
use crate::{AuthError, Authenticator, CHALLENGE, Principal, checked_principal};

/// The IAM identity AWS verified (SigV4) before invoking the function, from the request
/// context's `authorizer.iam`. The Lambda host inserts it into the request extensions;
/// without it the request is refused, so `HANDOFF_AUTH=iam` is only safe behind a Function
/// URL whose `AuthType` is `AWS_IAM`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IamCaller {
    /// The caller's AWS account id: the principal's tenant.
    pub account_id: String,
    /// The caller's ARN (e.g. `arn:aws:sts::123456789012:assumed-role/ci/session`): the subject.
    pub caller_arn: String,
    /// The caller's unique id (`AROA…:session`), when AWS gave one. Informational.
    pub user_id: Option<String>,
}

/// Authenticates by the [`IamCaller`] extension (`HANDOFF_AUTH=iam`).
#[derive(Debug, Clone, Default)]
pub struct Iam {
    roles: HashMap<String, Vec<String>>,
}

impl Iam {
    /// Callers get no roles.
    pub fn new() -> Iam {
        Iam::default()
    }

    /// Grants `roles` to the caller whose ARN is exactly `caller_arn`.
    #[must_use]
    pub fn with_roles<I, S>(mut self, caller_arn: impl Into<String>, roles: I) -> Iam
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.roles
            .entry(caller_arn.into())
            .or_default()
            .extend(roles.into_iter().map(Into::into));
        self
    }

    /// Parses a `HANDOFF_IAM_ROLES` value: comma-separated `arn=role1+role2` entries.
    pub fn parse_roles(spec: &str) -> Result<Iam, AuthConfigError> {
        let mut iam = Iam::new();
        for (index, entry) in spec.split(',').enumerate() {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            let invalid = |what: &str| AuthConfigError::Invalid {
                var: vars::IAM_ROLES,
                reason: format!("entry {}: {what}", index + 1),
            };
            let (arn, roles) = entry
                .split_once('=')
                .ok_or_else(|| invalid("expected arn=role1+role2"))?;
            let roles: Vec<&str> = roles.split('+').map(str::trim).collect();
            if arn.trim().is_empty() || roles.iter().any(|r| r.is_empty()) {
                return Err(invalid("has an empty ARN or role"));
            }
            iam = iam.with_roles(arn.trim(), roles);
        }
        Ok(iam)
    }
}

impl Authenticator for Iam {
    fn authenticate<'a>(
        &'a self,
        request: &'a Parts,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        let result = match request.extensions.get::<IamCaller>() {
            None => Err(AuthError::unauthenticated(
                "this endpoint expects AWS IAM (SigV4) authentication",
            )),
            Some(caller) => {
                let roles = self
                    .roles
                    .get(&caller.caller_arn)
                    .cloned()
                    .unwrap_or_default();
                checked_principal(Some(&caller.account_id), &caller.caller_arn, roles)
            }
        };
        Box::pin(futures::future::ready(result))
    }

    fn challenge(&self) -> String {
        CHALLENGE.to_owned()
    }

    fn scheme(&self) -> &'static str {
        "iam"
    }
}
