//! The record a run keeps for its re-drive (see `redrive`): written by the claim, listed by
//! the lease's end, taken away by the run's end, and listed as due at once by a hand-over.
//! Its own module, below the claim, the run and the finish that write it.

use agui_protocol::{RunAgentInput, RunId};
use serde::{Deserialize, Serialize};

use super::claimed::Claimed;
use super::{Inner, RunOptions, digest};
use crate::context::fence::Fence;
use crate::outbox::Watch;
use crate::principal::Principal;
use crate::records::{self, ThreadRecord, ThreadStatus};
use crate::store::{Condition, IndexEntry, Write};

/// The listing of every unfinished run, soonest lease end first.
pub const REDRIVE_SCOPE: &str = "\u{1f}redrive";
/// Key prefix of the items in a thread's partition.
pub(crate) const PREFIX: &str = "redrive#";
/// The highest rank every store keeps exactly; a rank is this minus the lease end.
const RANK_TOP: u64 = crate::store::MAX_INDEX_RANK;

/// What a run was asked, kept until it ends.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RedriveRequest {
    /// The input as posted, without its first `historyPrefix` messages.
    pub(crate) input: RunAgentInput,
    /// How many leading messages of the input were the thread's stored history (left out:
    /// they are read back from the history, which the unfinished run did not change).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) history_prefix: Option<usize>,
    pub(crate) principal: Principal,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) watches: Vec<Watch>,
}

/// The key of a run's item.
pub(crate) fn key(run_id: &str) -> String {
    [PREFIX, run_id].concat()
}

pub(crate) fn rank(lease_end: u64) -> u64 {
    RANK_TOP.saturating_sub(lease_end.min(RANK_TOP))
}

/// The claim's write of the request it admits, listed by `lease_end`, and its bytes.
pub(crate) fn claim_write(
    input: &RunAgentInput,
    options: &RunOptions,
    thread: &ThreadRecord,
    chain: &digest::Chain,
    lease_end: u64,
    expires_at_ms: u64,
) -> (Write, Vec<u8>) {
    let prefix = digest::recognised_prefix(thread, chain).filter(|n| *n > 0);
    let mut kept = input.clone();
    if let Some(n) = prefix {
        kept.messages.drain(..n.min(kept.messages.len()));
    }
    let request = RedriveRequest {
        input: kept,
        history_prefix: prefix,
        principal: options.principal.clone(),
        agent_id: options.agent_id.clone(),
        watches: options.watches.clone(),
    };
    let bytes = records::encode(&request);
    let write = Write::put(
        key(input.run_id.as_str()),
        Condition::Always,
        bytes.clone(),
        Some(expires_at_ms),
    )
    .indexed(IndexEntry {
        scope: REDRIVE_SCOPE.to_owned(),
        rank: rank(lease_end),
    });
    (write, bytes)
}

/// The write of a run's end that takes its item away.
pub(crate) fn end_write(run_id: &RunId) -> Write {
    Write::delete(key(run_id.as_str()), Condition::Always)
}

/// Whether `thread` is held by another run whose lease lapsed before it ended: a new
/// request re-drives that run first ([`claim::Claim::Abandoned`]).
pub(crate) fn abandoned_by_other(thread: &ThreadRecord, run_id: &RunId, now: u64) -> Option<RunId> {
    thread
        .lease
        .as_ref()
        .filter(|l| thread.status == ThreadStatus::Running && l.run_id != *run_id)
        .filter(|l| l.expires_at_ms <= now)
        .map(|l| l.run_id.clone())
}

/// Hands a claimed run over at once: its lease ends now (the write fenced like any of the
/// run's), its record stays `running`, so the next sweep, request or reader re-drives it.
/// A hand-off that finds the thread moved on changes nothing: someone has it already.
pub(crate) async fn hand_off(inner: &Inner, partition: &str, claimed: &Claimed, fence: &Fence) {
    let now = inner.runtime.now_ms();
    let mut thread = claimed.thread.clone();
    if let Some(lease) = thread.lease.as_mut() {
        lease.expires_at_ms = now;
    }
    let mut version = fence.lock().await;
    let write = thread.write(
        partition,
        Condition::Version(*version),
        Some(now + inner.config.thread_ttl_ms),
    );
    // Listed as due now, so the next sweep takes it.
    let listed = Write::put(
        key(claimed.run_id.as_str()),
        Condition::Always,
        claimed.redrive_request.clone(),
        Some(now + inner.config.run_ttl_ms),
    )
    .indexed(IndexEntry {
        scope: REDRIVE_SCOPE.to_owned(),
        rank: rank(now),
    });
    match inner
        .store
        .commit(partition, vec![write, listed], now)
        .await
    {
        Ok(()) => {
            *version += 1;
            tracing::info!(run_id = %claimed.run_id, "run handed over for a re-drive");
        }
        Err(error) => {
            tracing::warn!(%error, run_id = %claimed.run_id, "handing the run over failed; it is re-driven once its lease lapses");
        }
    }
}
