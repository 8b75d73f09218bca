//! Shared fixtures: a receiver on a memory store with a manual clock, fixed
//! RS256 / ES256 keys published as a JWKS, a counting key-set source, signers.

#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use handoff_a2a::a2a_types::AuthenticationInfo;
use handoff_a2a::{ExpectedAuth, JwtAuth, Receiver, ReceiverConfig, Registration, Subscription};
use handoff_auth::{CachedJwks, JwkSet, JwksError, JwksSource};
use handoff_core::Store;
use handoff_core::runtime::{ManualClock, NeverSleep, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Runtime, StoreError};
use http::{HeaderMap, HeaderValue};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

pub const T0: u64 = 1_795_000_000_000;
pub const JWKS_URL: &str = "https://sender.example.com/.well-known/jwks.json";
pub const TOKEN: &str = "tok-per-config-0b6c8f1e-7d";
pub const CREDENTIALS: &str = "cred-9d2f-4c1a-88e0-feed";
pub const THREAD: &str = "thread-1";
pub const TASK: &str = "task-7f3a";

pub fn rs256_key() -> EncodingKey {
    EncodingKey::from_rsa_pem(include_bytes!("../fixtures/keys/rs256.pem")).unwrap()
}
pub fn es256_key() -> EncodingKey {
    EncodingKey::from_ec_pem(include_bytes!("../fixtures/keys/es256.pem")).unwrap()
}
pub fn forger_key() -> EncodingKey {
    EncodingKey::from_rsa_pem(include_bytes!("../fixtures/keys/rs256-other.pem")).unwrap()
}

pub fn jwk(key: &EncodingKey, alg: Algorithm, kid: &str) -> Jwk {
    let mut jwk = Jwk::from_encoding_key(key, alg).unwrap();
    jwk.common.key_id = Some(kid.to_owned());
    jwk
}

/// The sender's published set: `rs-1` (RS256) and `ec-1` (ES256).
pub fn sender_jwks() -> JwkSet {
    JwkSet {
        keys: vec![
            jwk(&rs256_key(), Algorithm::RS256, "rs-1"),
            jwk(&es256_key(), Algorithm::ES256, "ec-1"),
        ],
    }
}

/// A key-set source whose answer can change (rotation) and that counts fetches.
#[derive(Default)]
pub struct CountingJwks {
    pub set: Mutex<Option<JwkSet>>,
    pub fetches: AtomicUsize,
    pub fail: std::sync::atomic::AtomicBool,
}

impl CountingJwks {
    pub fn new(set: JwkSet) -> Arc<Self> {
        Arc::new(CountingJwks {
            set: Mutex::new(Some(set)),
            ..Default::default()
        })
    }
    pub fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
    pub fn publish(&self, set: JwkSet) {
        *self.set.lock().unwrap() = Some(set);
    }
}

#[async_trait]
impl JwksSource for CountingJwks {
    async fn key_set(
        &self,
        url: &str,
        _now: u64,
        _refresh: bool,
    ) -> Result<Arc<JwkSet>, JwksError> {
        self.fetches.fetch_add(1, Ordering::SeqCst);
        if self.fail.load(Ordering::SeqCst) || url != JWKS_URL {
            return Err(JwksError("connection refused".into()));
        }
        Ok(Arc::new(self.set.lock().unwrap().clone().unwrap()))
    }
}

/// A store that fails the next `fail_next` commits (lost races) or is down.
pub struct FlakyStore {
    pub inner: MemoryStore,
    /// Real conflicts the memory store reported (lost compare-and-sets).
    pub conflicts: AtomicUsize,
    pub fail_next: AtomicUsize,
    pub down: std::sync::atomic::AtomicBool,
}

#[async_trait]
impl Store for FlakyStore {
    async fn get(
        &self,
        p: &str,
        k: &[&str],
        now: u64,
    ) -> Result<Vec<Option<handoff_core::Item>>, StoreError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(StoreError::Unavailable("throttled".into()));
        }
        let read = self.inner.get(p, k, now).await;
        // Give other requests a turn between this read and the caller's commit.
        tokio::task::yield_now().await;
        read
    }
    async fn commit(
        &self,
        p: &str,
        w: Vec<handoff_core::Write>,
        now: u64,
    ) -> Result<(), StoreError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(StoreError::Unavailable("throttled".into()));
        }
        if !p.starts_with("a2a-push#")
            && self
                .fail_next
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
        {
            return Err(StoreError::ConditionFailed { index: 0 });
        }
        let result = self.inner.commit(p, w, now).await;
        if matches!(result, Err(StoreError::ConditionFailed { .. })) {
            self.conflicts.fetch_add(1, Ordering::SeqCst);
        }
        result
    }
    async fn list(&self, p: &str, prefix: &str, now: u64) -> Result<Vec<String>, StoreError> {
        self.inner.list(p, prefix, now).await
    }
}

pub struct Harness {
    pub receiver: Receiver,
    pub store: Arc<FlakyStore>,
    pub clock: Arc<ManualClock>,
    pub jwks: Arc<CountingJwks>,
}

impl Harness {
    pub fn new() -> Self {
        Self::with_config(ReceiverConfig::default())
    }

    pub fn with_config(config: ReceiverConfig) -> Self {
        let store = Arc::new(FlakyStore {
            inner: MemoryStore::new(),
            conflicts: AtomicUsize::new(0),
            fail_next: AtomicUsize::new(0),
            down: Default::default(),
        });
        let clock = Arc::new(ManualClock::new(T0));
        let runtime = Runtime::new(clock.clone(), SequentialIds::new("x"), NeverSleep);
        let jwks = CountingJwks::new(sender_jwks());
        let cached = Arc::new(CachedJwks::new(jwks.clone()));
        let receiver = Receiver::new(store.clone(), runtime, cached, config);
        Harness {
            receiver,
            store,
            clock,
            jwks,
        }
    }

    pub fn now(&self) -> u64 {
        use handoff_core::Clock;
        self.clock.now_ms()
    }

    pub async fn register(&self, task: Option<&str>, auth: ExpectedAuth) -> Registration {
        self.receiver
            .register(Subscription {
                thread_id: THREAD.into(),
                task_id: task.map(str::to_owned),
                callback_base_url: "https://agents.example.com/".into(),
                auth,
                ttl_ms: None,
            })
            .await
            .unwrap()
    }

    /// A subscription for TASK that takes the token.
    pub async fn token_config(&self) -> String {
        self.register(Some(TASK), token_auth()).await.config_id
    }

    /// A subscription for TASK that takes sender-signed JWTs.
    pub async fn jwt_config(&self, jwt: JwtAuth) -> String {
        self.register(
            Some(TASK),
            ExpectedAuth {
                jwt: Some(jwt),
                ..Default::default()
            },
        )
        .await
        .config_id
    }

    pub async fn post(
        &self,
        config_id: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<handoff_a2a::Ack, handoff_a2a::ReceiverError> {
        self.receiver
            .handle(config_id, headers, body, self.now())
            .await
    }

    pub async fn snapshot(&self) -> handoff_a2a::TaskSnapshot {
        self.receiver
            .task(THREAD, TASK)
            .await
            .unwrap()
            .expect("snapshot")
    }
}

pub fn token_auth() -> ExpectedAuth {
    ExpectedAuth {
        token: Some(TOKEN.into()),
        ..Default::default()
    }
}

pub fn authorization_auth() -> ExpectedAuth {
    ExpectedAuth {
        authorization: Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: Some(CREDENTIALS.into()),
        }),
        ..Default::default()
    }
}

pub fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.append(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    map
}

pub fn token_headers() -> HeaderMap {
    headers(&[("X-A2A-Notification-Token", TOKEN)])
}

pub fn bearer(jwt: &str) -> HeaderMap {
    headers(&[("Authorization", &format!("Bearer {jwt}"))])
}

pub fn body(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap()
}

pub fn status_body(state: &str, timestamp: Option<&str>) -> Vec<u8> {
    let mut status = json!({"state": state});
    if let Some(ts) = timestamp {
        status["timestamp"] = json!(ts);
    }
    body(&json!({"statusUpdate": {"taskId": TASK, "contextId": "ctx-1", "status": status}}))
}

pub fn artifact_body(id: &str, text: &str, append: bool, last_chunk: bool) -> Vec<u8> {
    body(&json!({"artifactUpdate": {
        "taskId": TASK, "contextId": "ctx-1",
        "artifact": {"artifactId": id, "parts": [{"text": text}]},
        "append": append, "lastChunk": last_chunk
    }}))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Signs `claims` with `key` as `alg` / `kid`.
pub fn sign(claims: &Value, key: &EncodingKey, alg: Algorithm, kid: Option<&str>) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

/// Standard claims: `iat` = now, a fresh `jti`, the body's hash.
pub fn claims_for(body: &[u8], now_ms: u64, jti: &str) -> Value {
    json!({
        "iat": now_ms / 1000,
        "jti": jti,
        "request_body_sha256": sha256_hex(body),
    })
}

pub fn rs256_jwt(body: &[u8], now_ms: u64, jti: &str) -> String {
    sign(
        &claims_for(body, now_ms, jti),
        &rs256_key(),
        Algorithm::RS256,
        Some("rs-1"),
    )
}

/// Reads a fixture under the workspace's `tests/fixtures/a2a`.
pub fn fixture(path: &str) -> Vec<u8> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/a2a")
        .join(path);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The reason a push was refused, asserting it was the bare 401 every failure reads as.
pub fn reason(
    result: Result<handoff_a2a::Ack, handoff_a2a::ReceiverError>,
) -> handoff_a2a::AuthFailure {
    use handoff_core::codes::ErrorCode;
    let err = result.expect_err("must be rejected");
    assert_eq!(err.http_status(), 401, "{err:?}");
    assert_eq!(err.public_message(), "unauthorized");
    err.auth_failure().unwrap()
}
