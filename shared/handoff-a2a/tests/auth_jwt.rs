//! Authentication by sender-signed JWTs: algorithms, signatures, freshness, single use, the
//! body hash and the claims; every failure the same bare 401.

mod common;

use common::*;
use handoff_a2a::{AuthFailure, JwtAlgorithm, JwtAuth, ReceiverError};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::json;

#[tokio::test]
async fn jwts_signed_rs256_and_es256_verify() {
    let h = Harness::new();
    let config = h.jwt_config(JwtAuth::new(JWKS_URL)).await;
    let b = status_body("TASK_STATE_WORKING", None);
    h.post(&config, &bearer(&rs256_jwt(&b, h.now(), "j-1")), &b)
        .await
        .unwrap();
    let b = status_body("TASK_STATE_COMPLETED", None);
    let es = sign(
        &claims_for(&b, h.now(), "j-2"),
        &es256_key(),
        Algorithm::ES256,
        Some("ec-1"),
    );
    let ack = h.post(&config, &bearer(&es), &b).await.unwrap();
    assert_eq!(ack.state.as_str(), "TASK_STATE_COMPLETED");
    // The set was fetched once and then cached.
    assert_eq!(h.jwks.fetches(), 1);
}

#[tokio::test]
async fn forged_or_confused_signatures_are_401() {
    let h = Harness::new();
    let only_rs = JwtAuth {
        algorithms: vec![JwtAlgorithm::RS256],
        ..JwtAuth::new(JWKS_URL)
    };
    let config = h.jwt_config(only_rs).await;
    let b = status_body("TASK_STATE_WORKING", None);
    let claims = claims_for(&b, h.now(), "j-1");
    // Signed by another key under the sender's kid.
    let forged = sign(&claims, &forger_key(), Algorithm::RS256, Some("rs-1"));
    assert_eq!(
        reason(h.post(&config, &bearer(&forged), &b).await),
        AuthFailure::BadSignature
    );
    // ES256 is not allowed on this subscription.
    let es = sign(&claims, &es256_key(), Algorithm::ES256, Some("ec-1"));
    assert_eq!(
        reason(h.post(&config, &bearer(&es), &b).await),
        AuthFailure::UnsupportedAlgorithm
    );
    // HMAC keyed with public material (alg confusion) and alg none.
    let hs = sign(
        &claims,
        &EncodingKey::from_secret(b"rs-1").unwrap(),
        Algorithm::HS256,
        Some("rs-1"),
    );
    assert_eq!(
        reason(h.post(&config, &bearer(&hs), &b).await),
        AuthFailure::UnsupportedAlgorithm
    );
    let parts: Vec<&str> = forged.split('.').collect();
    let none_header = "eyJhbGciOiJub25lIiwia2lkIjoicnMtMSJ9"; // {"alg":"none","kid":"rs-1"}
    let unsigned = format!("{none_header}.{}.", parts[1]);
    assert!(matches!(
        reason(h.post(&config, &bearer(&unsigned), &b).await),
        AuthFailure::MalformedJwt | AuthFailure::UnsupportedAlgorithm
    ));
    // A kid of the wrong key type.
    let rs_as_ec = sign(&claims, &rs256_key(), Algorithm::RS256, Some("ec-1"));
    assert_eq!(
        reason(h.post(&config, &bearer(&rs_as_ec), &b).await),
        AuthFailure::UnknownKey
    );
    // Garbage.
    assert_eq!(
        reason(h.post(&config, &bearer("a.b.c"), &b).await),
        AuthFailure::MalformedJwt
    );
    assert_eq!(
        reason(h.post(&config, &bearer("opaque"), &b).await),
        AuthFailure::MalformedJwt
    );
    assert!(
        h.receiver.task(THREAD, TASK).await.unwrap().is_none(),
        "nothing applied"
    );
}

#[tokio::test]
async fn stale_future_or_missing_iat_is_401() {
    let h = Harness::new();
    let config = h.jwt_config(JwtAuth::new(JWKS_URL)).await;
    let b = status_body("TASK_STATE_WORKING", None);
    let now_s = h.now() / 1000;
    let sha = sha256_hex(&b);
    for (n, iat) in [
        json!(now_s - 301),
        json!(now_s + 301),
        json!(null),
        json!("yesterday"),
    ]
    .into_iter()
    .enumerate()
    {
        let claims = json!({"iat": iat, "jti": format!("j-{n}"), "request_body_sha256": sha});
        let jwt = sign(&claims, &rs256_key(), Algorithm::RS256, Some("rs-1"));
        let got = reason(h.post(&config, &bearer(&jwt), &b).await);
        assert!(
            matches!(got, AuthFailure::StaleIat | AuthFailure::MalformedJwt),
            "iat {iat}: {got:?}"
        );
    }
    // Within the window either way.
    for (n, iat) in [now_s - 299, now_s + 299].into_iter().enumerate() {
        let claims = json!({"iat": iat, "jti": format!("ok-{n}"), "request_body_sha256": sha});
        let jwt = sign(&claims, &rs256_key(), Algorithm::RS256, Some("rs-1"));
        h.post(&config, &bearer(&jwt), &b).await.unwrap();
    }
    // exp and nbf are honoured when present.
    let claims = json!({"iat": now_s, "exp": now_s - 120, "jti": "e", "request_body_sha256": sha});
    let jwt = sign(&claims, &rs256_key(), Algorithm::RS256, Some("rs-1"));
    assert_eq!(
        reason(h.post(&config, &bearer(&jwt), &b).await),
        AuthFailure::Expired
    );
    let claims = json!({"iat": now_s, "nbf": now_s + 120, "jti": "n", "request_body_sha256": sha});
    let jwt = sign(&claims, &rs256_key(), Algorithm::RS256, Some("rs-1"));
    assert_eq!(
        reason(h.post(&config, &bearer(&jwt), &b).await),
        AuthFailure::Expired
    );
}

#[tokio::test]
async fn a_jti_is_single_use() {
    let h = Harness::new();
    let config = h.jwt_config(JwtAuth::new(JWKS_URL)).await;
    let first = status_body("TASK_STATE_WORKING", None);
    let jwt = rs256_jwt(&first, h.now(), "j-once");
    let ack = h.post(&config, &bearer(&jwt), &first).await.unwrap();
    // The same request again is a duplicate delivery: acknowledged, not reapplied.
    let again = h.post(&config, &bearer(&jwt), &first).await.unwrap();
    assert_eq!(
        again,
        handoff_a2a::Ack {
            duplicate: true,
            ..ack
        }
    );
    // The same jti on another body (another token minted with it) is a replay.
    let other = status_body("TASK_STATE_COMPLETED", None);
    let reused = rs256_jwt(&other, h.now(), "j-once");
    assert_eq!(
        reason(h.post(&config, &bearer(&reused), &other).await),
        AuthFailure::Replayed
    );
    assert_eq!(
        h.snapshot().await.task.status.state.as_str(),
        "TASK_STATE_WORKING"
    );
}

#[tokio::test]
async fn a_token_without_jti_is_single_use_too() {
    let h = Harness::new();
    let config = h.jwt_config(JwtAuth::new(JWKS_URL)).await;
    let b = status_body("TASK_STATE_WORKING", None);
    let claims = json!({"iat": h.now() / 1000, "request_body_sha256": sha256_hex(&b)});
    let jwt = sign(&claims, &rs256_key(), Algorithm::RS256, Some("rs-1"));
    h.post(&config, &bearer(&jwt), &b).await.unwrap();
    assert!(h.post(&config, &bearer(&jwt), &b).await.unwrap().duplicate);
}

#[tokio::test]
async fn the_body_hash_claim_binds_the_body() {
    let h = Harness::new();
    let config = h.jwt_config(JwtAuth::new(JWKS_URL)).await;
    let signed = status_body("TASK_STATE_WORKING", None);
    let jwt = rs256_jwt(&signed, h.now(), "j-1");
    let tampered = status_body("TASK_STATE_COMPLETED", None);
    assert_eq!(
        reason(h.post(&config, &bearer(&jwt), &tampered).await),
        AuthFailure::BodyHashMismatch
    );
    // Python senders hash json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    // and may post it pretty-printed: the compact form's digest is accepted.
    let pretty = format!(
        "{{\n  \"statusUpdate\": {{\"taskId\": \"{TASK}\", \"contextId\": \"ctx-1\",\n    \"status\": {{\"state\": \"working\", \"message\": {{\"messageId\": \"m\", \"role\": \"agent\", \"parts\": [{{\"text\": \"café\"}}]}}}}}}\n}}"
    );
    let compact = format!(
        "{{\"statusUpdate\":{{\"taskId\":\"{TASK}\",\"contextId\":\"ctx-1\",\"status\":{{\"state\":\"working\",\"message\":{{\"messageId\":\"m\",\"role\":\"agent\",\"parts\":[{{\"text\":\"café\"}}]}}}}}}}}"
    );
    let claims = json!({"iat": h.now() / 1000, "jti": "py-1", "request_body_sha256": sha256_hex(compact.as_bytes())});
    let jwt = sign(&claims, &rs256_key(), Algorithm::RS256, Some("rs-1"));
    h.post(&config, &bearer(&jwt), pretty.as_bytes())
        .await
        .unwrap();
}

#[tokio::test]
async fn the_body_hash_is_required_unless_waived() {
    let h = Harness::new();
    let strict = h.jwt_config(JwtAuth::new(JWKS_URL)).await;
    let lax = h
        .jwt_config(JwtAuth {
            require_body_hash: false,
            ..JwtAuth::new(JWKS_URL)
        })
        .await;
    let b = status_body("TASK_STATE_WORKING", None);
    let claims = json!({"iat": h.now() / 1000, "jti": "nohash"});
    let jwt = sign(&claims, &rs256_key(), Algorithm::RS256, Some("rs-1"));
    assert_eq!(
        reason(h.post(&strict, &bearer(&jwt), &b).await),
        AuthFailure::BodyHashMissing
    );
    h.post(&lax, &bearer(&jwt), &b).await.unwrap();
}

#[tokio::test]
async fn issuer_audience_and_task_claims_are_checked() {
    let h = Harness::new();
    let config = h
        .jwt_config(JwtAuth {
            issuer: Some("https://sender.example.com".into()),
            audience: Some("https://agents.example.com".into()),
            ..JwtAuth::new(JWKS_URL)
        })
        .await;
    let b = status_body("TASK_STATE_WORKING", None);
    let sha = sha256_hex(&b);
    let now_s = h.now() / 1000;
    let sign_rs = |claims| sign(&claims, &rs256_key(), Algorithm::RS256, Some("rs-1"));
    let cases = [
        json!({"iat": now_s, "jti": "1", "request_body_sha256": sha}),
        json!({"iat": now_s, "jti": "2", "request_body_sha256": sha, "iss": "https://evil.example.com", "aud": "https://agents.example.com"}),
        json!({"iat": now_s, "jti": "3", "request_body_sha256": sha, "iss": "https://sender.example.com", "aud": "https://other.example.com"}),
    ];
    for claims in cases {
        assert_eq!(
            reason(h.post(&config, &bearer(&sign_rs(claims.clone())), &b).await),
            AuthFailure::ClaimMismatch,
            "{claims}"
        );
    }
    let good = json!({"iat": now_s, "jti": "4", "request_body_sha256": sha, "iss": "https://sender.example.com", "aud": ["https://agents.example.com"], "taskId": TASK});
    h.post(&config, &bearer(&sign_rs(good)), &b).await.unwrap();
    let other_task = json!({"iat": now_s, "jti": "5", "request_body_sha256": sha, "iss": "https://sender.example.com", "aud": "https://agents.example.com", "taskId": "task-other"});
    let err = h
        .post(&config, &bearer(&sign_rs(other_task)), &b)
        .await
        .unwrap_err();
    assert_eq!(err, ReceiverError::TaskMismatch);
}
