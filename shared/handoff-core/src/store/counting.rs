//! A store wrapper that counts calls and bytes written: what a turn costs on any backend.
//!
//! ```
//! use std::sync::Arc;
//! use handoff_core::store::counting::CountingStore;
//! use handoff_core::store::memory::MemoryStore;
//!
//! let store = Arc::new(CountingStore::new(MemoryStore::default()));
//! // ... run turns through an engine over `store.clone()` ...
//! let cost = store.take();
//! assert_eq!(cost.commits, 0);
//! ```

use std::sync::Mutex;

use async_trait::async_trait;

use super::{IndexHit, Item, Store, StoreError, Write, WriteOp};

/// Calls and bytes since the last [`CountingStore::take`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreCost {
    /// `get` calls.
    pub gets: u64,
    /// Keys asked for across `get` calls.
    pub keys_read: u64,
    /// `list` calls.
    pub lists: u64,
    /// `scan` calls.
    pub scans: u64,
    /// `commit` calls.
    pub commits: u64,
    /// Items put across commits.
    pub puts: u64,
    /// Of those, puts listed in a scope ([`Write::indexed`]): on DynamoDB each also writes
    /// the listing index; elsewhere the entry is part of the item.
    pub indexed_puts: u64,
    /// Bytes of keys and values put across commits (what a backend bills for writes).
    pub bytes_written: u64,
    /// Commits refused because a condition did not hold (lost races).
    pub conflicts: u64,
    /// Of the commits, those writing a key under the watched prefix
    /// ([`CountingStore::watching`]).
    pub watched_commits: u64,
    /// Of the `get` calls, those reading a key under the watched prefix.
    pub watched_gets: u64,
}

/// Wraps a store and counts what passes through.
#[derive(Debug, Default)]
pub struct CountingStore<S> {
    inner: S,
    cost: Mutex<StoreCost>,
    watched: Option<String>,
}

impl<S> CountingStore<S> {
    /// Counts calls to `inner`.
    pub fn new(inner: S) -> Self {
        CountingStore {
            inner,
            cost: Mutex::new(StoreCost::default()),
            watched: None,
        }
    }
    /// Also counts apart the calls that touch keys starting with `prefix` (a run's journal
    /// steps, `journal#`, say): [`StoreCost::watched_commits`], [`StoreCost::watched_gets`].
    #[must_use]
    pub fn watching(mut self, prefix: &str) -> Self {
        self.watched = Some(prefix.to_owned());
        self
    }
    fn watches(&self, key: &str) -> bool {
        self.watched.as_deref().is_some_and(|p| key.starts_with(p))
    }
    /// The cost so far.
    pub fn cost(&self) -> StoreCost {
        *self.cost.lock().unwrap_or_else(|e| e.into_inner())
    }
    /// The cost so far, resetting the counters.
    pub fn take(&self) -> StoreCost {
        std::mem::take(&mut *self.cost.lock().unwrap_or_else(|e| e.into_inner()))
    }
    fn add(&self, f: impl FnOnce(&mut StoreCost)) {
        f(&mut self.cost.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

#[async_trait]
impl<S: Store> Store for CountingStore<S> {
    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        let watched = keys.iter().any(|k| self.watches(k));
        self.add(|c| {
            c.gets += 1;
            c.keys_read += keys.len() as u64;
            c.watched_gets += u64::from(watched);
        });
        self.inner.get(partition, keys, now_ms).await
    }
    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let watched = writes.iter().any(|w| self.watches(&w.key));
        self.add(|c| {
            c.commits += 1;
            c.watched_commits += u64::from(watched);
            for write in &writes {
                if let WriteOp::Put { value, .. } = &write.op {
                    c.puts += 1;
                    c.indexed_puts += u64::from(write.index.is_some());
                    c.bytes_written += (write.key.len() + value.len()) as u64;
                }
            }
        });
        let result = self.inner.commit(partition, writes, now_ms).await;
        if matches!(result, Err(StoreError::ConditionFailed { .. })) {
            self.add(|c| c.conflicts += 1);
        }
        result
    }
    async fn list(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        self.add(|c| c.lists += 1);
        self.inner.list(partition, prefix, now_ms).await
    }
    async fn scan(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<Item>, StoreError> {
        self.add(|c| c.scans += 1);
        self.inner.scan(partition, prefix, now_ms).await
    }
    async fn list_index(
        &self,
        scope: &str,
        after: Option<&IndexHit>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<IndexHit>, StoreError> {
        self.add(|c| c.lists += 1);
        self.inner.list_index(scope, after, limit, now_ms).await
    }
    fn system_name(&self) -> &'static str {
        self.inner.system_name()
    }
}
