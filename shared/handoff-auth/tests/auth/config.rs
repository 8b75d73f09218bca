//! `AuthConfig::from_lookup` and `build`.

use std::collections::HashMap;
use std::sync::Arc;

use handoff_auth::StaticJwks;
use handoff_auth::{AuthConfig, AuthConfigError};
use jsonwebtoken::Algorithm;

use crate::support::*;

fn from(vars: &[(&str, &str)]) -> Result<AuthConfig, AuthConfigError> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    AuthConfig::from_lookup(|name| vars.get(name).cloned())
}

fn jwt_vars(url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("HANDOFF_AUTH", "jwt".to_owned()),
        ("HANDOFF_JWT_JWKS_URL", url.to_owned()),
        ("HANDOFF_JWT_ISSUER", ISSUER.to_owned()),
        ("HANDOFF_JWT_AUDIENCE", AUDIENCE.to_owned()),
    ]
}

fn from_owned(vars: &[(&'static str, String)]) -> Result<AuthConfig, AuthConfigError> {
    let borrowed: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    from(&borrowed)
}

#[test]
fn unset_is_ok_and_left_to_the_host() {
    let config = from(&[]).unwrap();
    assert!(matches!(config, AuthConfig::Unset));
    assert_eq!(config.scheme(), None);
    assert!(config.build(Arc::new(StaticJwks::new()), clock()).is_none());
    assert!(matches!(
        from(&[("HANDOFF_AUTH", " ")]).unwrap(),
        AuthConfig::Unset
    ));
}

#[test]
fn every_mode_builds_an_authenticator_with_its_scheme() {
    let cases: Vec<Vec<(&str, &str)>> = vec![
        vec![("HANDOFF_AUTH", "none")],
        vec![
            ("HANDOFF_AUTH", "api-key"),
            ("HANDOFF_API_KEYS", "acme/ci=some-long-key"),
        ],
        vec![
            ("HANDOFF_AUTH", "iam"),
            ("HANDOFF_IAM_ROLES", "arn:aws:iam::1:user/a=approver"),
        ],
        vec![
            ("HANDOFF_AUTH", "jwt"),
            ("HANDOFF_JWT_JWKS_URL", JWKS_URL),
            ("HANDOFF_JWT_ISSUER", ISSUER),
            ("HANDOFF_JWT_AUDIENCE", AUDIENCE),
        ],
        vec![
            ("HANDOFF_AUTH", "cf-access"),
            (
                "HANDOFF_CF_ACCESS_TEAM_DOMAIN",
                "https://myteam.cloudflareaccess.com/",
            ),
            ("HANDOFF_CF_ACCESS_AUD", "aud-tag"),
        ],
    ];
    for vars in cases {
        let mode = vars[0].1;
        let config = from(&vars).unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert_eq!(config.scheme(), Some(mode));
        assert!(!config.allows_insecure_jwks());
        let auth = config.build(Arc::new(StaticJwks::new()), clock()).unwrap();
        assert_eq!(auth.scheme(), mode);
        assert_eq!(auth.challenge(), "Bearer realm=\"handoff\"");
    }
    let cf = from(&[
        ("HANDOFF_AUTH", "cf-access"),
        (
            "HANDOFF_CF_ACCESS_TEAM_DOMAIN",
            "MyTeam.cloudflareaccess.com",
        ),
        ("HANDOFF_CF_ACCESS_AUD", "a"),
    ])
    .unwrap();
    assert_eq!(
        cf.jwks_url().as_deref(),
        Some("https://myteam.cloudflareaccess.com/cdn-cgi/access/certs")
    );
}

#[test]
fn a_built_jwt_authenticator_verifies_with_the_configured_claims() {
    let mut vars = jwt_vars(JWKS_URL);
    vars.push(("HANDOFF_JWT_TENANT_CLAIM", "org".to_owned()));
    let config = from_owned(&vars).unwrap();
    let auth = config
        .build(static_jwks(JWKS_URL, key_set()), clock())
        .unwrap();
    let mut claims = claims();
    claims["org"] = "acme".into();
    let principal = run(auth.as_ref(), &bearer(&sign(Algorithm::EdDSA, &claims))).unwrap();
    assert_eq!(principal.tenant, "acme");
}

#[test]
fn an_unknown_mode_lists_the_valid_ones() {
    let err = from(&[("HANDOFF_AUTH", "oauth")]).unwrap_err();
    assert!(matches!(&err, AuthConfigError::UnknownMode { value } if value == "oauth"));
    let message = err.to_string();
    for mode in ["none", "api-key", "jwt", "iam", "cf-access"] {
        assert!(message.contains(mode), "{message}");
    }
}

#[test]
fn missing_variables_are_named() {
    for var in [
        "HANDOFF_JWT_JWKS_URL",
        "HANDOFF_JWT_ISSUER",
        "HANDOFF_JWT_AUDIENCE",
    ] {
        let vars: Vec<_> = jwt_vars(JWKS_URL)
            .into_iter()
            .filter(|(k, _)| *k != var)
            .collect();
        let err = from_owned(&vars).unwrap_err();
        assert_eq!(err, AuthConfigError::Missing { mode: "jwt", var });
        assert!(err.to_string().contains(var));
    }
    assert_eq!(
        from(&[("HANDOFF_AUTH", "api-key")]).unwrap_err(),
        AuthConfigError::Missing {
            mode: "api-key",
            var: "HANDOFF_API_KEYS"
        }
    );
    assert_eq!(
        from(&[
            ("HANDOFF_AUTH", "cf-access"),
            ("HANDOFF_CF_ACCESS_TEAM_DOMAIN", "t.cloudflareaccess.com")
        ])
        .unwrap_err(),
        AuthConfigError::Missing {
            mode: "cf-access",
            var: "HANDOFF_CF_ACCESS_AUD"
        }
    );
}

#[test]
fn the_jwks_url_must_be_https_unless_insecure_and_loopback() {
    let invalid_url = |result: Result<AuthConfig, AuthConfigError>| match result {
        Err(AuthConfigError::Invalid {
            var: "HANDOFF_JWT_JWKS_URL",
            reason,
        }) => reason,
        other => panic!("expected an invalid JWKS URL, got {other:?}"),
    };
    let reason = invalid_url(from_owned(&jwt_vars("http://127.0.0.1:9000/jwks")));
    assert!(
        reason.contains("HANDOFF_JWT_ALLOW_INSECURE_JWKS"),
        "{reason}"
    );
    invalid_url(from_owned(&jwt_vars("http://idp.example.com/jwks")));

    let insecure = |url: &str| {
        let mut vars = jwt_vars(url);
        vars.push(("HANDOFF_JWT_ALLOW_INSECURE_JWKS", "true".to_owned()));
        from_owned(&vars)
    };
    for url in [
        "http://127.0.0.1:9000/jwks",
        "http://[::1]:9000/jwks",
        "http://localhost:9000/jwks",
    ] {
        let config = insecure(url).unwrap_or_else(|e| panic!("{url}: {e}"));
        assert!(config.allows_insecure_jwks());
        assert_eq!(config.jwks_url().as_deref(), Some(url));
    }
    let reason = invalid_url(insecure("http://idp.example.com/jwks"));
    assert!(reason.contains("loopback"), "{reason}");
    invalid_url(insecure("http://192.168.1.10/jwks"));
    invalid_url(from_owned(&jwt_vars("https://10.1.2.3/jwks")));

    let mut vars = jwt_vars(JWKS_URL);
    vars.push(("HANDOFF_JWT_ALLOW_INSECURE_JWKS", "yes".to_owned()));
    assert!(matches!(
        from_owned(&vars),
        Err(AuthConfigError::Invalid {
            var: "HANDOFF_JWT_ALLOW_INSECURE_JWKS",
            ..
        })
    ));
}

#[test]
fn other_invalid_values_name_their_variable_without_secrets() {
    let err = from(&[
        ("HANDOFF_AUTH", "api-key"),
        ("HANDOFF_API_KEYS", "acme/ci=topsecret,broken-topsecret2"),
    ])
    .unwrap_err();
    assert!(matches!(err, AuthConfigError::ApiKeyEntry { index: 2, .. }));
    assert!(!err.to_string().contains("topsecret"));
    for domain in [
        "https://team.cloudflareaccess.com/path",
        "team",
        "te am.example.com",
    ] {
        let err = from(&[
            ("HANDOFF_AUTH", "cf-access"),
            ("HANDOFF_CF_ACCESS_TEAM_DOMAIN", domain),
            ("HANDOFF_CF_ACCESS_AUD", "a"),
        ])
        .unwrap_err();
        assert!(
            matches!(
                err,
                AuthConfigError::Invalid {
                    var: "HANDOFF_CF_ACCESS_TEAM_DOMAIN",
                    ..
                }
            ),
            "{domain}"
        );
    }
    assert!(matches!(
        from(&[("HANDOFF_AUTH", "iam"), ("HANDOFF_IAM_ROLES", "no-equals")]),
        Err(AuthConfigError::Invalid {
            var: "HANDOFF_IAM_ROLES",
            ..
        })
    ));
}
