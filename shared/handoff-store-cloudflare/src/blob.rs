//! Large values in KV: write-once, one key per written value, verified on read.
//!
//! A blob's key names the partition it belongs to and a random id
//! (`blob/p/{scope}/{id}`), so every key is written once, by one commit
//! attempt, and referenced by at most the one row that commit wrote: its
//! partition's object can delete it once that row is replaced, deleted or
//! purged (or the commit failed) without ever racing another writer of the
//! same key. The reference carries the SHA-256 of the bytes, checked on every read.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::try_join_all;
use handoff_core::StoreError;
use sha2::{Digest, Sha256};
use worker::kv::KvStore;

use crate::protocol::{BlobRef, PARTITION_BLOB_PREFIX};

/// KV values may not exceed 25 MiB.
pub(crate) const KV_VALUE_LIMIT: usize = 25 << 20;

/// Blobs outlive the rows that reference them by this much, so a row read just
/// before it expires still finds its bytes.
const EXPIRY_MARGIN_SECS: u64 = 3_600;

/// KV refuses expirations less than 60 s ahead.
const MIN_EXPIRY_AHEAD_SECS: u64 = 120;

/// The latest expiration KV takes: a signed 32-bit count of seconds (January 2038).
const KV_MAX_EXPIRATION_SECS: u64 = i32::MAX as u64;

/// The KV expiration (Unix seconds) of a blob whose row expires at `expires_at_ms`: a
/// backstop an hour past the row's, at least [`MIN_EXPIRY_AHEAD_SECS`] ahead. None for a
/// row that never expires, or one past what KV can express (an audit entry's century):
/// the partition's own collection deletes that blob when its row goes.
fn kv_expiration(expires_at_ms: Option<u64>, now_ms: u64) -> Option<u64> {
    let floor = now_ms / 1_000 + MIN_EXPIRY_AHEAD_SECS;
    let expiration = (expires_at_ms? / 1_000)
        .saturating_add(EXPIRY_MARGIN_SECS)
        .max(floor);
    (expiration <= KV_MAX_EXPIRATION_SECS).then_some(expiration)
}

/// How long a reader waits for a blob written elsewhere to become visible here
/// (KV propagates between locations eventually), in milliseconds per attempt.
const READ_RETRY_DELAYS_MS: [u64; 4] = [50, 200, 800, 2_000];

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The KV key prefix of `partition`'s blobs: `blob/p/{first 128 bits of sha256(partition)}/`.
pub(crate) fn partition_prefix(partition: &str) -> String {
    let digest = Sha256::digest(partition.as_bytes());
    format!("{PARTITION_BLOB_PREFIX}{}/", hex(&digest[..16]))
}

/// A fresh reference for `bytes` written by a commit of `partition`.
pub(crate) fn reference(partition: &str, bytes: &[u8]) -> Result<BlobRef, StoreError> {
    // Unique keys are what make deleting safe: without randomness, refuse
    // rather than risk reusing another commit's key (getRandomValues does not
    // fail in workerd).
    let mut id = [0u8; 16];
    getrandom::fill(&mut id).map_err(|e| StoreError::Backend(format!("blob id: {e}")))?;
    Ok(BlobRef {
        kv_key: format!("{}{}", partition_prefix(partition), hex(&id)),
        sha256: sha256_hex(bytes),
        len: bytes.len() as u64,
    })
}

/// KV operations a [`crate::DurableStore`] (and its clones) made.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    puts: AtomicU64,
    put_bytes: AtomicU64,
    releases: AtomicU64,
}

impl Counters {
    pub(crate) fn released(&self) {
        self.releases.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> BlobStats {
        BlobStats {
            kv_puts: self.puts.load(Ordering::Relaxed),
            kv_put_bytes: self.put_bytes.load(Ordering::Relaxed),
            releases: self.releases.load(Ordering::Relaxed),
        }
    }
}

/// What a [`crate::DurableStore`] and its clones wrote to KV, for cost
/// measurements (`DurableStore::blob_stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlobStats {
    /// KV puts attempted (each large value of a commit is one).
    pub kv_puts: u64,
    /// Bytes of those puts.
    pub kv_put_bytes: u64,
    /// Commits whose blobs were handed back to the object as unreferenced
    /// (the put or the call to the object failed).
    pub releases: u64,
}

/// Writes every blob (concurrently); all must land before the commit that references them.
pub(crate) async fn put_all(
    kv: &KvStore,
    blobs: Vec<(BlobRef, Vec<u8>, Option<u64>)>,
    now_ms: u64,
    counters: &Arc<Counters>,
) -> Result<(), StoreError> {
    try_join_all(
        blobs
            .into_iter()
            .map(|(reference, bytes, expires_at_ms)| async move {
                counters.puts.fetch_add(1, Ordering::Relaxed);
                counters
                    .put_bytes
                    .fetch_add(bytes.len() as u64, Ordering::Relaxed);
                let mut put = kv.put_bytes(&reference.kv_key, &bytes).map_err(|e| {
                    StoreError::Backend(format!("kv put {}: {e}", reference.kv_key))
                })?;
                if let Some(expiration) = kv_expiration(expires_at_ms, now_ms) {
                    put = put.expiration(expiration);
                }
                // The key is this commit attempt's alone (a retried commit writes new
                // keys); whatever a failed put may have left is released by the caller.
                put.execute().await.map_err(|err| {
                    StoreError::Unavailable(format!("kv put {}: {err}", reference.kv_key))
                })
            }),
    )
    .await
    .map(drop)
}

/// Reads a blob, waiting a bounded time for it to propagate to this location.
pub(crate) async fn read(kv: &KvStore, reference: &BlobRef) -> Result<Vec<u8>, StoreError> {
    for delay_ms in READ_RETRY_DELAYS_MS {
        if let Some(bytes) = read_once(kv, reference).await? {
            return Ok(bytes);
        }
        worker::Delay::from(std::time::Duration::from_millis(delay_ms)).await;
    }
    match read_once(kv, reference).await? {
        Some(bytes) => Ok(bytes),
        None => Err(StoreError::Unavailable(format!(
            "blob {} is referenced but not yet visible in KV here",
            reference.kv_key
        ))),
    }
}

async fn read_once(kv: &KvStore, reference: &BlobRef) -> Result<Option<Vec<u8>>, StoreError> {
    let bytes = kv
        .get(&reference.kv_key)
        .bytes()
        .await
        .map_err(|e| StoreError::Unavailable(format!("kv get {}: {e}", reference.kv_key)))?;
    match bytes {
        Some(bytes) if sha256_hex(&bytes) == reference.sha256 => Ok(Some(bytes)),
        Some(_) => Err(StoreError::Backend(format!(
            "blob {} does not match its hash",
            reference.kv_key
        ))),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::is_collectable;

    #[test]
    fn kv_gets_an_expiration_only_within_its_range() {
        let now_ms = 1_796_000_000_000;
        assert_eq!(kv_expiration(None, now_ms), None);
        // An hour past the row, and never less than the floor ahead of now.
        assert_eq!(
            kv_expiration(Some(now_ms + 86_400_000), now_ms),
            Some(now_ms / 1_000 + 86_400 + 3_600)
        );
        assert_eq!(
            kv_expiration(Some(now_ms), now_ms),
            Some(now_ms / 1_000 + 3_600)
        );
        assert_eq!(
            kv_expiration(Some(now_ms - 10_000_000), now_ms),
            Some(now_ms / 1_000 + MIN_EXPIRY_AHEAD_SECS)
        );
        // Past January 2038 KV refuses the put ("Value out of range"): no backstop then.
        let century = now_ms + 100 * 365 * 86_400_000;
        assert_eq!(kv_expiration(Some(century), now_ms), None);
        assert_eq!(kv_expiration(Some(u64::MAX), now_ms), None);
        let last = (i32::MAX as u64 - 3_600) * 1_000;
        assert_eq!(kv_expiration(Some(last), now_ms), Some(i32::MAX as u64));
    }

    #[test]
    fn references_are_unique_per_put_and_scoped_to_their_partition() {
        let a = reference("thread-1", b"same bytes").unwrap();
        let b = reference("thread-1", b"same bytes").unwrap();
        let other = reference("thread-2", b"same bytes").unwrap();
        assert_ne!(
            a.kv_key, b.kv_key,
            "the same bytes written twice get two keys"
        );
        assert_eq!(a.sha256, b.sha256);
        assert_eq!(a.len, 10);
        let prefix = partition_prefix("thread-1");
        assert!(a.kv_key.starts_with(&prefix) && b.kv_key.starts_with(&prefix));
        assert!(!other.kv_key.starts_with(&prefix));
        assert_eq!(prefix.len(), "blob/p/".len() + 32 + 1);
        assert_eq!(a.kv_key.len(), prefix.len() + 32);
        assert!(a.is_collectable() && is_collectable(&other.kv_key));
        // Content-addressed keys from before may be shared by several partitions.
        assert!(!is_collectable(&format!("blob/{}/none", a.sha256)));
    }
}
