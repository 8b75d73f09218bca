//! The in-memory store: the reference semantics the conformance suite is written against.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use async_trait::async_trait;

use super::{Item, Store, StoreError, Write, WriteOp, condition_holds, is_live};

/// All partitions under one mutex. Not durable; for tests and `HANDOFF_STORE=memory`.
#[derive(Debug, Default)]
pub struct MemoryStore {
    partitions: Mutex<HashMap<String, BTreeMap<String, Item>>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, BTreeMap<String, Item>>> {
        // A poisoned lock only means another caller panicked mid-read; the map itself is never left half-written.
        self.partitions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[async_trait]
impl Store for MemoryStore {
    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        let map = self.lock();
        let items = map.get(partition);
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
        let mut map = self.lock();
        let items = map.entry(partition.to_owned()).or_default();
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

    async fn list(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        let map = self.lock();
        Ok(map
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
