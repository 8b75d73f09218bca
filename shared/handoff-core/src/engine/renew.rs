//! A thread's history pages live as long as its head.
//!
//! Every finish writes the head with `now + thread_ttl_ms`, so activity keeps it alive;
//! a page is written once, to expire `history::page_ttl` later (`history_ttl_ms`, at
//! least twice the head's TTL). A thread kept busy for longer than that would lose its
//! oldest pages while the head still counts them. So a finish first checks the head's
//! `pages_expire_at_ms` (the oldest page's expiry, unknown on heads written before it was
//! kept): when the pages would expire before the head it is about to write, it re-puts
//! every page (the same bytes) with a fresh retention, and the head it writes records
//! the new expiry.
//!
//! Cost: a busy thread renews once per `page_ttl - thread_ttl_ms` of activity (335 days
//! with the defaults, 365 and 30): one range read of its pages and ⌈(pages + 1) / 63⌉
//! commits re-writing their bytes (on Cloudflare a page over the inline limit becomes a
//! new KV blob, the old one collected). Every other finish pays nothing: the check reads
//! only the head it already holds.
//!
//! Each batch checks the head is still at the version the finish is fenced on, so a run
//! that lost its lease, or a thread deleted meanwhile, never brings pages back; the first
//! also renews the thread's marker, which must outlive the pages (see `leftovers`), and
//! its profile (the name and archived flag `PATCH /threads/{id}` keeps, which runs never
//! rewrite; conditional on its version, so a rename meanwhile wins and the next finish
//! renews again). A
//! renewal that fails is logged and does not fail the run: the head keeps the old expiry,
//! so the next finish tries again (re-putting identical bytes is harmless).

use super::{Inner, history, leftovers};
use crate::records::{PROFILE_KEY, THREAD_KEY, ThreadRecord};
use crate::store::{Condition, StoreError, Write};

/// Writes per commit, the head check and the marker included (within every store's
/// transaction limits; DynamoDB's is 100).
const BATCH: usize = 64;

/// Renews pages `0..pages` (those the claimed head counts) if they would expire before a
/// head written now, under the head version `fence`; on success sets `thread`'s
/// `pages_expire_at_ms` to their new expiry. Never fails the finish.
pub(crate) async fn pages_if_due(
    inner: &Inner,
    partition: &str,
    thread: &mut ThreadRecord,
    pages: u32,
    fence: u64,
    now: u64,
) {
    let head_expires = now + inner.config.thread_ttl_ms;
    if pages == 0
        || thread
            .pages_expire_at_ms
            .is_some_and(|at| at >= head_expires)
    {
        return;
    }
    let expires_at_ms = now + history::page_ttl(inner);
    match renew(inner, partition, pages, fence, expires_at_ms, now).await {
        Ok(renewed) => {
            tracing::info!(partition, pages = renewed, "history pages renewed");
            thread.pages_expire_at_ms = Some(expires_at_ms);
        }
        Err(error) => {
            tracing::warn!(partition, pages, error = %error, "could not renew the history pages; the next finish tries again");
        }
    }
}

/// Re-puts the live pages below `pages` in batches, each checking the head's version; how
/// many there were.
async fn renew(
    inner: &Inner,
    partition: &str,
    pages: u32,
    fence: u64,
    expires_at_ms: u64,
    now: u64,
) -> Result<usize, RenewError> {
    let items = history::page_items(inner, partition, pages, now)
        .await
        .map_err(RenewError::Read)?;
    let count = items.len();
    let profile = inner
        .store
        .get_one(partition, PROFILE_KEY, now)
        .await
        .map_err(|e| RenewError::Read(e.into()))?
        .map(|item| {
            let condition = Condition::Version(item.version);
            Write::put(item.key, condition, item.value, Some(expires_at_ms))
        });
    // The marker first: whatever batch lands, the marker outlives its pages.
    let mut puts =
        std::iter::once(leftovers::mark(inner, now))
            .chain(profile)
            .chain(items.into_iter().map(|item| {
                Write::put(item.key, Condition::Always, item.value, Some(expires_at_ms))
            }))
            .peekable();
    while puts.peek().is_some() {
        let mut writes = vec![Write::check(THREAD_KEY, Condition::Version(fence))];
        writes.extend(puts.by_ref().take(BATCH - 1));
        match inner.store.commit(partition, writes, now).await {
            Ok(()) => {}
            Err(StoreError::ConditionFailed { index: 0 }) => return Err(RenewError::FencedOut),
            Err(e) => return Err(RenewError::Write(e)),
        }
    }
    Ok(count)
}

#[derive(Debug, thiserror::Error)]
enum RenewError {
    #[error("reading the pages: {0}")]
    Read(crate::error::CoreError),
    #[error("the thread moved on (lease lost or deleted)")]
    FencedOut,
    #[error("{0}")]
    Write(StoreError),
}
