//! Collecting the partition's KV blobs once no row references them (see the crate docs,
//! "Blob lifecycle").

use futures::future::join_all;
use worker::kv::KvStore;
use worker::{Result, SqlStorage, SqlStorageValue};

use super::{as_u64, int, min_of_with, object_now};
use crate::protocol::is_collectable;

/// Whether a row references the blob `?` (uses the `items_blob_key` index).
const REFERENCED: &str =
    "SELECT COUNT(*) FROM items WHERE blob IS NOT NULL AND json_extract(blob, '$.kvKey') = ?";

/// KV deletes per alarm run (the rest wait for the next run, scheduled at once),
/// issued this many at a time.
const GC_BATCH: usize = 100;
const GC_CONCURRENCY: usize = 10;

/// A failed KV delete is retried after 2^attempts seconds (at most an hour),
/// and given up after this many attempts (the blob then expires with its KV
/// expiration, if it has one).
const GC_MAX_ATTEMPTS: u32 = 20;
const GC_MAX_BACKOFF_MS: u64 = 3_600_000;

/// Records blobs as due for deletion at `due` (a blob already recorded keeps its time).
pub(super) fn retire<'a>(
    sql: &SqlStorage,
    keys: impl IntoIterator<Item = &'a str>,
    due: u64,
) -> Result<()> {
    for key in keys.into_iter().filter(|k| is_collectable(k)) {
        sql.exec(
            "INSERT OR IGNORE INTO blob_gc (kv_key, due_at) VALUES (?, ?)",
            vec![SqlStorageValue::from(key), int(due)],
        )?;
    }
    Ok(())
}

pub(super) fn referenced(sql: &SqlStorage, kv_key: &str) -> Result<bool> {
    Ok(min_of_with(sql, REFERENCED, vec![SqlStorageValue::from(kv_key)])?.is_some_and(|n| n > 0))
}

/// Deletes the blobs due by `now` from KV: those a row references again are
/// dropped from the list instead; a failed delete is retried later.
pub(super) async fn collect_due(sql: &SqlStorage, kv: &KvStore, now: u64) -> Result<()> {
    let mut due = Vec::new();
    for row in sql
        .exec(
            "SELECT kv_key, attempts FROM blob_gc WHERE due_at <= ? ORDER BY due_at LIMIT ?",
            vec![int(now), int(GC_BATCH as u64)],
        )?
        .raw()
    {
        let mut columns = row?.into_iter();
        if let (Some(SqlStorageValue::String(key)), attempts) = (columns.next(), columns.next()) {
            let attempts = attempts.and_then(as_u64).unwrap_or(0);
            due.push((key, u32::try_from(attempts).unwrap_or(u32::MAX)));
        }
    }
    for chunk in due.chunks(GC_CONCURRENCY) {
        // Checked right before the deletes: other requests run while earlier chunks await KV.
        let mut doomed = Vec::with_capacity(chunk.len());
        for entry @ (key, _) in chunk {
            if referenced(sql, key)? {
                forget(sql, key)?;
            } else {
                doomed.push(entry);
            }
        }
        let outcomes = join_all(doomed.iter().map(|(key, _)| kv.delete(key))).await;
        for ((key, attempts), outcome) in doomed.into_iter().zip(outcomes) {
            match outcome {
                Ok(()) => forget(sql, key)?,
                Err(err) if attempts + 1 >= GC_MAX_ATTEMPTS => {
                    worker::console_error!("handoff: giving up deleting blob {key}: {err}");
                    forget(sql, key)?;
                }
                Err(err) => {
                    worker::console_warn!("handoff: deleting blob {key} failed, will retry: {err}");
                    let backoff = (1_000u64 << (*attempts).min(22)).min(GC_MAX_BACKOFF_MS);
                    sql.exec(
                        "UPDATE blob_gc SET attempts = attempts + 1, due_at = ? WHERE kv_key = ?",
                        vec![
                            int(object_now() + backoff),
                            SqlStorageValue::from(key.as_str()),
                        ],
                    )?;
                }
            }
        }
    }
    Ok(())
}

fn forget(sql: &SqlStorage, kv_key: &str) -> Result<()> {
    sql.exec(
        "DELETE FROM blob_gc WHERE kv_key = ?",
        vec![SqlStorageValue::from(kv_key)],
    )?;
    Ok(())
}
