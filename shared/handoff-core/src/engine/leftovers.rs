//! A thread is alive or gone, never half.
//!
//! A thread's head expires `thread_ttl_ms` after its last activity; records written with
//! longer lifetimes (history pages, A2A task snapshots, effect records of its last run)
//! can outlive it. A run that finds no head starts a fresh thread, so whatever the old
//! one left is erased first: otherwise the new thread's first page would collide with the
//! old one (its finish failing `LEASE_LOST` on every retry), and old messages, task
//! snapshots or effect results would show through under the reused id.
//!
//! Every thread keeps a tiny marker (`mark`) that outlives its other records: written when
//! the thread is created, with the history's lifetime plus a margin, and renewed by a
//! finish whose new page it would not outlive and by every renewal of the pages (see
//! `renew`). The claim reads it in the same round trip as
//! the head, so it learns of leftovers for free; clearing happens only when the head is
//! gone and the marker is not, in batches that each check the head is still absent, so a
//! new head written by another instance in the meantime is never cleared away.

use super::Inner;
use crate::error::CoreError;
use crate::records::audit::is_audit_key;
use crate::records::{MARK_KEY, THREAD_KEY};
use crate::store::{Condition, StoreError, Write};

/// The marker's write: it outlives the history pages written (or renewed) now, by a margin
/// (a tenth of their lifetime, at most a day) so that a busy thread's finishes need not
/// all rewrite it: see [`mark_lasts`].
pub(crate) fn mark(inner: &Inner, now: u64) -> Write {
    Write::put(
        MARK_KEY,
        Condition::Always,
        b"{}".to_vec(),
        Some(mark_expiry(inner, now)),
    )
}

/// The marker's write by the claim that creates the thread: only if there is none, so a
/// claim that assumed an empty partition without reading it is refused when an old thread
/// left records (and then reads, and clears them).
pub(crate) fn first_mark(inner: &Inner, now: u64) -> Write {
    Write {
        condition: Condition::Absent,
        ..mark(inner, now)
    }
}

/// When a marker written at `now` expires.
pub(crate) fn mark_expiry(inner: &Inner, now: u64) -> u64 {
    let ttl = super::history::page_ttl(inner);
    now.saturating_add(ttl)
        .saturating_add((ttl / 10).min(DAY_MS))
}

/// Whether a marker that lasts until `mark_until` (0: none) outlives pages written at `now`,
/// so a finish need not write it again: a turn rewrites it at most once per margin.
pub(crate) fn mark_lasts(inner: &Inner, mark_until: u64, now: u64) -> bool {
    mark_until >= now.saturating_add(super::history::page_ttl(inner))
}

const DAY_MS: u64 = 24 * 60 * 60 * 1000;

/// Deletes per commit (with the head check, within every store's transaction limits).
const BATCH: usize = 64;

/// Erases every record of `partition` but its audit trail while it has no head. `Ok(false)` when a head
/// appeared meanwhile (the caller reads again).
pub(crate) async fn clear(inner: &Inner, partition: &str, now: u64) -> Result<bool, CoreError> {
    // The audit trail outlives the thread: a new thread on the id continues its chain.
    let keys: Vec<String> = inner
        .store
        .list(partition, "", now)
        .await?
        .into_iter()
        .filter(|key| !is_audit_key(key))
        .collect();
    tracing::info!(
        partition,
        records = keys.len(),
        "clearing an expired thread's leftovers"
    );
    for chunk in keys.chunks(BATCH) {
        let mut writes = vec![Write::check(THREAD_KEY, Condition::Absent)];
        writes.extend(
            chunk
                .iter()
                .filter(|key| key.as_str() != THREAD_KEY)
                .map(|key| Write::delete(key.as_str(), Condition::Always)),
        );
        match inner.store.commit(partition, writes, now).await {
            Ok(()) => {}
            Err(StoreError::ConditionFailed { index: 0 }) => return Ok(false),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(true)
}
