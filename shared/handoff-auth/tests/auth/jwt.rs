//! `HANDOFF_AUTH=jwt`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use handoff_auth::StaticJwks;
use handoff_auth::{AuthError, Jwt, JwtConfig};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use crate::support::*;

fn with(changes: Value) -> Value {
    let mut claims = claims();
    for (name, value) in changes.as_object().unwrap() {
        if value.is_null() {
            claims.as_object_mut().unwrap().remove(name);
        } else {
            claims[name] = value.clone();
        }
    }
    claims
}

fn reject(token: &str) -> String {
    unauthenticated(run(&jwt(), &bearer(token)))
}

#[test]
fn valid_rs256_es256_and_eddsa_tokens_authenticate() {
    for alg in [Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA] {
        let principal =
            run(&jwt(), &bearer(&sign(alg, &claims()))).unwrap_or_else(|e| panic!("{alg:?}: {e}"));
        assert_eq!(principal.tenant, "default", "{alg:?}");
        assert_eq!(principal.subject, "user-42");
        assert!(principal.roles.is_empty());
    }
}

#[test]
fn a_token_without_kid_uses_the_only_fitting_key() {
    let principal = run(
        &jwt(),
        &bearer(&sign_with(Algorithm::ES256, None, &claims())),
    )
    .unwrap();
    assert_eq!(principal.subject, "user-42");
}

#[test]
fn tenant_and_roles_come_from_the_configured_claims() {
    let token = sign(
        Algorithm::RS256,
        &with(json!({"tid": "acme", "roles": ["approver", "auditor"]})),
    );
    let principal = run(&jwt(), &bearer(&token)).unwrap();
    assert_eq!(principal.tenant, "acme");
    assert_eq!(principal.roles, ["approver", "auditor"]);

    let custom = JwtConfig {
        tenant_claim: "org".to_owned(),
        roles_claim: "groups".to_owned(),
        ..jwt_config()
    };
    let auth = Jwt::new(custom, static_jwks(JWKS_URL, key_set()), clock());
    let token = sign(
        Algorithm::RS256,
        &with(json!({"org": "globex", "groups": ["ops"], "tid": "acme"})),
    );
    let principal = run(&auth, &bearer(&token)).unwrap();
    assert_eq!(
        (principal.tenant.as_str(), principal.roles.as_slice()),
        ("globex", &["ops".to_owned()][..])
    );
}

#[test]
fn malformed_tenant_subject_or_roles_claims_are_refused() {
    for changes in [
        json!({"tid": "ac\u{1f}me"}),
        json!({"tid": "x".repeat(257)}),
        json!({"tid": ""}),
        json!({"sub": "a\nb"}),
        json!({"tid": 7}),
        json!({"roles": "approver"}),
        json!({"roles": ["ok", 1]}),
        json!({"sub": null}),
    ] {
        reject(&sign(Algorithm::RS256, &with(changes)));
    }
}

#[test]
fn a_missing_or_non_bearer_authorization_header_is_refused() {
    let message = unauthenticated(run(&jwt(), &request(&[])));
    assert!(message.contains("Bearer"), "{message}");
    unauthenticated(run(
        &jwt(),
        &request(&[("authorization", "Basic dXNlcjpwYXNz")]),
    ));
    unauthenticated(run(&jwt(), &request(&[("authorization", "Bearer ")])));
    assert_eq!(reject("not-a-jwt"), "malformed token");
}

#[test]
fn expiry_and_not_before_are_checked_with_sixty_seconds_of_leeway() {
    assert_eq!(
        reject(&sign(Algorithm::RS256, &with(json!({"exp": NOW - 61})))),
        "token expired"
    );
    run(
        &jwt(),
        &bearer(&sign(Algorithm::RS256, &with(json!({"exp": NOW - 59})))),
    )
    .unwrap();
    assert_eq!(
        reject(&sign(Algorithm::RS256, &with(json!({"nbf": NOW + 61})))),
        "token not yet valid"
    );
    run(
        &jwt(),
        &bearer(&sign(Algorithm::RS256, &with(json!({"nbf": NOW + 59})))),
    )
    .unwrap();
    assert!(reject(&sign(Algorithm::RS256, &with(json!({"exp": null})))).contains("exp"));
    assert!(reject(&sign(Algorithm::RS256, &with(json!({"exp": "tomorrow"})))).contains("exp"));
}

#[test]
fn issuer_and_audience_must_match() {
    assert_eq!(
        reject(&sign(
            Algorithm::RS256,
            &with(json!({"iss": "https://evil.example/"}))
        )),
        "wrong issuer"
    );
    assert_eq!(
        reject(&sign(Algorithm::RS256, &with(json!({"aud": "other-api"})))),
        "wrong audience"
    );
    assert!(reject(&sign(Algorithm::RS256, &with(json!({"aud": null})))).contains("aud"));
    assert!(reject(&sign(Algorithm::RS256, &with(json!({"iss": null})))).contains("iss"));
    // One of several audiences is enough.
    run(
        &jwt(),
        &bearer(&sign(
            Algorithm::RS256,
            &with(json!({"aud": ["x", AUDIENCE]})),
        )),
    )
    .unwrap();
}

#[test]
fn a_tampered_or_foreign_signature_is_refused() {
    let token = sign(Algorithm::RS256, &claims());
    let (signed, _) = token.rsplit_once('.').unwrap();
    let forged_claims = URL_SAFE_NO_PAD.encode(with(json!({"sub": "admin"})).to_string());
    let mut parts: Vec<&str> = token.split('.').collect();
    parts[1] = &forged_claims;
    assert_eq!(reject(&parts.join(".")), "bad signature");
    // Signed by the EC key but claiming the RSA key's kid and alg: the kid's key does not fit.
    let foreign = sign_with(Algorithm::ES256, Some("rsa-1"), &claims());
    assert_eq!(reject(&foreign), "unknown signing key");
    // The RSA key's kid with a signature over other bytes.
    let other = sign(Algorithm::RS256, &with(json!({"sub": "someone-else"})));
    let bad = format!("{signed}.{}", other.rsplit_once('.').unwrap().1);
    assert_eq!(reject(&bad), "bad signature");
}

#[test]
fn alg_none_is_refused() {
    let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT","kid":"rsa-1"}"#);
    let body = URL_SAFE_NO_PAD.encode(claims().to_string());
    for token in [format!("{header}.{body}."), format!("{header}.{body}")] {
        unauthenticated(run(&jwt(), &bearer(&token)));
    }
}

#[test]
fn hs256_signed_with_the_public_key_is_refused() {
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("rsa-1".to_owned());
    let jwk = jwk(Algorithm::RS256, "rsa-1");
    let jsonwebtoken::jwk::AlgorithmParameters::RSA(rsa) = &jwk.algorithm else {
        unreachable!()
    };
    let jwk_json = serde_json::to_string(&jwk).unwrap();
    for secret in [
        RSA_PUBLIC_PEM.as_bytes(),
        rsa.n.as_bytes(),
        jwk_json.as_bytes(),
    ] {
        let token = jsonwebtoken::encode(
            &header,
            &claims(),
            &EncodingKey::from_secret(secret).unwrap(),
        )
        .unwrap();
        assert_eq!(reject(&token), "unsupported algorithm");
    }
}

#[test]
fn unknown_kid_refetches_once_then_is_refused() {
    let source = CountingJwks::new(Some(StaticJwks::new().with(JWKS_URL, key_set())));
    let now = clock();
    let auth = Jwt::new(jwt_config(), source.clone(), now.clone());
    let unknown = sign_with(Algorithm::RS256, Some("rotated-away"), &claims());
    assert_eq!(
        unauthenticated(run(&auth, &bearer(&unknown))),
        "unknown signing key"
    );
    // The set was fetched this instant: the forced refresh is rate-limited away.
    assert_eq!(source.fetches.load(Ordering::SeqCst), 1);
    // A known kid is served from the cache.
    run(&auth, &bearer(&sign(Algorithm::RS256, &claims()))).unwrap();
    assert_eq!(source.fetches.load(Ordering::SeqCst), 1);
    // Two minutes on (within the TTL), an unknown kid forces one refetch, then no more.
    now.advance(120_000);
    unauthenticated(run(&auth, &bearer(&unknown)));
    unauthenticated(run(&auth, &bearer(&unknown)));
    assert_eq!(source.refreshes.load(Ordering::SeqCst), 1);
    assert_eq!(source.fetches.load(Ordering::SeqCst), 2);
}

#[test]
fn a_key_set_that_cannot_be_fetched_is_unavailable_not_unauthenticated() {
    let auth = Jwt::new(jwt_config(), CountingJwks::new(None), clock());
    let result = run(&auth, &bearer(&sign(Algorithm::RS256, &claims())));
    assert!(
        matches!(result, Err(AuthError::Unavailable(_))),
        "{result:?}"
    );
}

#[test]
fn a_key_whose_published_alg_differs_from_the_header_is_not_used() {
    let mut mislabeled = jwk(Algorithm::RS256, "rsa-1");
    mislabeled.common.key_algorithm = Some(jsonwebtoken::jwk::KeyAlgorithm::RS512);
    let set = handoff_auth::JwkSet {
        keys: vec![mislabeled],
    };
    let auth = Jwt::new(jwt_config(), static_jwks(JWKS_URL, set), clock());
    let message = unauthenticated(run(&auth, &bearer(&sign(Algorithm::RS256, &claims()))));
    assert_eq!(message, "unknown signing key");
}

#[test]
fn scheme_and_challenge() {
    let auth: Arc<dyn handoff_auth::Authenticator> = Arc::new(jwt());
    assert_eq!(auth.scheme(), "jwt");
    assert_eq!(auth.challenge(), "Bearer realm=\"handoff\"");
}
