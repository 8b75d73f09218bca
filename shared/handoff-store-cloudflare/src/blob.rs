//! Large values in KV: write-once, content-addressed, verified on read.
//!
//! A blob's key names its content and expiry (`blob/{sha256}/{expiry}`), so the
//! bytes under a key never change: a second put of the same key is an
//! idempotent rewrite, never a read-modify-write, and a reader that finds the
//! key finds exactly the bytes the referencing row was committed with.

use futures::future::try_join_all;
use handoff_core::StoreError;
use sha2::{Digest, Sha256};
use worker::kv::KvStore;

use crate::protocol::BlobRef;

/// KV values may not exceed 25 MiB.
pub(crate) const KV_VALUE_LIMIT: usize = 25 << 20;

/// Blobs outlive the rows that reference them by this much, so a row read just
/// before it expires still finds its bytes.
const EXPIRY_MARGIN_SECS: u64 = 3_600;

/// KV refuses expirations less than 60 s ahead.
const MIN_EXPIRY_AHEAD_SECS: u64 = 120;

/// How long a reader waits for a blob written elsewhere to become visible here
/// (KV propagates between locations eventually), in milliseconds per attempt.
const READ_RETRY_DELAYS_MS: [u64; 4] = [50, 200, 800, 2_000];

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The reference a put of `bytes` expiring at `expires_at_ms` will be stored under.
pub(crate) fn reference(bytes: &[u8], expires_at_ms: Option<u64>) -> BlobRef {
    let sha256 = sha256_hex(bytes);
    let expiry = expires_at_ms.map_or_else(|| "none".to_owned(), |at| at.to_string());
    BlobRef {
        kv_key: format!("blob/{sha256}/{expiry}"),
        sha256,
        len: bytes.len() as u64,
    }
}

/// Writes every blob (concurrently); all must land before the commit that references them.
pub(crate) async fn put_all(
    kv: &KvStore,
    blobs: Vec<(BlobRef, Vec<u8>, Option<u64>)>,
    now_ms: u64,
) -> Result<(), StoreError> {
    try_join_all(
        blobs
            .into_iter()
            .map(|(reference, bytes, expires_at_ms)| async move {
                let mut put = kv.put_bytes(&reference.kv_key, &bytes).map_err(|e| {
                    StoreError::Backend(format!("kv put {}: {e}", reference.kv_key))
                })?;
                if let Some(at) = expires_at_ms {
                    let floor = now_ms / 1_000 + MIN_EXPIRY_AHEAD_SECS;
                    put = put.expiration((at / 1_000 + EXPIRY_MARGIN_SECS).max(floor));
                }
                match put.execute().await {
                    Ok(()) => Ok(()),
                    // KV allows one write per second per key: a rewrite of the same
                    // content can be refused, which is fine if the bytes are there.
                    Err(err) => match read_once(kv, &reference).await {
                        Ok(Some(_)) => Ok(()),
                        _ => Err(StoreError::Unavailable(format!(
                            "kv put {}: {err}",
                            reference.kv_key
                        ))),
                    },
                }
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
