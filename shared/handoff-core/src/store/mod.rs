//! What the engine needs from storage, and nothing more.
//!
//! A store holds **items** grouped in **partitions** (one partition per thread,
//! plus one per demo ledger account). Every read is strongly consistent; every
//! write goes through [`Store::commit`], an all-or-nothing batch of conditional
//! writes inside one partition. That maps one-to-one onto:
//!
//! - DynamoDB: partition key = partition, sort key = item key, `ConsistentRead`,
//!   `TransactWriteItems` with `attribute_not_exists` / `#version = :v` conditions;
//! - a Durable Object per partition: a storage transaction in a single-threaded object;
//! - SQLite: one `BEGIN IMMEDIATE` transaction;
//! - memory: one mutex.
//!
//! Items carry a version (1 on creation, +1 on every put) that conditions compare
//! against, and an optional expiry: an expired item reads as absent and satisfies
//! [`Condition::Absent`], whatever the backend's physical deletion lag.
//!
//! Under one [`Store::commit`] the writes of a batch address distinct keys.
//!
//! # Indexes across partitions
//!
//! A put may carry an [`IndexEntry`]: the item then appears in that entry's **scope** (a
//! listing across partitions, such as one owner's threads) at its **rank**, until a put
//! without an entry, a delete or its expiry takes it out. The entry is part of the item,
//! written by the same commit, so a listing never shows an item its commit did not make
//! (no cross-partition transaction is needed). [`Store::list_index`] pages through a
//! scope, highest rank first, without reading any other scope or partition:
//!
//! - memory: a sorted set per scope, updated under the commit's mutex;
//! - SQLite: two columns of the item's row and an index on them;
//! - DynamoDB: two attributes of the item and a global secondary index (projecting the
//!   expiry); a listing may lag a commit by the index's propagation (typically well
//!   under a second); the item itself is read consistently by whoever follows the hit;
//! - Cloudflare: a Durable Object per scope, told by the partition's object before it
//!   answers the commit, from an outbox written in the commit's transaction (a scope
//!   that cannot be reached is told later, by the partition's alarm: late, never lost).
//!
//! A hit is a pointer, not the item: callers read the item (which may have changed or
//! gone since) and trust what they read.

pub mod counting;
pub mod memory;
pub mod traced;

use async_trait::async_trait;

/// One stored item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Key within the partition.
    pub key: String,
    /// 1 after creation, incremented by each put.
    pub version: u64,
    /// Opaque bytes (the engine stores JSON).
    pub value: Vec<u8>,
    /// Unix milliseconds from which on the item reads as absent.
    pub expires_at_ms: Option<u64>,
}

/// A precondition on one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// No precondition.
    Always,
    /// The item must be absent (or expired).
    Absent,
    /// The item must exist, unexpired, at exactly this version.
    Version(u64),
}

/// What to do with one item.
///
/// Versions are predictable from the condition, so a caller knows the version it
/// created without another read (DynamoDB cannot return values from a
/// transaction): a put under `Version(v)` yields `v + 1`, a put under `Absent`
/// yields 1 (an expired item is replaced as if it never existed), a put under
/// `Always` yields the live version + 1, or 1. Records whose versions fence
/// writers (threads) must therefore outlive every lease on them by far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOp {
    /// Create or replace; the version becomes previous + 1 (1 if absent).
    Put {
        /// New bytes.
        value: Vec<u8>,
        /// New expiry.
        expires_at_ms: Option<u64>,
    },
    /// Remove the item.
    Delete,
    /// Only check the condition (fencing).
    Check,
}

/// The highest [`IndexEntry::rank`] every store keeps exactly: 2^53 - 1. DynamoDB and
/// SQLite hold 64-bit integers, but a Durable Object's SQL binds JavaScript numbers,
/// exact only up to 2^53.
pub const MAX_INDEX_RANK: u64 = (1 << 53) - 1;

/// Where a put item appears in a listing across partitions ([`Store::list_index`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IndexEntry {
    /// The listing (e.g. one owner's threads). At most 1,024 bytes.
    pub scope: String,
    /// Its order there: highest first. At most [`MAX_INDEX_RANK`].
    pub rank: u64,
}

/// One item of a listing: where to read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexHit {
    /// Its rank when last written.
    pub rank: u64,
    /// Its partition.
    pub partition: String,
    /// Its key.
    pub key: String,
}

impl IndexHit {
    /// Whether `self` comes after `other` in a listing: lower rank, then partition and key
    /// in ascending order.
    pub fn follows(&self, other: &IndexHit) -> bool {
        (std::cmp::Reverse(self.rank), &self.partition, &self.key)
            > (std::cmp::Reverse(other.rank), &other.partition, &other.key)
    }
}

/// One conditional write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    /// Item key.
    pub key: String,
    /// Precondition.
    pub condition: Condition,
    /// Operation.
    pub op: WriteOp,
    /// For a put: the listing the item appears in (none: it leaves any listing).
    pub index: Option<IndexEntry>,
}

impl Write {
    /// Put `value` if `condition` holds.
    pub fn put(
        key: impl Into<String>,
        condition: Condition,
        value: Vec<u8>,
        expires_at_ms: Option<u64>,
    ) -> Self {
        Write {
            key: key.into(),
            condition,
            op: WriteOp::Put {
                value,
                expires_at_ms,
            },
            index: None,
        }
    }
    /// With the put item listed under `entry` ([`Store::list_index`]).
    #[must_use]
    pub fn indexed(mut self, entry: IndexEntry) -> Self {
        self.index = Some(entry);
        self
    }
    /// Check `condition` without writing.
    pub fn check(key: impl Into<String>, condition: Condition) -> Self {
        Write {
            key: key.into(),
            condition,
            op: WriteOp::Check,
            index: None,
        }
    }
    /// Delete if `condition` holds.
    pub fn delete(key: impl Into<String>, condition: Condition) -> Self {
        Write {
            key: key.into(),
            condition,
            op: WriteOp::Delete,
            index: None,
        }
    }
}

/// Why a store call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A condition did not hold; nothing was written. `index` is the first failing write.
    #[error("condition failed on write {index}")]
    ConditionFailed {
        /// Index into the batch.
        index: usize,
    },
    /// The backend is unreachable, throttling or timed out; retry later. The
    /// batch may or may not have been applied (a timed-out transaction can still
    /// commit), so callers re-read before deciding anything.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The batch or an item exceeds what the backend can hold.
    #[error("too large: {0}")]
    TooLarge(String),
    /// The backend returned something it should not have.
    #[error("store failure: {0}")]
    Backend(String),
    /// The store does not do this (a test double without indexes).
    #[error("not supported by this store: {0}")]
    Unsupported(&'static str),
}

/// Strongly consistent, partitioned, conditionally written storage.
///
/// `now_ms` is passed in (not read from a clock) so expiry is testable and the
/// core stays clock-free.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Reads `keys` of `partition`; absent or expired items are `None`, in order.
    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError>;

    /// Applies `writes` to `partition` atomically if every condition holds, else
    /// writes nothing and returns [`StoreError::ConditionFailed`].
    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError>;

    /// Keys of unexpired items in `partition` that start with `prefix`, sorted.
    async fn list(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError>;

    /// Unexpired items of `partition` whose keys start with `prefix`, sorted by key.
    ///
    /// Not one snapshot: items written while the scan runs may or may not appear. Meant
    /// for write-once items (history pages). The provided method lists the keys, then
    /// reads them 100 at a time; stores with a range read do it in fewer calls.
    async fn scan(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<Item>, StoreError> {
        let keys = self.list(partition, prefix, now_ms).await?;
        let mut items = Vec::with_capacity(keys.len());
        for batch in keys.chunks(100) {
            let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
            items.extend(
                self.get(partition, &refs, now_ms)
                    .await?
                    .into_iter()
                    .flatten(),
            );
        }
        Ok(items)
    }

    /// Up to `limit` live items listed under `scope`, highest rank first (ties by
    /// partition, then key, ascending), after `after` (a hit of an earlier page) when
    /// given. See the module docs for what a hit promises.
    async fn list_index(
        &self,
        scope: &str,
        after: Option<&IndexHit>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<IndexHit>, StoreError> {
        let _ = (scope, after, limit, now_ms);
        Err(StoreError::Unsupported("list_index"))
    }

    /// The backend's name as OpenTelemetry's `db.system.name` spells it (`dynamodb`,
    /// `sqlite`, `memory`, `durable_object`): the attribute of this store's call spans.
    fn system_name(&self) -> &'static str {
        "other"
    }

    /// Reads one key: [`Store::get`] of a single key.
    async fn get_one(
        &self,
        partition: &str,
        key: &str,
        now_ms: u64,
    ) -> Result<Option<Item>, StoreError> {
        Ok(self
            .get(partition, &[key], now_ms)
            .await?
            .into_iter()
            .next()
            .flatten())
    }
}

#[async_trait]
impl<S: Store + ?Sized> Store for std::sync::Arc<S> {
    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        (**self).get(partition, keys, now_ms).await
    }
    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        (**self).commit(partition, writes, now_ms).await
    }
    async fn list(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        (**self).list(partition, prefix, now_ms).await
    }
    async fn scan(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<Item>, StoreError> {
        (**self).scan(partition, prefix, now_ms).await
    }
    async fn list_index(
        &self,
        scope: &str,
        after: Option<&IndexHit>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<IndexHit>, StoreError> {
        (**self).list_index(scope, after, limit, now_ms).await
    }
    fn system_name(&self) -> &'static str {
        (**self).system_name()
    }
}

/// Checks one condition against the current item (already filtered for expiry).
pub fn condition_holds(condition: Condition, current: Option<&Item>) -> bool {
    match condition {
        Condition::Always => true,
        Condition::Absent => current.is_none(),
        Condition::Version(v) => current.is_some_and(|item| item.version == v),
    }
}

/// Whether an item is live at `now_ms`.
pub fn is_live(expires_at_ms: Option<u64>, now_ms: u64) -> bool {
    expires_at_ms.is_none_or(|at| at > now_ms)
}
