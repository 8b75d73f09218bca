//! [`verify_jwt`] itself, under the policy options [`Jwt`](handoff_auth::Jwt) does not use
//! (optional `exp`, an `iat` window, unchecked `iss` / `aud`): the A2A receiver's.

use handoff_auth::{JwtPolicy, JwtRejection, StaticJwks, verify_jwt};
use jsonwebtoken::Algorithm;
use serde_json::{Map, Value, json};

use crate::support::*;

/// The A2A receiver's shape: RS256 / ES256, no `iss` / `aud`, `exp` optional with 60 s of
/// leeway, `iat` within five minutes either way.
fn push_policy() -> JwtPolicy<'static> {
    JwtPolicy {
        jwks_url: JWKS_URL,
        algorithms: &[Algorithm::RS256, Algorithm::ES256],
        issuer: None,
        audience: None,
        require_exp: false,
        leeway_ms: 60_000,
        iat_window_ms: Some(300_000),
    }
}

fn verify(policy: &JwtPolicy<'_>, claims: Value) -> Result<Map<String, Value>, JwtRejection> {
    let jwks = StaticJwks::new().with(JWKS_URL, key_set());
    let token = sign(Algorithm::ES256, &claims);
    futures::executor::block_on(verify_jwt(&token, policy, &jwks, NOW * 1000))
}

#[test]
fn the_verified_claims_are_answered_and_unconfigured_checks_are_skipped() {
    // No exp, a foreign issuer and audience: none of them is this policy's business.
    let claims = verify(
        &push_policy(),
        json!({"iat": NOW, "iss": "anyone", "aud": "anything", "taskId": "t-1"}),
    )
    .unwrap();
    assert_eq!(claims["taskId"], "t-1");
}

#[test]
fn iat_must_be_present_and_within_the_window_either_way() {
    let policy = push_policy();
    for iat in [NOW - 299, NOW + 299] {
        verify(&policy, json!({ "iat": iat })).unwrap();
    }
    for claims in [
        json!({"iat": NOW - 301}),
        json!({"iat": NOW + 301}),
        json!({}),
    ] {
        assert_eq!(verify(&policy, claims), Err(JwtRejection::StaleIat));
    }
    assert_eq!(
        verify(&policy, json!({"iat": "now"})),
        Err(JwtRejection::NotANumber("iat"))
    );
    // Without a window, iat is neither required nor checked.
    let no_window = JwtPolicy {
        iat_window_ms: None,
        ..policy
    };
    verify(&no_window, json!({"iat": NOW - 3600})).unwrap();
}

#[test]
fn exp_and_nbf_are_checked_when_present_with_the_leeway() {
    let policy = push_policy();
    let at = |extra: Value| {
        let mut claims = json!({ "iat": NOW });
        claims
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        verify(&policy, claims)
    };
    assert_eq!(at(json!({"exp": NOW - 61})), Err(JwtRejection::Expired));
    at(json!({"exp": NOW - 59})).unwrap();
    assert_eq!(at(json!({"nbf": NOW + 61})), Err(JwtRejection::NotYetValid));
    at(json!({"nbf": NOW + 59})).unwrap();
    let strict = JwtPolicy {
        require_exp: true,
        ..policy
    };
    assert_eq!(
        verify(&strict, json!({ "iat": NOW })),
        Err(JwtRejection::MissingClaim("exp".to_owned()))
    );
}

#[test]
fn an_algorithm_outside_the_policy_is_refused_before_any_key_is_fetched() {
    // EdDSA is in the key set, but not in this policy.
    let token = sign(Algorithm::EdDSA, &json!({ "iat": NOW }));
    let jwks = CountingJwks::new(Some(StaticJwks::new().with(JWKS_URL, key_set())));
    let result = futures::executor::block_on(verify_jwt(
        &token,
        &push_policy(),
        jwks.as_ref(),
        NOW * 1000,
    ));
    assert_eq!(result, Err(JwtRejection::UnsupportedAlgorithm));
    assert_eq!(jwks.fetches.load(std::sync::atomic::Ordering::SeqCst), 0);
}
