//! The sender's key sets behind JWT authentication: refreshes for unknown keys, the
//! cache, unreachable sets (503, not 401), registration, concurrent misses.

mod common;

use std::sync::Arc;

use common::*;
use handoff_a2a::{AuthFailure, ExpectedAuth, JwtAuth};
use handoff_auth::JwkSet;
use handoff_core::Store;
use handoff_core::codes::ErrorCode;
use jsonwebtoken::Algorithm;

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
    use handoff_auth::{CachedJwks, JwksSource};
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
impl handoff_auth::JwksSource for SlowJwks {
    async fn key_set(
        &self,
        _url: &str,
        _now: u64,
        _refresh: bool,
    ) -> Result<Arc<JwkSet>, handoff_auth::JwksError> {
        self.fetches
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let _open = self.gate.lock().await;
        if self.fail.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(handoff_auth::JwksError(
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
    use handoff_auth::{CachedJwks, JwksSource};
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
