//! Authentication: token headers, `Authorization`, sender-signed JWTs, and the
//! rule that every failure is the same bare 401.

mod common;

use std::sync::Arc;

use common::*;
use handoff_a2a::{AuthFailure, ExpectedAuth, JwkSet, JwtAlgorithm, JwtAuth, ReceiverError};
use handoff_core::Store;
use handoff_core::codes::ErrorCode;
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::json;

fn reason(result: Result<handoff_a2a::Ack, ReceiverError>) -> AuthFailure {
    let err = result.expect_err("must be rejected");
    assert_eq!(err.http_status(), 401, "{err:?}");
    assert_eq!(err.public_message(), "unauthorized");
    err.auth_failure().unwrap()
}

#[tokio::test]
async fn token_is_read_in_both_spellings() {
    let h = Harness::new();
    let config = h.token_config().await;
    let b = status_body("TASK_STATE_WORKING", None);
    for name in [
        "X-A2A-Notification-Token",
        "A2A-Notification-Token",
        "a2a-notification-token",
    ] {
        let ack = h
            .post(&config, &headers(&[(name, TOKEN)]), &b)
            .await
            .unwrap();
        assert_eq!(ack.task_id, TASK, "{name}");
    }
    let both = headers(&[
        ("X-A2A-Notification-Token", TOKEN),
        ("A2A-Notification-Token", TOKEN),
    ]);
    h.post(&config, &both, &status_body("TASK_STATE_COMPLETED", None))
        .await
        .unwrap();
}

#[tokio::test]
async fn forged_missing_or_conflicting_tokens_are_401() {
    let h = Harness::new();
    let config = h.token_config().await;
    let b = status_body("TASK_STATE_WORKING", None);
    let forged = headers(&[("X-A2A-Notification-Token", "tok-per-config-0b6c8f1e-7e")]);
    assert_eq!(
        reason(h.post(&config, &forged, &b).await),
        AuthFailure::BadToken
    );
    assert_eq!(
        reason(h.post(&config, &headers(&[]), &b).await),
        AuthFailure::MissingCredentials
    );
    let conflicting = headers(&[
        ("X-A2A-Notification-Token", TOKEN),
        ("A2A-Notification-Token", "something-else-entirely"),
    ]);
    assert_eq!(
        reason(h.post(&config, &conflicting, &b).await),
        AuthFailure::BadToken
    );
    let repeated = headers(&[
        ("X-A2A-Notification-Token", TOKEN),
        ("X-A2A-Notification-Token", TOKEN),
    ]);
    assert_eq!(
        reason(h.post(&config, &repeated, &b).await),
        AuthFailure::BadToken
    );
    // A right token does not outweigh a wrong Authorization when both are configured.
    let config = h
        .register(
            Some(TASK),
            ExpectedAuth {
                token: Some(TOKEN.into()),
                ..authorization_auth()
            },
        )
        .await
        .config_id;
    let mixed = headers(&[
        ("X-A2A-Notification-Token", TOKEN),
        ("Authorization", "Bearer nope"),
    ]);
    assert_eq!(
        reason(h.post(&config, &mixed, &b).await),
        AuthFailure::BadAuthorization
    );
    h.post(&config, &token_headers(), &b).await.unwrap();
    assert!(h.snapshot().await.applied >= 1);
}

#[tokio::test]
async fn authorization_scheme_is_case_insensitive_credentials_are_not() {
    let h = Harness::new();
    let config = h.register(Some(TASK), authorization_auth()).await.config_id;
    let b = status_body("TASK_STATE_WORKING", None);
    for header in [
        format!("Bearer {CREDENTIALS}"),
        format!("bearer   {CREDENTIALS}"),
    ] {
        h.post(&config, &headers(&[("Authorization", &header)]), &b)
            .await
            .unwrap();
    }
    for header in [
        format!("Basic {CREDENTIALS}"),
        format!("Bearer {}", CREDENTIALS.to_uppercase()),
        "Bearer".to_owned(),
    ] {
        assert_eq!(
            reason(
                h.post(&config, &headers(&[("Authorization", &header)]), &b)
                    .await
            ),
            AuthFailure::BadAuthorization,
            "{header}"
        );
    }
}

#[tokio::test]
async fn require_all_needs_every_method() {
    let h = Harness::new();
    let config = h
        .register(
            Some(TASK),
            ExpectedAuth {
                token: Some(TOKEN.into()),
                require_all: true,
                ..authorization_auth()
            },
        )
        .await
        .config_id;
    let b = status_body("TASK_STATE_WORKING", None);
    assert_eq!(
        reason(h.post(&config, &token_headers(), &b).await),
        AuthFailure::MissingCredentials
    );
    let both = headers(&[
        ("X-A2A-Notification-Token", TOKEN),
        ("Authorization", &format!("Bearer {CREDENTIALS}")),
    ]);
    h.post(&config, &both, &b).await.unwrap();
}

#[tokio::test]
async fn unknown_expired_and_revoked_subscriptions_look_like_bad_credentials() {
    let h = Harness::new();
    let config = h.token_config().await;
    let b = status_body("TASK_STATE_WORKING", None);
    let bad_token = h
        .post(
            &config,
            &headers(&[("X-A2A-Notification-Token", "x".repeat(26).as_str())]),
            &b,
        )
        .await
        .unwrap_err();
    for id in ["a2apush-nope", "../../etc", "", &"x".repeat(500)] {
        let unknown = h.post(id, &token_headers(), &b).await.unwrap_err();
        assert_eq!(unknown.auth_failure(), Some(AuthFailure::UnknownConfig));
        assert_eq!(
            (
                unknown.http_status(),
                unknown.code().name,
                unknown.public_message()
            ),
            (
                bad_token.http_status(),
                bad_token.code().name,
                bad_token.public_message()
            )
        );
    }
    h.receiver.revoke(&config).await.unwrap();
    assert_eq!(
        reason(h.post(&config, &token_headers(), &b).await),
        AuthFailure::UnknownConfig
    );
    let config = h.token_config().await;
    h.clock
        .advance(h.receiver.config().default_subscription_ttl_ms);
    assert_eq!(
        reason(h.post(&config, &token_headers(), &b).await),
        AuthFailure::UnknownConfig
    );
}

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

#[tokio::test]
async fn unknown_kids_refresh_the_set_at_most_once_a_minute_and_find_rotated_keys() {
    let h = Harness::new();
    let config = h.jwt_config(JwtAuth::new(JWKS_URL)).await;
    let b = status_body("TASK_STATE_WORKING", None);
    h.post(&config, &bearer(&rs256_jwt(&b, h.now(), "j-1")), &b)
        .await
        .unwrap();
    assert_eq!(h.jwks.fetches(), 1);
    // Made-up kids: one refetch, then the cache answers until a minute has passed.
    h.clock.advance(61_000);
    for n in 0..3 {
        let claims = claims_for(&b, h.now(), &format!("x-{n}"));
        let stranger = sign(&claims, &forger_key(), Algorithm::RS256, Some("rs-9"));
        assert_eq!(
            reason(h.post(&config, &bearer(&stranger), &b).await),
            AuthFailure::UnknownKey
        );
    }
    assert_eq!(h.jwks.fetches(), 2);
    // The sender rotates keys: found by the next allowed refresh.
    let mut rotated = sender_jwks();
    rotated
        .keys
        .push(jwk(&forger_key(), Algorithm::RS256, "rs-2"));
    h.jwks.publish(rotated);
    h.clock.advance(61_000);
    let b2 = status_body("TASK_STATE_COMPLETED", None);
    let rotated_jwt = sign(
        &claims_for(&b2, h.now(), "j-3"),
        &forger_key(),
        Algorithm::RS256,
        Some("rs-2"),
    );
    h.post(&config, &bearer(&rotated_jwt), &b2).await.unwrap();
    assert_eq!(h.jwks.fetches(), 3);
}

#[tokio::test]
async fn the_cache_rate_limits_refreshes_and_serves_stale_keys() {
    use handoff_a2a::{CachedJwks, JwksSource};
    let source = CountingJwks::new(sender_jwks());
    let cache = CachedJwks::with_timing(source.clone(), 10_000, 1_000, 60_000);
    let url = JWKS_URL;
    cache.key_set(url, 0, false).await.unwrap();
    cache.key_set(url, 5_000, false).await.unwrap();
    assert_eq!(source.fetches(), 1, "fresh: cached");
    cache.key_set(url, 5_000, true).await.unwrap();
    assert_eq!(source.fetches(), 2, "refresh refetches");
    cache.key_set(url, 5_500, true).await.unwrap();
    assert_eq!(
        source.fetches(),
        2,
        "a second refresh within min_refresh is served from cache"
    );
    cache.key_set(url, 20_000, false).await.unwrap();
    assert_eq!(source.fetches(), 3, "expired: refetched");
    source.fail.store(true, std::sync::atomic::Ordering::SeqCst);
    cache.key_set(url, 40_000, false).await.unwrap();
    assert!(
        cache.key_set(url, 90_000, false).await.is_err(),
        "too stale"
    );
    let empty = CachedJwks::new(CountingJwks::new(JwkSet { keys: vec![] }));
    assert!(
        empty
            .key_set("https://unknown.example.com/jwks", 0, false)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn unreachable_keys_are_503_not_401() {
    let h = Harness::new();
    let config = h.jwt_config(JwtAuth::new(JWKS_URL)).await;
    h.jwks.fail.store(true, std::sync::atomic::Ordering::SeqCst);
    let b = status_body("TASK_STATE_WORKING", None);
    let err = h
        .post(&config, &bearer(&rs256_jwt(&b, h.now(), "j")), &b)
        .await
        .unwrap_err();
    assert_eq!(err.http_status(), 503);
    assert!(err.retryable());
}

#[tokio::test]
async fn registration_refuses_weak_or_unsafe_subscriptions() {
    let h = Harness::new();
    let sub = |auth: ExpectedAuth| handoff_a2a::Subscription {
        thread_id: THREAD.into(),
        task_id: Some(TASK.into()),
        callback_base_url: "https://agents.example.com".into(),
        auth,
        ttl_ms: None,
    };
    let bad = [
        ExpectedAuth::default(),
        ExpectedAuth {
            token: Some("short".into()),
            ..Default::default()
        },
        ExpectedAuth {
            jwt: Some(JwtAuth::new("http://169.254.169.254/latest/meta-data")),
            ..Default::default()
        },
        ExpectedAuth {
            jwt: Some(JwtAuth {
                algorithms: vec![],
                ..JwtAuth::new(JWKS_URL)
            }),
            ..Default::default()
        },
        ExpectedAuth {
            jwt: Some(JwtAuth::new(JWKS_URL)),
            require_all: true,
            ..authorization_auth()
        },
    ];
    for auth in bad {
        let err = h.receiver.register(sub(auth.clone())).await.unwrap_err();
        assert_eq!(err.code().name, "INVALID_SUBSCRIPTION", "{auth:?}");
    }
    let registration = h.register(Some(TASK), token_auth()).await;
    let record = h
        .receiver
        .subscription(&registration.config_id, h.now())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        record.token_sha256.as_deref(),
        Some(sha256_hex(TOKEN.as_bytes()).as_str())
    );
    let partition = format!("a2a-push#{}", registration.config_id);
    let stored = h
        .store
        .inner
        .get(&partition, &["config"], h.now())
        .await
        .unwrap();
    let stored = String::from_utf8(stored[0].clone().unwrap().value).unwrap();
    assert!(!stored.contains(TOKEN), "tokens are stored hashed");
    assert_eq!(
        registration.push_config.url,
        format!(
            "https://agents.example.com/a2a/push/{}",
            registration.config_id
        )
    );
    assert_eq!(registration.push_config.token.as_deref(), Some(TOKEN));
}

/// A key-set endpoint that answers only when the test says so, counting requests.
struct SlowJwks {
    fetches: std::sync::atomic::AtomicUsize,
    gate: futures::lock::Mutex<()>,
    fail: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl handoff_a2a::JwksSource for SlowJwks {
    async fn key_set(
        &self,
        _url: &str,
        _now: u64,
        _refresh: bool,
    ) -> Result<Arc<JwkSet>, handoff_a2a::JwksError> {
        self.fetches
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let _open = self.gate.lock().await;
        if self.fail.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(handoff_a2a::JwksError(
                "the identity provider is down".into(),
            ));
        }
        Ok(Arc::new(sender_jwks()))
    }
}

/// Before, every request with an unknown `kid` fetched the key set while the provider
/// failed, and concurrent misses each fetched: a fetch amplifier.
#[tokio::test]
async fn concurrent_misses_share_one_fetch_and_failures_back_off() {
    use handoff_a2a::{CachedJwks, JwksSource};
    let source = Arc::new(SlowJwks {
        fetches: Default::default(),
        gate: futures::lock::Mutex::new(()),
        fail: std::sync::atomic::AtomicBool::new(true),
    });
    let cache = CachedJwks::with_timing(source.clone(), 10_000, 1_000, 60_000);
    let held = source.gate.lock().await;
    let callers =
        futures::future::join_all((0..20).map(|i| cache.key_set(JWKS_URL, 0, i % 2 == 0)));
    let released = async {
        tokio::task::yield_now().await;
        drop(held);
    };
    let (answers, ()) = futures::join!(callers, released);
    assert_eq!(
        source.fetches.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "one fetch for 20 misses"
    );
    assert!(answers.iter().all(Result::is_err));

    // Within min_refresh of the failure: answered at once, no fetch.
    for i in 0..50 {
        assert!(cache.key_set(JWKS_URL, 500, i % 2 == 0).await.is_err());
    }
    assert_eq!(source.fetches.load(std::sync::atomic::Ordering::SeqCst), 1);

    // After it, one retry; then the set is cached and made-up kids are served from it.
    source
        .fail
        .store(false, std::sync::atomic::Ordering::SeqCst);
    cache.key_set(JWKS_URL, 1_500, true).await.unwrap();
    for _ in 0..50 {
        cache.key_set(JWKS_URL, 1_600, true).await.unwrap();
    }
    assert_eq!(source.fetches.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert_eq!(cache.fetches(), 2);
}
