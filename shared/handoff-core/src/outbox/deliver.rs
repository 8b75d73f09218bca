//! Delivering the outbox: lease an item, send it, record the outcome.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;

use super::record::{GIVE_UP_AFTER_MS, OUTBOX_SCOPE, OutboxItem, RANK_TOP, backoff_ms};
use crate::runtime::Runtime;
use crate::store::{Condition, Store};

/// How long an attempt holds its item: another instance's sweep leaves it alone meanwhile.
const ATTEMPT_LEASE_MS: u64 = 60_000;

/// What an attempt achieved.
#[derive(Debug, Clone, PartialEq)]
pub enum SendOutcome {
    /// Every receiver has it.
    Delivered,
    /// Some failed: `done` names those served now (added to the item's), `error` says why
    /// the others failed; tried again later.
    Retry {
        /// Receivers served by this attempt.
        done: Vec<String>,
        /// Why the others failed.
        error: String,
    },
    /// Can never be delivered (its receiver is gone, say): given up at once.
    Dropped(String),
}

impl SendOutcome {
    /// The outcome of an attempt at several receivers: `done` served now, `errors` (one
    /// line each) failed.
    pub fn of_receivers(done: Vec<String>, errors: Vec<String>) -> Self {
        if errors.is_empty() {
            SendOutcome::Delivered
        } else {
            SendOutcome::Retry {
                done,
                error: errors.join("; "),
            }
        }
    }
}

/// Delivers the items of one kind.
#[async_trait]
pub trait Sender: Send + Sync + 'static {
    /// One attempt at `item` (its `attempts` already counts this one), stored in
    /// `partition`. Receivers in `item.done` were served by an earlier attempt.
    async fn send(&self, partition: &str, item: &OutboxItem) -> SendOutcome;
}

/// What a sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeliveryReport {
    /// Delivered now.
    pub delivered: usize,
    /// Failed now, to be tried again.
    pub retried: usize,
    /// Given up.
    pub failed: usize,
}

/// Delivers outbox items with the senders registered for their kinds.
#[derive(Clone)]
pub struct Outbox {
    store: Arc<dyn Store>,
    runtime: Runtime,
    senders: BTreeMap<String, Arc<dyn Sender>>,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox")
            .field("kinds", &self.senders.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Outbox {
    /// An outbox over `store`, with no sender yet.
    pub fn new(store: Arc<dyn Store>, runtime: Runtime) -> Self {
        Outbox {
            store,
            runtime,
            senders: BTreeMap::new(),
        }
    }

    /// Delivers items of `kind` with `sender`.
    #[must_use]
    pub fn sender(mut self, kind: impl Into<String>, sender: Arc<dyn Sender>) -> Self {
        self.senders.insert(kind.into(), sender);
        self
    }

    /// Whether items of `kind` are delivered here.
    pub fn delivers(&self, kind: &str) -> bool {
        self.senders.contains_key(kind)
    }

    /// Delivers up to `limit` items that are due, soonest first.
    pub async fn deliver_due(&self, limit: usize) -> DeliveryReport {
        let now = self.runtime.now_ms();
        let mut report = DeliveryReport::default();
        let hits = match self.store.list_index(OUTBOX_SCOPE, None, limit, now).await {
            Ok(hits) => hits,
            Err(err) => {
                tracing::warn!(error = %err, "outbox: the due items could not be listed");
                return report;
            }
        };
        for hit in hits
            .iter()
            .take_while(|hit| RANK_TOP.saturating_sub(hit.rank) <= now)
        {
            self.deliver(&hit.partition, &hit.key, &mut report).await;
        }
        report
    }

    /// Delivers the items `keys` of `partition` now (the ones a run's end just wrote).
    pub async fn deliver_now(&self, partition: &str, keys: &[String]) -> DeliveryReport {
        let mut report = DeliveryReport::default();
        for key in keys {
            self.deliver(partition, key, &mut report).await;
        }
        report
    }

    async fn deliver(&self, partition: &str, key: &str, report: &mut DeliveryReport) {
        let now = self.runtime.now_ms();
        let Ok(Some(stored)) = self.store.get_one(partition, key, now).await else {
            return;
        };
        let Some(mut item) = OutboxItem::decode(&stored) else {
            return;
        };
        let Some(sender) = self.senders.get(&item.kind) else {
            return;
        };
        if item.outcome.is_some() || item.due_ms > now {
            return;
        }
        // The lease: whoever moves the version first attempts; the others leave it.
        item.attempts += 1;
        item.due_ms = now + ATTEMPT_LEASE_MS;
        let lease = item.write(Condition::Version(stored.version), now);
        if self
            .store
            .commit(partition, vec![lease], now)
            .await
            .is_err()
        {
            return;
        }
        let outcome = sender.send(partition, &item).await;
        let now = self.runtime.now_ms();
        match outcome {
            SendOutcome::Delivered => {
                item.outcome = Some("delivered".to_owned());
                item.last_error = None;
                report.delivered += 1;
            }
            SendOutcome::Retry { done, error } => {
                item.done.extend(done);
                item.last_error = Some(error);
                if now.saturating_sub(item.created_ms) >= GIVE_UP_AFTER_MS {
                    item.outcome = Some("failed".to_owned());
                    report.failed += 1;
                } else {
                    item.due_ms = now + backoff_ms(item.attempts);
                    report.retried += 1;
                }
            }
            SendOutcome::Dropped(reason) => {
                item.outcome = Some("failed".to_owned());
                item.last_error = Some(reason);
                report.failed += 1;
            }
        }
        let write = item.write(Condition::Version(stored.version + 1), now);
        if let Err(err) = self.store.commit(partition, vec![write], now).await {
            // The lease runs out and the item is tried again: late, not lost.
            tracing::warn!(item = %item.id, error = %err, "outbox: an attempt's outcome was not recorded");
        }
    }
}
