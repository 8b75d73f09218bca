//! `HANDOFF_AUTH=api-key`.

use handoff_auth::{ApiKeys, AuthConfigError, Authenticator};
use sha2::{Digest, Sha256};

use crate::support::*;

fn hex_sha256(key: &str) -> String {
    Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn keys() -> ApiKeys {
    let hashed = hex_sha256("hashed-key-for-alice");
    ApiKeys::parse(&format!(
        " acme/ci-bot=plain-key-for-ci , acme/alice+approver+auditor=sha256:{hashed},globex/svc/worker=a=b==,"
    ))
    .unwrap()
}

#[test]
fn plain_and_hashed_keys_authenticate_with_their_principal_and_roles() {
    let keys = keys();
    assert_eq!(keys.len(), 3);
    let ci = run(&keys, &bearer("plain-key-for-ci")).unwrap();
    assert_eq!(
        (ci.tenant.as_str(), ci.subject.as_str()),
        ("acme", "ci-bot")
    );
    assert!(ci.roles.is_empty());
    let alice = run(&keys, &bearer("hashed-key-for-alice")).unwrap();
    assert_eq!(
        (alice.tenant.as_str(), alice.subject.as_str()),
        ("acme", "alice")
    );
    assert_eq!(alice.roles, ["approver", "auditor"]);
    // Keys may contain `=`; subjects may contain `/`.
    let svc = run(&keys, &bearer("a=b==")).unwrap();
    assert_eq!(
        (svc.tenant.as_str(), svc.subject.as_str()),
        ("globex", "svc/worker")
    );
    // The bearer scheme is case-insensitive.
    run(
        &keys,
        &request(&[("authorization", "bearer plain-key-for-ci")]),
    )
    .unwrap();
}

#[test]
fn wrong_or_missing_keys_are_refused() {
    let keys = keys();
    assert_eq!(
        unauthenticated(run(&keys, &bearer("plain-key-for-c"))),
        "unknown API key"
    );
    unauthenticated(run(&keys, &bearer("plain-key-for-ci2")));
    // The digest itself is not a key.
    unauthenticated(run(&keys, &bearer(&hex_sha256("hashed-key-for-alice"))));
    unauthenticated(run(
        &keys,
        &bearer(&format!("sha256:{}", hex_sha256("hashed-key-for-alice"))),
    ));
    let missing = unauthenticated(run(&keys, &request(&[])));
    assert!(missing.contains("API key"), "{missing}");
    unauthenticated(run(
        &keys,
        &request(&[("authorization", "Basic plain-key-for-ci")]),
    ));
    unauthenticated(run(&keys, &request(&[("x-api-key", "plain-key-for-ci")])));
}

#[test]
fn malformed_entries_are_named_by_position_without_the_secret() {
    let cases = [
        ("acme/ci=ok-key,no-equals-sign-secret", 2),
        ("acme/ci=ok-key,justsubject=secret-value", 2),
        ("acme/ci=", 1),
        ("acme/=secret-value", 1),
        ("/ci=secret-value", 1),
        ("acme/ci+=secret-value", 1),
        ("acme/ci=sha256:abcd", 1),
        (&format!("acme/ci=sha256:+{}", &"a".repeat(63)), 1),
        (&format!("acme/ci=sha256:{}", "g".repeat(64)), 1),
        ("acme/ci=secret-value,acme/other=secret-value", 2),
        ("a\u{7}/ci=secret-value", 1),
        (&format!("acme/{}=secret-value", "x".repeat(257)), 1),
    ];
    for (spec, position) in cases {
        match ApiKeys::parse(spec) {
            Err(err @ AuthConfigError::ApiKeyEntry { index, .. }) => {
                assert_eq!(index, position, "{spec}");
                let message = err.to_string();
                assert!(
                    message.starts_with(&format!("HANDOFF_API_KEYS entry {position}")),
                    "{message}"
                );
                assert!(!message.contains("secret-value"), "{message}");
            }
            other => panic!("{spec}: {other:?}"),
        }
    }
    assert!(matches!(
        ApiKeys::parse(" , "),
        Err(AuthConfigError::Invalid { .. })
    ));
}

#[test]
fn debug_output_does_not_show_keys() {
    let debug = format!("{:?}", keys());
    assert!(!debug.contains("plain-key"), "{debug}");
    assert_eq!(keys().scheme(), "api-key");
}
