//! Reads for the engine and `GET /threads/{id}`: task snapshots and wake records.

use handoff_core::{Condition, StoreError, Write};

use super::Receiver;
use crate::error::ReceiverError;
use crate::records::{self, TASK_PREFIX, TaskSnapshot, TaskWake, WAKE_PREFIX, decode};

impl Receiver {
    /// The snapshot of `task_id` as seen by `thread_id` (for `GET /threads/{id}`).
    pub async fn task(
        &self,
        thread_id: &str,
        task_id: &str,
    ) -> Result<Option<TaskSnapshot>, ReceiverError> {
        let now = self.inner.runtime.now_ms();
        let key = records::task_key(task_id);
        let items = self
            .inner
            .store
            .get(thread_id, &[key.as_str()], now)
            .await?;
        items
            .into_iter()
            .next()
            .flatten()
            .map(|i| decode(&i))
            .transpose()
    }

    /// Every task snapshot of a thread, by task id.
    pub async fn tasks(&self, thread_id: &str) -> Result<Vec<TaskSnapshot>, ReceiverError> {
        self.read_prefix(thread_id, TASK_PREFIX).await
    }

    /// Pending wake records of a thread (one per task, the latest).
    pub async fn wakes(&self, thread_id: &str) -> Result<Vec<TaskWake>, ReceiverError> {
        self.read_prefix(thread_id, WAKE_PREFIX).await
    }

    /// Consumes the wake of `task_id` if it is still number `seq` (a newer wake
    /// stays). `true` when it was removed.
    pub async fn clear_wake(
        &self,
        thread_id: &str,
        task_id: &str,
        seq: u64,
    ) -> Result<bool, ReceiverError> {
        let now = self.inner.runtime.now_ms();
        let key = records::wake_key(task_id);
        let Some(item) = self.inner.store.get_one(thread_id, &key, now).await? else {
            return Ok(false);
        };
        if decode::<TaskWake>(&item)?.seq != seq {
            return Ok(false);
        }
        let write = Write::delete(key, Condition::Version(item.version));
        match self.inner.store.commit(thread_id, vec![write], now).await {
            Ok(()) => Ok(true),
            Err(StoreError::ConditionFailed { .. }) => Ok(false),
            Err(other) => Err(other.into()),
        }
    }

    async fn read_prefix<T: serde::de::DeserializeOwned>(
        &self,
        thread_id: &str,
        prefix: &str,
    ) -> Result<Vec<T>, ReceiverError> {
        let now = self.inner.runtime.now_ms();
        let keys = self.inner.store.list(thread_id, prefix, now).await?;
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let items = self.inner.store.get(thread_id, &refs, now).await?;
        items.iter().flatten().map(decode).collect()
    }
}
