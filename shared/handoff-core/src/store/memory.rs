//! The in-memory store: the reference semantics the conformance suite is written against.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use async_trait::async_trait;

use super::{Item, Store, StoreError, Write, WriteOp, condition_holds, is_live};

type Partition = BTreeMap<String, Item>;

/// All partitions under one mutex. Not durable; for tests and `HANDOFF_STORE=memory`.
///
/// Expired items are removed physically, so memory follows the live data rather than
/// every thread ever run: a commit first drops the expired items of its partition, and
/// every so many commits (as many as there are partitions, so the cost per commit stays
/// about one partition's worth) all partitions are swept. Empty partitions are dropped.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    partitions: HashMap<String, Partition>,
    /// Commits since every partition was last swept.
    commits_since_sweep: usize,
}

impl Inner {
    /// Sweeps every partition once enough commits have paid for it.
    fn sweep_all_if_due(&mut self, now_ms: u64) {
        self.commits_since_sweep += 1;
        if self.commits_since_sweep < self.partitions.len() {
            return;
        }
        self.commits_since_sweep = 0;
        self.partitions.retain(|_, items| {
            drop_expired(items, now_ms);
            !items.is_empty()
        });
    }
}

fn drop_expired(items: &mut Partition, now_ms: u64) {
    items.retain(|_, item| is_live(item.expires_at_ms, now_ms));
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A poisoned lock only means another caller panicked mid-read; the map itself is never left half-written.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Items physically held, expired or not (what the sweeps bound).
    #[cfg(test)]
    fn item_count(&self) -> usize {
        self.lock().partitions.values().map(BTreeMap::len).sum()
    }

    /// Partitions physically held.
    #[cfg(test)]
    fn partition_count(&self) -> usize {
        self.lock().partitions.len()
    }
}

/// Applies `writes` to `items` if every condition holds, else changes nothing.
fn apply(items: &mut Partition, writes: Vec<Write>, now_ms: u64) -> Result<(), StoreError> {
    for (index, write) in writes.iter().enumerate() {
        let current = items
            .get(&write.key)
            .filter(|i| is_live(i.expires_at_ms, now_ms));
        if !condition_holds(write.condition, current) {
            return Err(StoreError::ConditionFailed { index });
        }
    }
    for write in writes {
        match write.op {
            WriteOp::Put {
                value,
                expires_at_ms,
            } => {
                let version = items
                    .get(&write.key)
                    .filter(|i| is_live(i.expires_at_ms, now_ms))
                    .map_or(1, |i| i.version + 1);
                items.insert(
                    write.key.clone(),
                    Item {
                        key: write.key,
                        version,
                        value,
                        expires_at_ms,
                    },
                );
            }
            WriteOp::Delete => {
                items.remove(&write.key);
            }
            WriteOp::Check => {}
        }
    }
    Ok(())
}

#[async_trait]
impl Store for MemoryStore {
    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        let inner = self.lock();
        let items = inner.partitions.get(partition);
        Ok(keys
            .iter()
            .map(|k| {
                items
                    .and_then(|p| p.get(*k))
                    .filter(|i| is_live(i.expires_at_ms, now_ms))
                    .cloned()
            })
            .collect())
    }

    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let mut inner = self.lock();
        inner.sweep_all_if_due(now_ms);
        let items = inner.partitions.entry(partition.to_owned()).or_default();
        // Expired items read as absent already; removing them changes nothing visible.
        drop_expired(items, now_ms);
        let result = apply(items, writes, now_ms);
        if items.is_empty() {
            inner.partitions.remove(partition);
        }
        result
    }

    async fn list(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        let inner = self.lock();
        Ok(inner
            .partitions
            .get(partition)
            .map(|p| {
                p.range(prefix.to_owned()..)
                    .take_while(|(k, _)| k.starts_with(prefix))
                    .filter(|(_, i)| is_live(i.expires_at_ms, now_ms))
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use futures::executor::block_on;

    use super::*;
    use crate::store::Condition;

    fn put(key: &str, expires_at_ms: Option<u64>) -> Write {
        Write::put(key, Condition::Always, b"v".to_vec(), expires_at_ms)
    }

    #[test]
    fn a_commit_drops_the_expired_items_of_its_partition() {
        let store = MemoryStore::new();
        block_on(async {
            // Enough other partitions that no sweep of all of them is due next.
            for n in 0..10 {
                store
                    .commit(&format!("other{n}"), vec![put("k", None)], 0)
                    .await
                    .unwrap();
            }
            let writes = vec![put("lease", Some(1_000)), put("thread", None)];
            store.commit("t1", writes, 0).await.unwrap();
            assert_eq!(store.item_count(), 12);
            // Even a failing commit may sweep: expired items are invisible either way.
            let stale = Write::check("thread", Condition::Version(9));
            assert!(store.commit("t1", vec![stale], 1_000).await.is_err());
            assert_eq!(store.item_count(), 11, "the expired lease is gone");
            assert_eq!(store.list("t1", "", 1_000).await.unwrap(), ["thread"]);
        });
    }

    #[test]
    fn finished_threads_do_not_accumulate() {
        let store = MemoryStore::new();
        block_on(async {
            // Many threads, each leaving only items that expire at 1_000.
            for n in 0..100 {
                let writes = vec![put("record", Some(1_000)), put("log", Some(1_000))];
                store.commit(&format!("t{n}"), writes, 0).await.unwrap();
            }
            assert_eq!(store.partition_count(), 100);
            // Later traffic on one other thread sweeps the rest, a bounded number of commits on.
            for _ in 0..100 {
                store
                    .commit("live", vec![put("k", None)], 2_000)
                    .await
                    .unwrap();
            }
            assert_eq!(store.partition_count(), 1, "empty partitions are dropped");
            assert_eq!(store.item_count(), 1);
        });
    }

    #[test]
    fn a_partition_emptied_by_expiry_or_delete_is_dropped() {
        let store = MemoryStore::new();
        block_on(async {
            store.commit("t1", vec![put("k", None)], 0).await.unwrap();
            let delete = Write::delete("k", Condition::Always);
            store.commit("t1", vec![delete], 0).await.unwrap();
            assert_eq!(store.partition_count(), 0);
            // A failed commit to a new partition leaves nothing behind either.
            let missing = Write::check("k", Condition::Version(1));
            assert!(store.commit("t2", vec![missing], 0).await.is_err());
            assert_eq!(store.partition_count(), 0);
        });
    }
}
