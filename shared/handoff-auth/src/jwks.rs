//! Where signing keys come from: a host-provided [`JwksSource`] (the fetch is
//! I/O), a [`CachedJwks`] wrapper, and a fixed [`StaticJwks`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::lock::Mutex as AsyncMutex;
use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, KeyAlgorithm, PublicKeyUse};
pub use jsonwebtoken::jwk::{Jwk, JwkSet};

/// A key set could not be had: answered 503 (`AUTH_UNAVAILABLE`, `KEYS_UNAVAILABLE`) so
/// the caller retries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("key set unavailable: {0}")]
pub struct JwksError(pub String);

/// Reads a JWKS document (`{"keys": [...]}`).
pub fn parse_jwks(bytes: &[u8]) -> Result<JwkSet, JwksError> {
    serde_json::from_slice(bytes).map_err(|e| JwksError(format!("not a JWK set: {e}")))
}

/// Fetches the key set a sender publishes.
///
/// Hosts implement it with their HTTP client (`ureq`/`reqwest` natively,
/// `fetch` on Workers; [`HttpJwks`](crate::HttpJwks) over the host's outbound client) and must guard
/// against SSRF at connection time (the URL is checked at registration, but DNS can
/// still point anywhere): https only, no private, loopback or link-local addresses, a
/// short timeout, a size cap. Wrap it in [`CachedJwks`].
#[async_trait]
pub trait JwksSource: Send + Sync + 'static {
    /// The key set at `url`. `refresh` means the previous answer lacked the
    /// key the caller needs: bypass caches (a cache may still rate-limit).
    async fn key_set(
        &self,
        url: &str,
        now_ms: u64,
        refresh: bool,
    ) -> Result<Arc<JwkSet>, JwksError>;
}

#[async_trait]
impl<S: JwksSource + ?Sized> JwksSource for Arc<S> {
    async fn key_set(
        &self,
        url: &str,
        now_ms: u64,
        refresh: bool,
    ) -> Result<Arc<JwkSet>, JwksError> {
        (**self).key_set(url, now_ms, refresh).await
    }
}

/// Fixed key sets by URL (pinned keys, tests). Unknown URLs are an error.
#[derive(Debug, Default, Clone)]
pub struct StaticJwks {
    sets: HashMap<String, Arc<JwkSet>>,
}

impl StaticJwks {
    /// No key sets: every JWT is unverifiable (for hosts that do not accept JWTs).
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds the set published at `url`.
    pub fn with(mut self, url: impl Into<String>, set: JwkSet) -> Self {
        self.sets.insert(url.into(), Arc::new(set));
        self
    }
}

#[async_trait]
impl JwksSource for StaticJwks {
    async fn key_set(
        &self,
        url: &str,
        _now_ms: u64,
        _refresh: bool,
    ) -> Result<Arc<JwkSet>, JwksError> {
        self.sets
            .get(url)
            .cloned()
            .ok_or_else(|| JwksError(format!("no key set for {url}")))
    }
}

#[derive(Debug, Clone)]
struct Entry {
    set: Arc<JwkSet>,
    fetched_at_ms: u64,
}

/// What the cache knows of one URL.
#[derive(Default)]
struct Slot {
    /// The last key set fetched.
    entry: Option<Entry>,
    /// When the last fetch started, whatever came of it.
    attempted_at_ms: Option<u64>,
    /// Why the last fetch failed, if it did.
    failure: Option<JwksError>,
}

/// Caches key sets per URL.
///
/// A set is reused for `ttl_ms`. A `refresh` (unknown `kid`: the sender may have rotated
/// keys) refetches, but at most once per `min_refresh_ms`, so requests with made-up
/// `kid`s are answered from the cache instead of turning the server into a fetch
/// amplifier. At most one fetch per URL is in flight (callers meanwhile wait for its
/// outcome), and a failed fetch is not retried for `min_refresh_ms` either: meanwhile
/// callers get the last set if it is younger than `max_stale_ms`, else the failure, at once.
pub struct CachedJwks<S> {
    inner: S,
    ttl_ms: u64,
    min_refresh_ms: u64,
    max_stale_ms: u64,
    /// One slot per URL, each behind its own async lock: the holder decides, and fetches
    /// if it must, while the others wait for what it found.
    slots: Mutex<HashMap<String, Arc<AsyncMutex<Slot>>>>,
    fetches: AtomicU64,
}

impl<S> std::fmt::Debug for CachedJwks<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedJwks")
            .field("ttl_ms", &self.ttl_ms)
            .field("min_refresh_ms", &self.min_refresh_ms)
            .finish_non_exhaustive()
    }
}

impl<S: JwksSource> CachedJwks<S> {
    /// 10 min TTL, refresh at most once a minute, serve stale up to an hour.
    pub fn new(inner: S) -> Self {
        Self::with_timing(inner, 10 * 60_000, 60_000, 60 * 60_000)
    }

    /// Explicit timings (milliseconds).
    pub fn with_timing(inner: S, ttl_ms: u64, min_refresh_ms: u64, max_stale_ms: u64) -> Self {
        CachedJwks {
            inner,
            ttl_ms,
            min_refresh_ms,
            max_stale_ms,
            slots: Mutex::new(HashMap::new()),
            fetches: AtomicU64::new(0),
        }
    }

    fn slot(&self, url: &str) -> Arc<AsyncMutex<Slot>> {
        let mut slots = self
            .slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        slots.entry(url.to_owned()).or_default().clone()
    }

    /// The last set if young enough, else `failure` (or a generic one).
    fn stale_or(
        &self,
        slot: &Slot,
        now_ms: u64,
        failure: Option<JwksError>,
    ) -> Result<Arc<JwkSet>, JwksError> {
        match &slot.entry {
            Some(entry) if now_ms.saturating_sub(entry.fetched_at_ms) < self.max_stale_ms => {
                Ok(entry.set.clone())
            }
            _ => Err(failure.unwrap_or_else(|| {
                JwksError("the key set was fetched moments ago and lacks this key".to_owned())
            })),
        }
    }

    /// Fetches started so far (for tests and metrics).
    pub fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }
}

#[async_trait]
impl<S: JwksSource> JwksSource for CachedJwks<S> {
    async fn key_set(
        &self,
        url: &str,
        now_ms: u64,
        refresh: bool,
    ) -> Result<Arc<JwkSet>, JwksError> {
        let slot = self.slot(url);
        let mut slot = slot.lock().await;
        if let Some(entry) = &slot.entry {
            let age = now_ms.saturating_sub(entry.fetched_at_ms);
            if (!refresh && age < self.ttl_ms) || (refresh && age < self.min_refresh_ms) {
                return Ok(entry.set.clone());
            }
        }
        let recent = slot
            .attempted_at_ms
            .is_some_and(|at| now_ms.saturating_sub(at) < self.min_refresh_ms);
        if recent {
            // Backed off: the last fetch was moments ago (and failed, or lacks the kid).
            return self.stale_or(&slot, now_ms, slot.failure.clone());
        }
        self.fetches.fetch_add(1, Ordering::Relaxed);
        slot.attempted_at_ms = Some(now_ms);
        match self.inner.key_set(url, now_ms, refresh).await {
            Ok(set) => {
                slot.entry = Some(Entry {
                    set: set.clone(),
                    fetched_at_ms: now_ms,
                });
                slot.failure = None;
                Ok(set)
            }
            Err(err) => {
                slot.failure = Some(err.clone());
                let answer = self.stale_or(&slot, now_ms, Some(err.clone()));
                if answer.is_ok() {
                    tracing::warn!(%url, error = %err, "serving a stale key set");
                }
                answer
            }
        }
    }
}

/// The key of `set` that verifies a token signed with `alg`: the one named `kid`, or,
/// without a `kid`, the only one that fits. `None` when nothing fits.
pub(crate) fn select_key(set: &JwkSet, kid: Option<&str>, alg: Algorithm) -> Option<Jwk> {
    match kid {
        Some(kid) => set.find(kid).filter(|jwk| fits(jwk, alg)).cloned(),
        None => {
            let mut fitting = set.keys.iter().filter(|jwk| fits(jwk, alg));
            match (fitting.next(), fitting.next()) {
                (Some(only), None) => Some(only.clone()),
                _ => None,
            }
        }
    }
}

/// Whether a published key may verify `alg` (RS256, ES256 or EdDSA): the right key type
/// and curve, no conflicting `alg`, not an encryption key. Symmetric (`oct`) keys never
/// fit: a public key set must not become an HMAC secret.
fn fits(jwk: &Jwk, alg: Algorithm) -> bool {
    let type_fits = match (&jwk.algorithm, alg) {
        (AlgorithmParameters::RSA(_), Algorithm::RS256) => true,
        (AlgorithmParameters::EllipticCurve(ec), Algorithm::ES256) => {
            ec.curve == EllipticCurve::P256
        }
        (AlgorithmParameters::OctetKeyPair(okp), Algorithm::EdDSA) => {
            okp.curve == EllipticCurve::Ed25519
        }
        _ => false,
    };
    let alg_fits = jwk
        .common
        .key_algorithm
        .is_none_or(|a| a == KeyAlgorithm::from(alg));
    let use_fits = !matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption));
    type_fits && alg_fits && use_fits
}
