//! `HANDOFF_AUTH=iam`.

use handoff_auth::{Authenticator, Iam, IamCaller};

use crate::support::*;

fn with_caller(arn: &str) -> http::request::Parts {
    let mut parts = request(&[]);
    parts.extensions.insert(IamCaller {
        account_id: "123456789012".to_owned(),
        caller_arn: arn.to_owned(),
        user_id: Some("AROAEXAMPLE:session".to_owned()),
    });
    parts
}

#[test]
fn the_caller_extension_becomes_the_principal() {
    let arn = "arn:aws:sts::123456789012:assumed-role/ci/session";
    let principal = run(&Iam::new(), &with_caller(arn)).unwrap();
    assert_eq!(principal.tenant, "123456789012");
    // An assumed role is the role: the session name is the caller's to choose.
    assert_eq!(principal.subject, "arn:aws:iam::123456789012:role/ci");
    assert!(principal.roles.is_empty());
}

#[test]
fn roles_come_from_the_mapping() {
    let arn = "arn:aws:iam::123456789012:user/alice";
    let iam = Iam::parse_roles(&format!(
        "{arn}=approver+auditor, arn:aws:iam::1:user/bob=x"
    ))
    .unwrap();
    assert_eq!(
        run(&iam, &with_caller(arn)).unwrap().roles,
        ["approver", "auditor"]
    );
    assert!(
        run(&iam, &with_caller("arn:aws:iam::123456789012:user/carol"))
            .unwrap()
            .roles
            .is_empty()
    );
    assert!(Iam::parse_roles("arn-without-roles").is_err());
    assert!(Iam::parse_roles("arn=a++b").is_err());
}

#[test]
fn without_the_extension_the_request_is_refused() {
    let message = unauthenticated(run(&Iam::new(), &request(&[("authorization", "Bearer x")])));
    assert_eq!(
        message,
        "this endpoint expects AWS IAM (SigV4) authentication"
    );
    assert_eq!(Iam::new().scheme(), "iam");
}

#[test]
fn a_malformed_caller_is_refused() {
    unauthenticated(run(&Iam::new(), &with_caller("")));
    unauthenticated(run(&Iam::new(), &with_caller("arn\u{0}x")));
}
