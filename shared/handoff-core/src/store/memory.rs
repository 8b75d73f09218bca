//! The in-memory store: the reference semantics the conformance suite is written against.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use async_trait::async_trait;

use super::{
    IndexEntry, IndexHit, Item, Store, StoreError, Write, WriteOp, condition_holds, is_live,
};

mod index;
mod items;

use index::Listings;
use items::Items;

/// What a held item costs besides its key and value bytes: its slot in the partition's
/// vector (with the vector's spare room) and the allocations' rounding, roughly.
const ITEM_OVERHEAD: usize = 112;
/// What a held partition costs besides its items: its entries in the store's maps and
/// its name (twice).
const PARTITION_OVERHEAD: usize = 160;

/// Partitions a commit sweeps at most, due ones first: however many threads expire at
/// once, no commit waits on more than this many (the next commits take the rest).
const SWEEP_LIMIT: usize = 16;

/// The variable that sets a host's memory store budget ([`MemoryStore::from_lookup`]).
pub const MAX_BYTES_VAR: &str = "HANDOFF_MEMORY_MAX_BYTES";
/// A host's memory store budget when [`MAX_BYTES_VAR`] is not set: 16 MiB, a few thousand
/// short conversations.
pub const DEFAULT_MAX_BYTES: usize = 16 * 1024 * 1024;

/// A host's budget: `HANDOFF_MEMORY_MAX_BYTES` bytes (default [`DEFAULT_MAX_BYTES`]);
/// `0` = none (`Ok(None)`).
pub fn max_bytes_from_lookup(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Option<usize>, StoreError> {
    let max_bytes = match lookup(MAX_BYTES_VAR) {
        None => DEFAULT_MAX_BYTES,
        Some(text) => text.trim().parse::<usize>().map_err(|_| {
            StoreError::Backend(format!(
                "{MAX_BYTES_VAR}=`{text}`: expected a number of bytes (0 = no budget)"
            ))
        })?,
    };
    Ok((max_bytes > 0).then_some(max_bytes))
}

/// All partitions under one mutex. Not durable; for tests and `HANDOFF_STORE=memory`.
///
/// Memory follows the live data, not every thread ever run:
/// - Expired items are removed physically: the store keeps its partitions in order of
///   their earliest expiry, and a commit first sweeps the ones whose expiry has passed
///   (at most [`SWEEP_LIMIT`], earliest first), dropping their expired items, and the
///   partitions left empty. A sweep costs what it frees, not what the store holds: a
///   commit never visits a partition with nothing due.
/// - With a byte budget ([`MemoryStore::with_max_bytes`]), a commit that takes the store
///   over it drops whole partitions whose every item expires anyway (a thread's records),
///   least recently written first, as if they had expired early; the partition just
///   written is never dropped, nor one holding an item without an expiry (an
///   application's own data). A process that keeps serving therefore stays within a
///   bounded size, at the price of forgetting the threads nobody wrote for longest (an
///   evicted thread reads as new; a duplicate of one of its old requests runs again). Use
///   a durable store for anything that must be kept.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    partitions: HashMap<String, Partition>,
    /// The name of every partition holding an item with an expiry, by that partition's
    /// `(next_expiry, serial)`: what the sweeps visit, earliest first.
    expiring: BTreeMap<(u64, u64), String>,
    /// What the evictable partitions hold, by the estimate of [`item_bytes`]: what the
    /// budget bounds.
    budgeted_bytes: usize,
    /// The budget, if any.
    max_bytes: Option<usize>,
    /// The partitions the budget may drop, by their last write (a commit counter),
    /// oldest first.
    by_last_write: BTreeMap<u64, String>,
    writes: u64,
    /// The index entries of the items that carry one ([`Store::list_index`]).
    listings: Listings,
}

#[derive(Debug, Default)]
struct Partition {
    items: Items,
    bytes: usize,
    last_write: u64,
    /// Items without an expiry: while there are any, the budget keeps the partition.
    permanent: usize,
    /// When the first of its items expires, or earlier: a replaced or deleted item's
    /// expiry stays until a sweep finds nothing due and takes the true one.
    next_expiry: Option<u64>,
    /// Tells it from the partitions expiring at the same time: the commit that created it.
    serial: u64,
}

fn item_bytes(item: &Item) -> usize {
    ITEM_OVERHEAD + item.key.len() + item.value.capacity()
}

/// `at`, or `next` if that is sooner.
fn earliest(next: Option<u64>, at: u64) -> u64 {
    next.map_or(at, |next| next.min(at))
}

fn partition_bytes(name: &str) -> usize {
    PARTITION_OVERHEAD + 2 * name.len()
}

impl Partition {
    /// What this partition counts against the budget: all of it while it may be
    /// dropped, nothing while it holds an item without an expiry.
    fn budgeted(&self, name: &str) -> usize {
        if self.permanent == 0 {
            self.bytes + partition_bytes(name)
        } else {
            0
        }
    }

    /// The item under `key`, unless absent or expired at `now_ms`.
    fn live(&self, key: &str, now_ms: u64) -> Option<&Item> {
        self.items
            .get(key)
            .filter(|item| is_live(item.expires_at_ms, now_ms))
    }

    /// Drops the items expired at `now_ms`, telling `gone` each one's key, and learns when
    /// the next one expires.
    fn drop_expired(&mut self, now_ms: u64, mut gone: impl FnMut(&str)) {
        let mut freed = 0;
        let mut next_expiry = None;
        self.items.retain(|item| {
            let live = is_live(item.expires_at_ms, now_ms);
            if !live {
                gone(&item.key);
                freed += item_bytes(item);
            } else if let Some(at) = item.expires_at_ms {
                next_expiry = Some(earliest(next_expiry, at));
            }
            live
        });
        self.bytes -= freed;
        self.next_expiry = next_expiry;
    }

    /// Whether an item may have expired by `now_ms`.
    fn has_due(&self, now_ms: u64) -> bool {
        self.next_expiry
            .is_some_and(|at| !is_live(Some(at), now_ms))
    }

    /// Counts `item` in (`added`) or out of the partition's totals.
    fn count(&mut self, item: &Item, added: bool) {
        let permanent = usize::from(item.expires_at_ms.is_none());
        if added {
            self.bytes += item_bytes(item);
            self.permanent += permanent;
            if let Some(at) = item.expires_at_ms {
                self.next_expiry = Some(earliest(self.next_expiry, at));
            }
        } else {
            self.bytes -= item_bytes(item);
            self.permanent -= permanent;
        }
    }

    /// Applies `writes` if every condition holds, else changes nothing. Returns the
    /// listing changes: each written key with its new entry (`None`: unlisted).
    fn apply(
        &mut self,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<Vec<(String, Option<IndexEntry>)>, StoreError> {
        for (index, write) in writes.iter().enumerate() {
            if !condition_holds(write.condition, self.live(&write.key, now_ms)) {
                return Err(StoreError::ConditionFailed { index });
            }
        }
        let mut listed = Vec::new();
        for write in writes {
            if !matches!(write.op, WriteOp::Check) {
                listed.push((write.key.clone(), write.index));
            }
            match write.op {
                WriteOp::Put {
                    value,
                    expires_at_ms,
                } => {
                    let version = self.live(&write.key, now_ms).map_or(1, |i| i.version + 1);
                    let item = Item {
                        key: write.key,
                        version,
                        value,
                        expires_at_ms,
                    };
                    self.count(&item, true);
                    if let Some(old) = self.items.insert(item) {
                        self.count(&old, false);
                    }
                }
                WriteOp::Delete => {
                    if let Some(old) = self.items.remove(&write.key) {
                        self.count(&old, false);
                    }
                }
                WriteOp::Check => {}
            }
        }
        Ok(listed)
    }
}

impl Inner {
    /// Sweeps the partitions whose next expiry has passed (at most [`SWEEP_LIMIT`]).
    fn sweep_expired(&mut self, now_ms: u64) {
        for _ in 0..SWEEP_LIMIT {
            let Some(entry) = self.expiring.first_entry() else {
                return;
            };
            if is_live(Some(entry.key().0), now_ms) {
                return;
            }
            let name = entry.remove();
            let Some(partition) = self.partitions.get_mut(&name) else {
                continue;
            };
            let before = partition.budgeted(&name);
            let listings = &mut self.listings;
            partition.drop_expired(now_ms, |key| listings.set(&name, key, None));
            let after = partition.budgeted(&name);
            self.budgeted_bytes = self.budgeted_bytes + after - before;
            if partition.items.is_empty() {
                self.remove_partition(&name);
            } else if let Some(at) = partition.next_expiry {
                self.expiring.insert((at, partition.serial), name);
            }
        }
    }

    /// Forgets a partition and its items' listing entries (left behind, the entries of
    /// every thread the budget dropped grew the listings without bound: 99 MiB after 26 s
    /// of `make bench` pairs, against a 16 MiB budget).
    fn remove_partition(&mut self, name: &str) {
        if let Some(partition) = self.partitions.remove(name) {
            self.listings.forget_partition(name);
            self.budgeted_bytes -= partition.budgeted(name);
            self.by_last_write.remove(&partition.last_write);
            if let Some(at) = partition.next_expiry {
                self.expiring.remove(&(at, partition.serial));
            }
        }
    }

    /// Drops the least recently written evictable partitions (never `keep`) until within
    /// budget, or until none is left to drop.
    fn evict_over_budget(&mut self, keep: &str) {
        let Some(max_bytes) = self.max_bytes else {
            return;
        };
        while self.budgeted_bytes > max_bytes {
            let Some(oldest) = self
                .by_last_write
                .values()
                .find(|name| name.as_str() != keep)
                .cloned()
            else {
                return;
            };
            self.remove_partition(&oldest);
        }
    }

    fn commit(&mut self, name: &str, writes: Vec<Write>, now_ms: u64) -> Result<(), StoreError> {
        self.sweep_expired(now_ms);
        self.writes += 1;
        let write = self.writes;
        let (partition, before) = match self.partitions.get_mut(name) {
            Some(partition) => {
                let before = partition.budgeted(name);
                (partition, before)
            }
            // Counted once written.
            None => {
                let created = Partition {
                    serial: write,
                    ..Partition::default()
                };
                (self.partitions.entry(name.to_owned()).or_insert(created), 0)
            }
        };
        let indexed = partition.next_expiry;
        // Expired items read as absent already; removing them changes nothing visible
        // (the sweep above takes them unless it reached its limit first).
        if partition.has_due(now_ms) {
            let listings = &mut self.listings;
            partition.drop_expired(now_ms, |key| listings.set(name, key, None));
        }
        let result = partition.apply(writes, now_ms);
        if let Ok(listed) = &result {
            for (key, entry) in listed {
                self.listings.set(name, key, entry.clone());
            }
        }
        let result = result.map(drop);
        let Some(partition) = self.partitions.get_mut(name) else {
            return result;
        };
        let (after, empty, evictable, last, next_expiry, serial) = (
            partition.budgeted(name),
            partition.items.is_empty(),
            partition.permanent == 0,
            std::mem::replace(&mut partition.last_write, write),
            partition.next_expiry,
            partition.serial,
        );
        self.budgeted_bytes = self.budgeted_bytes + after - before;
        // The name moves from its old entries to its new ones (copied only for a first).
        let listed = self.by_last_write.remove(&last);
        if evictable {
            let name = listed.unwrap_or_else(|| name.to_owned());
            self.by_last_write.insert(write, name);
        }
        if indexed != next_expiry {
            let listed = indexed.and_then(|at| self.expiring.remove(&(at, serial)));
            if let Some(at) = next_expiry {
                let name = listed.unwrap_or_else(|| name.to_owned());
                self.expiring.insert((at, serial), name);
            }
        }
        if empty {
            self.remove_partition(name);
        }
        self.evict_over_budget(name);
        result
    }
}

impl MemoryStore {
    /// An empty store without a byte budget: it holds every live item.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store that keeps what it holds within about `max_bytes` (keys and values
    /// plus a per-item overhead) by forgetting the least recently written threads.
    pub fn with_max_bytes(max_bytes: usize) -> Self {
        Self::with_budget(Some(max_bytes))
    }

    /// [`MemoryStore::with_max_bytes`] with a budget, [`MemoryStore::new`] without one.
    pub fn with_budget(max_bytes: Option<usize>) -> Self {
        MemoryStore {
            inner: Mutex::new(Inner {
                max_bytes,
                ..Inner::default()
            }),
        }
    }

    /// The store a host's settings ask for ([`max_bytes_from_lookup`]).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, StoreError> {
        Ok(Self::with_budget(max_bytes_from_lookup(lookup)?))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A poisoned lock only means another caller panicked mid-read; the map itself is never left half-written.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The bytes the budget counts: those of the partitions it may drop (a partition
    /// holding an item without an expiry is neither counted nor dropped).
    pub fn budgeted_bytes(&self) -> usize {
        self.lock().budgeted_bytes
    }

    /// Items physically held, expired or not (what the sweeps bound).
    #[cfg(test)]
    fn item_count(&self) -> usize {
        self.lock().partitions.values().map(|p| p.items.len()).sum()
    }

    /// Index entries held, live items or not (dropped ones leave lazily).
    #[cfg(test)]
    fn listing_count(&self) -> usize {
        self.lock().listings.len()
    }

    /// Partitions physically held.
    #[cfg(test)]
    fn partition_count(&self) -> usize {
        self.lock().partitions.len()
    }
}

#[async_trait]
impl Store for MemoryStore {
    fn system_name(&self) -> &'static str {
        "memory"
    }

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
            .map(|k| items.and_then(|p| p.live(k, now_ms)).cloned())
            .collect())
    }

    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        self.lock().commit(partition, writes, now_ms)
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
                p.items
                    .with_prefix(prefix)
                    .filter(|i| is_live(i.expires_at_ms, now_ms))
                    .map(|i| i.key.clone())
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn list_index(
        &self,
        scope: &str,
        after: Option<&IndexHit>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<IndexHit>, StoreError> {
        let mut inner = self.lock();
        let Inner {
            partitions,
            listings,
            ..
        } = &mut *inner;
        let is_live_item = |partition: &str, key: &str| {
            partitions
                .get(partition)
                .and_then(|p| p.live(key, now_ms))
                .is_some()
        };
        Ok(listings.page(scope, after, limit, is_live_item))
    }
}

#[cfg(test)]
mod tests;
