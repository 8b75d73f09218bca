//! The memory store's own bookkeeping: expiry sweeps and the byte budget.
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
        // Other partitions, with nothing that expires.
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

/// Threads `t0..t{count}`, each with one item expiring at `expires_at_ms`, written at 0.
async fn threads(store: &MemoryStore, count: usize, expires_at_ms: u64) {
    for n in 0..count {
        let writes = vec![put("k", Some(expires_at_ms))];
        store.commit(&format!("t{n}"), writes, 0).await.unwrap();
    }
}

/// A put of `k` without an expiry into `partition`, at `now_ms`.
async fn touch(store: &MemoryStore, partition: &str, now_ms: u64) {
    let writes = vec![put("k", None)];
    store.commit(partition, writes, now_ms).await.unwrap();
}

#[test]
fn a_commit_sweeps_the_partitions_whose_expiry_passed_and_no_others() {
    let store = MemoryStore::new();
    block_on(async {
        threads(&store, 100, 1_000_000).await;
        let lease = vec![put("lease", Some(1_000))];
        store.commit("due", lease, 0).await.unwrap();
        touch(&store, "other", 2_000).await;
        // At once, not after a round of commits as long as the store.
        assert_eq!(store.partition_count(), 101, "`due` is gone, the rest stay");
        assert_eq!(store.item_count(), 101);
        assert!(!store.lock().partitions.contains_key("due"));
    });
}

#[test]
fn a_commit_sweeps_a_bounded_number_of_partitions() {
    let store = MemoryStore::new();
    block_on(async {
        threads(&store, 40, 1_000).await;
        touch(&store, "live", 2_000).await;
        assert_eq!(store.partition_count(), 40 - SWEEP_LIMIT + 1);
        touch(&store, "live", 2_000).await;
        touch(&store, "live", 2_000).await;
        assert_eq!(store.partition_count(), 1, "the next commits take the rest");
        assert_eq!(store.budgeted_bytes(), 0);
    });
}

#[test]
fn an_item_replaced_with_a_later_expiry_is_swept_when_that_one_passes() {
    let store = MemoryStore::new();
    block_on(async {
        store
            .commit("t", vec![put("a", Some(10))], 0)
            .await
            .unwrap();
        store
            .commit("t", vec![put("a", Some(100))], 0)
            .await
            .unwrap();
        // The first expiry passes: the sweep finds `a` alive and learns the new one.
        store.commit("x", vec![put("k", None)], 20).await.unwrap();
        assert_eq!(store.item_count(), 2);
        assert_eq!(store.lock().expiring.len(), 1);
        store.commit("x", vec![put("k", None)], 100).await.unwrap();
        assert_eq!(
            store.partition_count(),
            1,
            "`t` expired whole and is dropped"
        );
        assert!(store.lock().expiring.is_empty());
        // A deleted item leaves no entry behind with its partition.
        store
            .commit("u", vec![put("a", Some(500))], 100)
            .await
            .unwrap();
        let delete = Write::delete("a", Condition::Always);
        store.commit("u", vec![delete], 100).await.unwrap();
        assert!(store.lock().expiring.is_empty());
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

/// A thread's kind of item: it expires some day.
fn put_bytes(key: &str, len: usize) -> Write {
    Write::put(key, Condition::Always, vec![b'x'; len], Some(u64::MAX))
}

#[test]
fn a_budget_forgets_the_least_recently_written_threads() {
    let store = MemoryStore::with_max_bytes(20_000);
    block_on(async {
        for n in 0..1_000 {
            let writes = vec![put_bytes("run", 500), put_bytes("thread", 300)];
            store.commit(&format!("t{n}"), writes, 0).await.unwrap();
            assert!(
                store.budgeted_bytes() <= 20_000,
                "{} after t{n}",
                store.budgeted_bytes()
            );
        }
        // Thread 0 was written again late: it counts as recent.
        store
            .commit("t0", vec![put_bytes("run", 10)], 0)
            .await
            .unwrap();
        store
            .commit("t999", vec![put_bytes("extra", 10)], 0)
            .await
            .unwrap();
        let kept = store.partition_count();
        assert!((10..=20).contains(&kept), "{kept} threads kept");
        assert_eq!(store.list("t0", "", 0).await.unwrap(), ["run"]);
        assert_eq!(store.list("t999", "", 0).await.unwrap().len(), 3);
        // The oldest are gone whole, not in part.
        assert!(store.list("t1", "", 0).await.unwrap().is_empty());
        assert_eq!(store.get("t1", &["run"], 0).await.unwrap(), [None]);
        // A forgotten thread starts over: a create-if-absent succeeds again.
        let create = Write::put("run", Condition::Absent, b"again".to_vec(), None);
        store.commit("t1", vec![create], 0).await.unwrap();
    });
}

#[test]
fn a_budget_never_drops_data_stored_without_an_expiry() {
    let store = MemoryStore::with_max_bytes(5_000);
    block_on(async {
        let ledger = Write::put("refunds", Condition::Always, vec![b'1'; 100], None);
        store.commit("ledger", vec![ledger], 0).await.unwrap();
        // A thread's item beside it does not make the partition evictable either.
        store
            .commit("ledger", vec![put_bytes("note", 100)], 0)
            .await
            .unwrap();
        for n in 0..100 {
            store
                .commit(&format!("t{n}"), vec![put_bytes("run", 500)], 0)
                .await
                .unwrap();
        }
        assert!(store.budgeted_bytes() <= 5_000);
        assert_eq!(
            store.list("ledger", "", 0).await.unwrap(),
            ["note", "refunds"]
        );
        // Once its permanent item is gone, the partition is a thread like any other.
        let delete = Write::delete("refunds", Condition::Always);
        store.commit("ledger", vec![delete], 0).await.unwrap();
        for n in 100..200 {
            store
                .commit(&format!("t{n}"), vec![put_bytes("run", 500)], 0)
                .await
                .unwrap();
        }
        assert!(store.list("ledger", "", 0).await.unwrap().is_empty());
    });
}

#[test]
fn data_without_an_expiry_does_not_count_against_the_budget() {
    let store = MemoryStore::with_max_bytes(5_000);
    block_on(async {
        // Far more application data than the budget: an order ledger, say.
        for n in 0..100 {
            let ledger = Write::put("refunds", Condition::Always, vec![b'1'; 200], None);
            store
                .commit(&format!("ledger#{n}"), vec![ledger], 0)
                .await
                .unwrap();
        }
        assert_eq!(store.budgeted_bytes(), 0);
        // Threads that fit the budget are all kept beside it.
        for n in 0..4 {
            store
                .commit(&format!("t{n}"), vec![put_bytes("run", 500)], 0)
                .await
                .unwrap();
        }
        for n in 0..4 {
            assert!(store.get(&format!("t{n}"), &["run"], 0).await.unwrap()[0].is_some());
        }
        assert_eq!(store.partition_count(), 104);
    });
}

#[test]
fn the_thread_being_written_is_kept_even_over_the_budget() {
    let store = MemoryStore::with_max_bytes(1_000);
    block_on(async {
        store
            .commit("small", vec![put_bytes("k", 10)], 0)
            .await
            .unwrap();
        store
            .commit("big", vec![put_bytes("k", 5_000)], 0)
            .await
            .unwrap();
        assert_eq!(store.partition_count(), 1);
        assert_eq!(
            store.get("big", &["k"], 0).await.unwrap()[0]
                .as_ref()
                .unwrap()
                .value
                .len(),
            5_000
        );
    });
}

#[test]
fn budgeted_bytes_follow_puts_replacements_deletes_and_expiry() {
    let store = MemoryStore::new();
    block_on(async {
        assert_eq!(store.budgeted_bytes(), 0);
        store
            .commit("t", vec![put_bytes("a", 100)], 0)
            .await
            .unwrap();
        let one = store.budgeted_bytes();
        assert!(one > 100);
        // Replacing an item by one of the same size changes nothing.
        store
            .commit("t", vec![put_bytes("a", 100)], 0)
            .await
            .unwrap();
        assert_eq!(store.budgeted_bytes(), one);
        store
            .commit("t", vec![put_bytes("b", 1_000)], 0)
            .await
            .unwrap();
        assert!(store.budgeted_bytes() > one + 1_000);
        // A failed commit changes nothing.
        let stale = Write::check("a", Condition::Version(9));
        assert!(
            store
                .commit("t", vec![stale, put_bytes("c", 50)], 0)
                .await
                .is_err()
        );
        store
            .commit("u", vec![put("e", Some(10))], 0)
            .await
            .unwrap();
        store
            .commit("t", vec![Write::delete("a", Condition::Always)], 0)
            .await
            .unwrap();
        store
            .commit("t", vec![Write::delete("b", Condition::Always)], 0)
            .await
            .unwrap();
        // `u` expires and the next sweeps remove it: nothing is left, nothing is owed.
        store
            .commit("v", vec![Write::delete("x", Condition::Always)], 20)
            .await
            .unwrap();
        store
            .commit("v", vec![Write::delete("x", Condition::Always)], 20)
            .await
            .unwrap();
        assert_eq!(store.partition_count(), 0);
        assert_eq!(store.budgeted_bytes(), 0);
    });
}

#[test]
fn hosts_get_a_budget_unless_they_turn_it_off() {
    let vars = |value: Option<&'static str>| {
        move |name: &str| {
            (name == MAX_BYTES_VAR)
                .then_some(value)
                .flatten()
                .map(str::to_owned)
        }
    };
    assert_eq!(
        max_bytes_from_lookup(vars(None)).unwrap(),
        Some(DEFAULT_MAX_BYTES)
    );
    assert_eq!(
        max_bytes_from_lookup(vars(Some("4096"))).unwrap(),
        Some(4096)
    );
    assert_eq!(max_bytes_from_lookup(vars(Some("0"))).unwrap(), None);
    let err = max_bytes_from_lookup(vars(Some("lots"))).unwrap_err();
    assert!(
        err.to_string().contains("HANDOFF_MEMORY_MAX_BYTES"),
        "{err}"
    );
    let store = MemoryStore::from_lookup(vars(Some("4096"))).unwrap();
    assert_eq!(store.lock().max_bytes, Some(4096));
}

/// An indexed item that expires leaves its scope's listing, and the listing forgets it
/// once a page passes it (nothing else tells the listings about expiry).
#[test]
fn expired_listing_entries_are_forgotten() {
    use crate::store::IndexEntry;
    let store = MemoryStore::new();
    let entry = IndexEntry {
        scope: "owner".into(),
        rank: 1,
    };
    let write = put("head", Some(10)).indexed(entry);
    block_on(store.commit("t1", vec![write], 0)).unwrap();
    assert_eq!(store.listing_count(), 1);
    assert_eq!(
        block_on(store.list_index("owner", None, 10, 5))
            .unwrap()
            .len(),
        1
    );
    assert!(
        block_on(store.list_index("owner", None, 10, 10))
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.listing_count(), 0, "a page forgets what it skipped");
}

/// Listing entries leave with their items: a thread the budget drops, and an item a
/// sweep finds expired, take theirs along, so the listings stay as bounded as the items
/// (before, `make bench`'s pairs grew the dev server to 99 MiB: nobody pages a listing there).
#[test]
fn listings_shrink_with_the_budget_and_the_sweep() {
    use crate::store::IndexEntry;
    let listed = |key: &str, expires: Option<u64>| {
        Write::put(key, Condition::Always, vec![b'x'; 300], expires).indexed(IndexEntry {
            scope: "owner".into(),
            rank: 1,
        })
    };
    let store = MemoryStore::with_max_bytes(20_000);
    block_on(async {
        for n in 0..1_000 {
            let writes = vec![listed("head", Some(1_000_000)), put_bytes("run", 500)];
            store.commit(&format!("t{n}"), writes, 0).await.unwrap();
        }
        let kept = store.partition_count();
        assert_eq!(store.listing_count(), kept, "one entry per thread kept");

        // Expired, then swept by a later commit: unlisted without a page passing them.
        let store = MemoryStore::new();
        // Fewer than one commit's sweep takes.
        for n in 0..8 {
            let writes = vec![listed("head", Some(10)), put_bytes("run", 10)];
            store.commit(&format!("e{n}"), writes, 0).await.unwrap();
        }
        store
            .commit("late", vec![put_bytes("run", 10)], 20)
            .await
            .unwrap();
        assert_eq!(store.listing_count(), 0);
    });
}
