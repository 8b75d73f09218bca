//! Every check can fail: each runs against a deliberately broken copy of the reference store and
//! must panic. A `Bug::None` copy passes the whole suite, so the failures come from the bugs.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use async_trait::async_trait;
use futures::executor::block_on;
use handoff_core::store::{
    Condition, IndexEntry, IndexHit, Item, Store, StoreError, Write, WriteOp, condition_holds,
    is_live,
};
use handoff_store_conformance as conformance;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bug {
    None,
    /// `Absent` holds even over a live item.
    AbsentAlwaysHolds,
    /// `Version(v)` holds whenever the item exists.
    VersionIgnored,
    /// A put keeps the old version.
    PutKeepsVersion,
    /// Writes before the failing one are applied.
    PartialBatch,
    /// The last failing index is reported instead of the first.
    LastFailingIndex,
    /// `Check` bumps the version.
    CheckBumpsVersion,
    /// `Delete` does nothing.
    DeleteIgnored,
    /// `get` answers in key order.
    GetSorted,
    /// `get` leaves out missing keys.
    GetSkipsMissing,
    /// `get` reads key by key, yielding in between.
    SplitGet,
    /// Items never expire.
    ExpiryIgnored,
    /// Items are still live at their `expires_at_ms`.
    ExpiryOffByOne,
    /// A put over an expired item continues its version count.
    ExpiredVersionContinues,
    /// `list` shows expired items.
    ListIncludesExpired,
    /// Values are cut at 1 MiB.
    TruncatesLargeValues,
    /// Expiries are stored as f32.
    ExpiryAsF32,
    /// `list` answers in reverse order.
    ListUnsorted,
    /// `list` looks at every partition.
    ListIgnoresPartition,
    /// `list` compares case-insensitively.
    ListCaseInsensitive,
    /// `list` treats `_` in the prefix as a wildcard (SQL `LIKE`).
    ListLikeWildcards,
    /// All partitions are one.
    PartitionsShared,
    /// Conditions are checked, then the lock is released before the writes are applied.
    RacyCommit,
    /// `list_index` answers lowest rank first.
    ListingAscending,
    /// A put without an index entry keeps the item listed.
    ListingKeepsUnindexed,
    /// `list_index` shows expired items.
    ListingIncludesExpired,
    /// `list_index` looks at every scope.
    ListingIgnoresScope,
    /// A page starts with the hit it continues after.
    ListingRepeatsAfter,
}

#[derive(Debug)]
struct Mutant {
    bug: Bug,
    partitions: Mutex<HashMap<String, BTreeMap<String, Item>>>,
    /// (partition, key) → its listing. Locked after `partitions`, never before.
    listings: Mutex<BTreeMap<(String, String), IndexEntry>>,
}

impl Mutant {
    fn new(bug: Bug) -> Self {
        Self {
            bug,
            partitions: Mutex::default(),
            listings: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, BTreeMap<String, Item>>> {
        self.partitions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn partition<'a>(&self, partition: &'a str) -> &'a str {
        if self.bug == Bug::PartitionsShared {
            ""
        } else {
            partition
        }
    }

    fn live(&self, expires_at_ms: Option<u64>, now_ms: u64) -> bool {
        match self.bug {
            Bug::ExpiryIgnored => true,
            Bug::ExpiryOffByOne => expires_at_ms.is_none_or(|at| at >= now_ms),
            _ => is_live(expires_at_ms, now_ms),
        }
    }

    fn holds(&self, condition: Condition, current: Option<&Item>) -> bool {
        match (self.bug, condition) {
            (Bug::AbsentAlwaysHolds, Condition::Absent) => true,
            (Bug::VersionIgnored, Condition::Version(_)) => current.is_some(),
            _ => condition_holds(condition, current),
        }
    }

    fn failing_index(
        &self,
        items: &BTreeMap<String, Item>,
        writes: &[Write],
        now_ms: u64,
    ) -> Option<usize> {
        let mut failing = writes.iter().enumerate().filter(|(_, w)| {
            let current = items
                .get(&w.key)
                .filter(|i| self.live(i.expires_at_ms, now_ms));
            !self.holds(w.condition, current)
        });
        if self.bug == Bug::LastFailingIndex {
            failing.last()
        } else {
            failing.next()
        }
        .map(|(i, _)| i)
    }

    fn relist(&self, partition: &str, key: &str, entry: Option<IndexEntry>) {
        let mut listings = self.listings.lock().unwrap_or_else(PoisonError::into_inner);
        let at = (partition.to_owned(), key.to_owned());
        match entry {
            Some(entry) => {
                listings.insert(at, entry);
            }
            None if self.bug == Bug::ListingKeepsUnindexed => {}
            None => {
                listings.remove(&at);
            }
        }
    }

    fn apply(
        &self,
        partition: &str,
        items: &mut BTreeMap<String, Item>,
        write: Write,
        now_ms: u64,
    ) {
        if matches!(write.op, WriteOp::Put { .. }) {
            self.relist(partition, &write.key, write.index.clone());
        }
        match write.op {
            WriteOp::Put {
                mut value,
                mut expires_at_ms,
            } => {
                let version = match items.get(&write.key) {
                    None => 1,
                    Some(i)
                        if !self.live(i.expires_at_ms, now_ms)
                            && self.bug != Bug::ExpiredVersionContinues =>
                    {
                        1
                    }
                    Some(i) if self.bug == Bug::PutKeepsVersion => i.version,
                    Some(i) => i.version + 1,
                };
                if self.bug == Bug::TruncatesLargeValues {
                    value.truncate(1 << 20);
                }
                if self.bug == Bug::ExpiryAsF32 {
                    expires_at_ms = expires_at_ms.map(|at| at as f32 as u64);
                }
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
                if self.bug != Bug::DeleteIgnored {
                    items.remove(&write.key);
                    self.listings
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&(partition.to_owned(), write.key));
                }
            }
            WriteOp::Check => {
                if self.bug == Bug::CheckBumpsVersion
                    && let Some(item) = items.get_mut(&write.key)
                {
                    item.version += 1;
                }
            }
        }
    }

    fn read(&self, partition: &str, key: &str, now_ms: u64) -> Option<Item> {
        let map = self.lock();
        map.get(self.partition(partition))
            .and_then(|p| p.get(key))
            .filter(|i| self.live(i.expires_at_ms, now_ms))
            .cloned()
    }
}

#[async_trait]
impl Store for Mutant {
    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        let mut keys: Vec<&str> = keys.to_vec();
        if self.bug == Bug::GetSorted {
            keys.sort_unstable();
        }
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            out.push(self.read(partition, key, now_ms));
            if self.bug == Bug::SplitGet {
                YieldNow(false).await;
            }
        }
        if self.bug == Bug::GetSkipsMissing {
            out.retain(Option::is_some);
        }
        Ok(out)
    }

    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let partition = self.partition(partition).to_owned();
        if self.bug == Bug::PartialBatch {
            let mut map = self.lock();
            let items = map.entry(partition.clone()).or_default();
            for (index, write) in writes.into_iter().enumerate() {
                if self
                    .failing_index(items, std::slice::from_ref(&write), now_ms)
                    .is_some()
                {
                    return Err(StoreError::ConditionFailed { index });
                }
                self.apply(&partition, items, write, now_ms);
            }
            return Ok(());
        }
        {
            let mut map = self.lock();
            let items = map.entry(partition.clone()).or_default();
            if let Some(index) = self.failing_index(items, &writes, now_ms) {
                return Err(StoreError::ConditionFailed { index });
            }
            if self.bug != Bug::RacyCommit {
                for write in writes {
                    self.apply(&partition, items, write, now_ms);
                }
                return Ok(());
            }
        }
        YieldNow(false).await;
        let mut map = self.lock();
        let items = map.entry(partition.clone()).or_default();
        for write in writes {
            self.apply(&partition, items, write, now_ms);
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
        let matches = |key: &str| match self.bug {
            Bug::ListCaseInsensitive => key.to_lowercase().starts_with(&prefix.to_lowercase()),
            Bug::ListLikeWildcards => {
                let (key, prefix): (Vec<char>, Vec<char>) =
                    (key.chars().collect(), prefix.chars().collect());
                key.len() >= prefix.len()
                    && prefix.iter().zip(&key).all(|(p, k)| *p == '_' || p == k)
            }
            _ => key.starts_with(prefix),
        };
        let partitions: Vec<&BTreeMap<String, Item>> = if self.bug == Bug::ListIgnoresPartition {
            map.values().collect()
        } else {
            map.get(self.partition(partition)).into_iter().collect()
        };
        let mut keys: Vec<String> = partitions
            .into_iter()
            .flat_map(|p| p.values())
            .filter(|i| matches(&i.key))
            .filter(|i| self.bug == Bug::ListIncludesExpired || self.live(i.expires_at_ms, now_ms))
            .map(|i| i.key.clone())
            .collect();
        keys.sort();
        if self.bug == Bug::ListUnsorted {
            keys.reverse();
        }
        Ok(keys)
    }

    async fn list_index(
        &self,
        scope: &str,
        after: Option<&IndexHit>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<IndexHit>, StoreError> {
        let map = self.lock();
        let listings = self.listings.lock().unwrap_or_else(PoisonError::into_inner);
        let mut hits: Vec<IndexHit> = listings
            .iter()
            .filter(|(_, entry)| self.bug == Bug::ListingIgnoresScope || entry.scope == scope)
            .filter(|((partition, key), _)| {
                self.bug == Bug::ListingIncludesExpired
                    || map
                        .get(partition)
                        .and_then(|items| items.get(key))
                        .is_some_and(|i| self.live(i.expires_at_ms, now_ms))
            })
            .map(|((partition, key), entry)| IndexHit {
                rank: entry.rank,
                partition: partition.clone(),
                key: key.clone(),
            })
            .collect();
        hits.sort_by(|a, b| {
            (Reverse(a.rank), &a.partition, &a.key).cmp(&(Reverse(b.rank), &b.partition, &b.key))
        });
        if self.bug == Bug::ListingAscending {
            hits.sort_by_key(|h| h.rank);
        }
        let hits = hits.into_iter().filter(|h| match after {
            None => true,
            Some(after) if self.bug == Bug::ListingRepeatsAfter => !after.follows(h),
            Some(after) => h.follows(after),
        });
        Ok(hits.take(limit).collect())
    }
}

struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

#[test]
fn the_unbroken_copy_passes_everything() {
    block_on(conformance::run_all(|| Mutant::new(Bug::None)));
}

macro_rules! must_fail {
    ($($name:ident: $check:ident against $bug:ident;)*) => {
        $(
            #[test]
            fn $name() {
                let store = Mutant::new(Bug::$bug);
                let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| block_on(conformance::$check(&store))));
                assert!(outcome.is_err(), "`{}` passed against a store with bug {:?}", stringify!($check), Bug::$bug);
            }
        )*
    };
}

must_fail! {
    create_if_absent_catches_racy_commit: create_if_absent_is_exclusive against RacyCommit;
    create_if_absent_catches_absent_always_holds: create_if_absent_is_exclusive against AbsentAlwaysHolds;
    create_if_absent_catches_partial_batch: create_if_absent_is_exclusive against PartialBatch;
    cas_catches_version_ignored: compare_and_set_rejects_stale_writers against VersionIgnored;
    cas_catches_put_keeps_version: compare_and_set_rejects_stale_writers against PutKeepsVersion;
    batch_catches_partial_batch: batch_is_all_or_nothing against PartialBatch;
    batch_catches_last_failing_index: batch_is_all_or_nothing against LastFailingIndex;
    check_catches_check_bumps_version: check_fences_without_writing against CheckBumpsVersion;
    check_catches_partial_batch: check_fences_without_writing against PartialBatch;
    lease_catches_put_keeps_version: expired_lease_can_be_taken_over against PutKeepsVersion;
    lease_catches_version_ignored: expired_lease_can_be_taken_over against VersionIgnored;
    delete_catches_delete_ignored: delete_removes_items against DeleteIgnored;
    get_catches_sorted: get_keeps_order_and_reports_missing against GetSorted;
    get_catches_skipped_missing: get_keeps_order_and_reports_missing against GetSkipsMissing;
    snapshot_catches_split_get: multi_key_get_is_consistent against SplitGet;
    expiry_catches_expiry_ignored: expiry_with_injected_clock against ExpiryIgnored;
    expiry_catches_off_by_one: expiry_with_injected_clock against ExpiryOffByOne;
    expiry_catches_continued_version: expiry_with_injected_clock against ExpiredVersionContinues;
    expiry_catches_listed_expired: expiry_with_injected_clock against ListIncludesExpired;
    expiry_catches_lossy_expiry: expiry_with_injected_clock against ExpiryAsF32;
    large_values_catch_truncation: large_values_round_trip against TruncatesLargeValues;
    list_catches_unsorted: list_by_prefix_is_sorted_and_bounded against ListUnsorted;
    list_catches_ignored_partition: list_by_prefix_is_sorted_and_bounded against ListIgnoresPartition;
    list_catches_case_insensitive: list_by_prefix_is_sorted_and_bounded against ListCaseInsensitive;
    list_catches_like_wildcards: list_by_prefix_is_sorted_and_bounded against ListLikeWildcards;
    partitions_catch_shared_partitions: partitions_are_isolated against PartitionsShared;
    no_lost_update_catches_racy_commit: concurrent_compare_and_set_loses_no_update against RacyCommit;
    no_lost_update_catches_version_ignored: concurrent_compare_and_set_loses_no_update against VersionIgnored;
    effect_catches_racy_commit: effect_executes_exactly_once against RacyCommit;
    effect_catches_absent_always_holds: effect_executes_exactly_once against AbsentAlwaysHolds;
    resumes_catch_racy_commit: concurrent_identical_resumes_start_one_run against RacyCommit;
    listing_catches_ascending: index_lists_across_partitions against ListingAscending;
    listing_catches_kept_unindexed: index_lists_across_partitions against ListingKeepsUnindexed;
    listing_catches_expired: index_lists_across_partitions against ListingIncludesExpired;
    listing_catches_ignored_scope: index_lists_across_partitions against ListingIgnoresScope;
    listing_catches_repeated_after: index_lists_across_partitions against ListingRepeatsAfter;
    listing_catches_delete_ignored: index_lists_across_partitions against DeleteIgnored;
    listing_catches_partial_batch: index_lists_across_partitions against PartialBatch;
}
