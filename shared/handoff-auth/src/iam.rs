//! `HANDOFF_AUTH=iam`: callers a Lambda Function URL (`AuthType: AWS_IAM`) already verified.

use std::collections::HashMap;

use futures::future::BoxFuture;
use http::request::Parts;

use crate::config_error::AuthConfigError;
use crate::vars;
use crate::{AuthError, Authenticator, CHALLENGE, Principal, checked_principal};

/// The IAM identity AWS verified (SigV4) before invoking the function, from the request
/// context's `authorizer.iam`. The Lambda host inserts it into the request extensions;
/// without it the request is refused, so `HANDOFF_AUTH=iam` is only safe behind a Function
/// URL whose `AuthType` is `AWS_IAM`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IamCaller {
    /// The caller's AWS account id: the principal's tenant.
    pub account_id: String,
    /// The caller's ARN (e.g. `arn:aws:sts::123456789012:assumed-role/ci/session`). The
    /// subject is its [`IamCaller::identity`]: for an assumed role the role, not the session.
    pub caller_arn: String,
    /// The caller's unique id (`AROA…:session`), when AWS gave one. Informational.
    pub user_id: Option<String>,
}

impl IamCaller {
    /// Who the caller is: the caller's ARN, except that an assumed-role session
    /// (`arn:aws:sts::ACCOUNT:assumed-role/NAME/SESSION`) is its role
    /// (`arn:aws:iam::ACCOUNT:role/NAME`). The session name is chosen by whoever assumes
    /// the role, so it never decides ownership or roles; see [`IamCaller::session_name`].
    pub fn identity(&self) -> String {
        role_of(&self.caller_arn).unwrap_or_else(|| self.caller_arn.clone())
    }

    /// The session name of an assumed-role caller (for logs only).
    pub fn session_name(&self) -> Option<&str> {
        let (_, rest) = self.caller_arn.split_once(":assumed-role/")?;
        rest.split_once('/').map(|(_, session)| session)
    }
}

/// `arn:PARTITION:iam::ACCOUNT:role/NAME` for an assumed-role session ARN.
fn role_of(arn: &str) -> Option<String> {
    let mut parts = arn.splitn(6, ':');
    let (scheme, partition, service, _region, account, resource) = (
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
    );
    let name = resource.strip_prefix("assumed-role/")?.split('/').next()?;
    (scheme == "arn" && service == "sts" && !name.is_empty())
        .then(|| format!("arn:{partition}:iam::{account}:role/{name}"))
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

    /// Grants `roles` to the caller whose identity is `caller_arn` (a role's sessions are
    /// the role: an assumed-role ARN given here counts for every session of its role).
    #[must_use]
    pub fn with_roles<I, S>(mut self, caller_arn: impl Into<String>, roles: I) -> Iam
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let arn = caller_arn.into();
        self.roles
            .entry(role_of(&arn).unwrap_or(arn))
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
                let identity = caller.identity();
                if let Some(session) = caller.session_name() {
                    tracing::debug!(%identity, session, "IAM caller");
                }
                let roles = self.roles.get(&identity).cloned().unwrap_or_default();
                checked_principal(Some(&caller.account_id), &identity, roles)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(arn: &str) -> IamCaller {
        IamCaller {
            account_id: "123456789012".into(),
            caller_arn: arn.into(),
            user_id: None,
        }
    }

    fn principal(iam: &Iam, arn: &str) -> Principal {
        let mut parts = http::Request::new(()).into_parts().0;
        parts.extensions.insert(caller(arn));
        futures::executor::block_on(iam.authenticate(&parts)).unwrap()
    }

    /// Before, the subject was the whole session ARN: a caller who picked another
    /// session name was another owner, and a role mapping named one session.
    #[test]
    fn an_assumed_role_is_its_role_whatever_the_session_name() {
        let role = "arn:aws:iam::123456789012:role/ci";
        let iam = Iam::new().with_roles(role, ["approver"]);
        let a = principal(&iam, "arn:aws:sts::123456789012:assumed-role/ci/alice");
        let b = principal(&iam, "arn:aws:sts::123456789012:assumed-role/ci/mallory");
        assert_eq!((a.subject.as_str(), b.subject.as_str()), (role, role));
        assert_eq!(a.roles, ["approver"]);
        assert_eq!(b.roles, ["approver"]);
        // A mapping written with a session ARN grants the role, not the session.
        let iam = Iam::parse_roles("arn:aws:sts::123456789012:assumed-role/ci/x=auditor").unwrap();
        assert_eq!(
            principal(&iam, "arn:aws:sts::123456789012:assumed-role/ci/y").roles,
            ["auditor"]
        );
        // Users and roles in other partitions keep their ARN.
        let user = "arn:aws:iam::123456789012:user/bob";
        assert_eq!(principal(&Iam::new(), user).subject, user);
        let cn = principal(&Iam::new(), "arn:aws-cn:sts::123456789012:assumed-role/r/s");
        assert_eq!(cn.subject, "arn:aws-cn:iam::123456789012:role/r");
        assert_eq!(
            caller("arn:aws:sts::1:assumed-role/r/s").session_name(),
            Some("s")
        );
    }
}
