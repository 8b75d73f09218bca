//! Keeping the thread while a run works: the stop timer and the fenced heartbeat.
//!
//! A run may act only while it holds its lease, so the engine stops it at the earlier
//! of the host deadline and the lease end (each minus a margin). A run that the host
//! lets live longer than one lease renews it halfway through, under its fence: the
//! renewal is a conditional write of the thread like any other, so a run that lost
//! the thread finds out at its next renewal instead of acting on unfenced.

use super::Inner;
use super::claimed::Claimed;
use crate::context::fence::Fence;
use crate::records::{Lease, ThreadRecord};
use crate::store::{Condition, StoreError};

/// Why the watcher stopped the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The host deadline (or the lease end, when it could not be renewed) is near.
    Deadline,
    /// A renewal found the thread taken over.
    LeaseLost,
    /// Someone asked the run to stop (see `stop.rs`).
    Requested,
}

/// How often a failed renewal is retried (it still stops the run in time).
const RENEW_RETRY_MS: u64 = 1_000;

/// Where a lease taken (or renewed) at `now` ends: one lease length, never past the host deadline.
pub(crate) fn lease_until(inner: &Inner, host_deadline: Option<u64>, now: u64) -> u64 {
    host_deadline
        .unwrap_or(u64::MAX)
        .min(now + inner.config.lease_ms)
}

/// The margin before an end: the configured one, at most a fifth of the span.
pub(crate) fn margin(inner: &Inner, start: u64, end: u64) -> u64 {
    inner
        .config
        .deadline_margin_ms
        .min(end.saturating_sub(start) / 5)
}

/// Resolves when the run must stop; renews the lease meanwhile. Dropping it is safe
/// between renewals (see [`settle`]).
pub(crate) async fn watch(
    inner: &Inner,
    partition: &str,
    claimed: &Claimed,
    fence: &Fence,
    started_at: u64,
    host_deadline: Option<u64>,
) -> Stop {
    let host_stop = host_deadline
        .map(|deadline| deadline - margin(inner, started_at, deadline.max(started_at)));
    let mut lease_start = claimed.started_at_ms;
    let mut lease_end = claimed
        .thread
        .lease
        .as_ref()
        .map_or(lease_start, |l| l.expires_at_ms);
    let mut renew_at = lease_start + lease_end.saturating_sub(lease_start) / 2;
    loop {
        let lease_stop = lease_end - margin(inner, lease_start, lease_end);
        let stop_at = host_stop.map_or(lease_stop, |h| h.min(lease_stop));
        // Renewing helps only if the host lets the run outlive the current lease.
        let renewable = host_deadline.is_none_or(|d| d > lease_end) && renew_at < stop_at;
        let wake_at = if renewable { renew_at } else { stop_at };
        let now = inner.runtime.now_ms();
        inner.runtime.sleep.sleep(wake_at.saturating_sub(now)).await;
        if !renewable {
            return Stop::Deadline;
        }
        let now = inner.runtime.now_ms();
        let end = lease_until(inner, host_deadline, now);
        match renew(inner, partition, claimed, fence, end, now).await {
            Ok(()) => {
                lease_start = now;
                lease_end = end;
                renew_at = now + (end - now) / 2;
            }
            Err(StoreError::ConditionFailed { .. }) => return Stop::LeaseLost,
            Err(error) => {
                tracing::warn!(error = %error, "lease renewal failed; retrying before the lease ends");
                renew_at = now + RENEW_RETRY_MS;
            }
        }
    }
}

/// Extends the lease to `end` under the fence; on success the fence moves on.
async fn renew(
    inner: &Inner,
    partition: &str,
    claimed: &Claimed,
    fence: &Fence,
    end: u64,
    now: u64,
) -> Result<(), StoreError> {
    let mut version = fence.lock().await;
    let thread = ThreadRecord {
        lease: Some(Lease {
            run_id: claimed.run_id.clone(),
            expires_at_ms: end,
            answer: claimed.resume_key.clone(),
        }),
        ..claimed.thread.clone()
    };
    let write = thread.write(
        partition,
        Condition::Version(*version),
        Some(now + inner.config.thread_ttl_ms),
    );
    inner.store.commit(partition, vec![write], now).await?;
    *version += 1;
    tracing::debug!(run_id = %claimed.run_id, lease_end = end, "lease renewed");
    Ok(())
}

/// Lets a renewal in flight land before the watcher is dropped: a store call dropped
/// mid-flight may still apply, and the finish must know the fence it left behind.
pub(crate) async fn settle<W>(watcher: &mut W, fence: &Fence)
where
    W: std::future::Future<Output = Stop> + futures::future::FusedFuture + Unpin,
{
    use futures::FutureExt;
    futures::future::poll_fn(|cx| {
        // Idle (asleep, or never started): nothing to wait for, and polling it now would
        // only arm its timer or start a renewal the finish does not need.
        if !fence.is_busy() || watcher.is_terminated() {
            return std::task::Poll::Ready(());
        }
        let _ = watcher.poll_unpin(cx);
        if fence.is_busy() && !watcher.is_terminated() {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
}
