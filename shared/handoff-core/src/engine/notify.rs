//! The outbox items a run's end writes (see [`crate::outbox`]), and their first delivery.

use agui_protocol::Event;
use sha2::{Digest, Sha256};

use super::Inner;
use super::claimed::Claimed;
use crate::context::RunContext;
use crate::outbox::{OutboxItem, RunFacts};
use crate::principal::split_partition;
use crate::records::{RunStatus, ThreadRecord};
use crate::store::{Condition, Write};

/// The items the engine's notifiers ask for about this run's end, as writes for the
/// finish's commit, and their keys.
pub(crate) fn writes(
    inner: &Inner,
    ctx: &RunContext,
    claimed: &Claimed,
    thread: &ThreadRecord,
    status: RunStatus,
    terminal: Option<&Event>,
    now: u64,
) -> (Vec<Write>, Vec<String>) {
    let Some(terminal) = terminal.filter(|_| !inner.notifiers.is_empty()) else {
        return (Vec::new(), Vec::new());
    };
    let (tenant, thread_id) = split_partition(ctx.partition());
    // Its own interrupts: those this run raised, not ones still waiting from before.
    let pending: Vec<_> = thread
        .pending
        .iter()
        .filter(|p| p.run_id == *ctx.run_id())
        .cloned()
        .collect();
    let facts = RunFacts {
        tenant,
        thread_id,
        run_id: ctx.run_id().as_str(),
        status,
        terminal,
        pending: &pending,
        requested_by: &claimed.requested_by,
        watches: &claimed.watches,
        now_ms: now,
    };
    let notices = inner.notifiers.iter().flat_map(|n| n.notices(&facts));
    let mut writes = Vec::new();
    let mut keys = Vec::new();
    for (n, notice) in notices.enumerate() {
        let id = item_id(ctx.partition(), ctx.run_id().as_str(), n);
        let item = OutboxItem::pending(id, notice.kind, notice.body, now);
        keys.push(item.key());
        writes.push(item.write(Condition::Absent, now));
        if let Some(scope) = &notice.listing {
            writes.push(item.listing_write(scope, now));
        }
    }
    (writes, keys)
}

/// One id per notice, whatever the number of attempts: a digest of where it comes from.
fn item_id(partition: &str, run_id: &str, index: usize) -> String {
    let mut hash = Sha256::new();
    for part in [partition, run_id, &index.to_string()] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    format!("ntc_{}", hex::encode(&hash.finalize()[..16]))
}

/// The first attempt at what a run's end just wrote, by the instance that ran it.
pub(crate) async fn deliver(inner: &Inner, partition: &str, keys: &[String]) {
    if let (Some(outbox), false) = (&inner.outbox, keys.is_empty()) {
        outbox.deliver_now(partition, keys).await;
    }
}
