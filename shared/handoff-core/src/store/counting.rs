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
}

/// Wraps a store and counts what passes through.
#[derive(Debug, Default)]
pub struct CountingStore<S> {
    inner: S,
    cost: Mutex<StoreCost>,
}

impl<S> CountingStore<S> {
    /// Counts calls to `inner`.
    pub fn new(inner: S) -> Self {
        CountingStore {
            inner,
            cost: Mutex::new(StoreCost::default()),
        }
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
        self.add(|c| {
            c.gets += 1;
            c.keys_read += keys.len() as u64;
        });
        self.inner.get(partition, keys, now_ms).await
    }
    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        self.add(|c| {
            c.commits += 1;
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
