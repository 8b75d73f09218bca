//! The store from the Worker's bindings: one Durable Object per partition, large values in KV.

use handoff_store_cloudflare::DurableStore;
use worker::Env;

/// Durable Object namespace binding (class `PartitionObject`).
pub const PARTITIONS: &str = "PARTITIONS";
/// KV namespace binding for large values.
pub const BLOBS: &str = "BLOBS";

/// The store from the bindings, with the inline limit from `HANDOFF_INLINE_LIMIT` (values
/// above it go to KV; default 32 KiB).
pub fn from_env(env: &Env) -> worker::Result<DurableStore> {
    let store = DurableStore::from_env(env, PARTITIONS, Some(BLOBS))?;
    Ok(
        match crate::var(env, "HANDOFF_INLINE_LIMIT").and_then(|v| v.parse().ok()) {
            Some(limit) => store.with_inline_limit(limit),
            None => store,
        },
    )
}
