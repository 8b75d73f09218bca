//! A run's request, kept in its own record for a re-drive (see `redrive`): written by the
//! claim, which lists the record by the lease's end; gone from the record the run's end
//! writes, which is listed nowhere; listed as due at once by a hand-over. Its own module,
//! below the claim, the run and the finish that write it.
//!
//! One item, not two: the request rides in the run record the claim writes anyway, so a run
//! pays no item of its own for its re-drive, nor a delete at its end. An item of its own cost
//! every run a put and a delete: on DynamoDB 12 of the 72 write units of `history-cost`'s
//! window (a chat turn and an approval pair), now 60.

use agui_protocol::{RunAgentInput, RunId};

use super::claimed::Claimed;
use super::{Inner, RunOptions, digest};
use crate::context::fence::Fence;
use crate::records::{self, RedriveRequest, ThreadRecord, ThreadStatus};
use crate::store::{Condition, IndexEntry, Write};

/// The listing of every unfinished run, soonest lease end first.
pub const REDRIVE_SCOPE: &str = "\u{1f}redrive";
/// Key prefix of the items a run kept its request in before it rode in the run record.
/// Such an item may still be listed in a store written by an earlier version: a sweep
/// re-drives from it, or drops it once its run has ended.
pub(crate) const LEGACY_PREFIX: &str = "redrive#";
/// The highest rank every store keeps exactly; a rank is this minus the lease end.
const RANK_TOP: u64 = crate::store::MAX_INDEX_RANK;

/// The key of a run's legacy item.
pub(crate) fn legacy_key(run_id: &str) -> String {
    [LEGACY_PREFIX, run_id].concat()
}

pub(crate) fn rank(lease_end: u64) -> u64 {
    RANK_TOP.saturating_sub(lease_end.min(RANK_TOP))
}

/// The listing entry of a running run's record whose lease ends at `lease_end`.
pub(crate) fn listing(lease_end: u64) -> IndexEntry {
    IndexEntry {
        scope: REDRIVE_SCOPE.to_owned(),
        rank: rank(lease_end),
    }
}

/// The request a claim admits, as its run record keeps it.
pub(crate) fn request(
    input: &RunAgentInput,
    options: &RunOptions,
    thread: &ThreadRecord,
    chain: &digest::Chain,
) -> RedriveRequest {
    let prefix = digest::recognised_prefix(thread, chain).filter(|n| *n > 0);
    // Copied without the stored history (most of a resending client's body), field by
    // field: a new field of the input fails to compile here instead of going unkept.
    let RunAgentInput {
        thread_id,
        run_id,
        protocol_version,
        parent_run_id,
        state,
        messages,
        tools,
        context,
        forwarded_props,
        resume,
    } = input;
    let skipped = prefix.unwrap_or(0).min(messages.len());
    let kept = RunAgentInput {
        thread_id: thread_id.clone(),
        run_id: run_id.clone(),
        protocol_version: protocol_version.clone(),
        parent_run_id: parent_run_id.clone(),
        state: state.clone(),
        messages: messages[skipped..].to_vec(),
        tools: tools.clone(),
        context: context.clone(),
        forwarded_props: forwarded_props.clone(),
        resume: resume.clone(),
    };
    RedriveRequest {
        input: kept,
        history_prefix: prefix,
        principal: options.principal.clone(),
        agent_id: options.agent_id.clone(),
        watches: options.watches.clone(),
    }
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
    // Its record as claimed (the request in it), listed as due now: the next sweep takes it.
    let listed = Write::put(
        records::run_key(claimed.run_id.as_str()),
        Condition::Always,
        claimed.run_record.clone(),
        Some(now + inner.config.run_ttl_ms),
    )
    .indexed(listing(now));
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
