//! Purging long-expired rows: in bounded batches, pausing once nothing is left.

mod raw;

use futures::executor::block_on;
use handoff_core::{Condition, Store, StoreError};
use handoff_store_sqlite::{SqliteOptions, SqliteStore};
use raw::{NOW, get_one, put, raw_keys, raw_row_count};

#[test]
fn long_expired_rows_are_purged_in_bounded_batches() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let options = SqliteOptions::default()
        .with_purge_expired_after(Some(1_000))
        .with_purge_batch(2);
    let store = SqliteStore::open_with(&path, options).expect("open");
    let writes = (0..5)
        .map(|n| put(&format!("old#{n}"), Condition::Absent, b"x", Some(NOW + n)))
        .collect();
    block_on(store.commit("p", writes, NOW)).expect("write expiring rows");
    block_on(store.commit(
        "p",
        vec![put("recent", Condition::Absent, b"x", Some(NOW + 5_000))],
        NOW,
    ))
    .expect("write");
    block_on(store.commit("p", vec![put("live", Condition::Absent, b"x", None)], NOW))
        .expect("write");
    assert_eq!(raw_row_count(&path), 7);

    // From 1.5 s after the old rows expired, a commit a second: the sweep deletes at most two
    // rows per group (it examines two), until every old row is gone; `recent` (not purgeable
    // before NOW + 6 s) and `live` stay.
    let mut rows = raw_row_count(&path);
    let mut now = NOW + 1_004 + 500;
    for n in 0.. {
        if now >= NOW + 6_000 {
            break;
        }
        block_on(store.commit(
            "q",
            vec![put(&format!("k{n}"), Condition::Absent, b"x", None)],
            now,
        ))
        .expect("commit");
        let after = raw_row_count(&path);
        assert!(
            rows + 1 - after <= 2,
            "{} rows purged by one group",
            rows + 1 - after
        );
        rows = after;
        now += 1_000;
    }
    assert_eq!(raw_keys(&path, "p"), ["live", "recent"]);
    // A failed commit purges nothing.
    let much_later = NOW + 10_000;
    let failed = block_on(store.commit(
        "q",
        vec![put("k0", Condition::Absent, b"x", None)],
        much_later,
    ));
    assert_eq!(failed, Err(StoreError::ConditionFailed { index: 0 }));
    assert_eq!(raw_row_count(&path), rows);
    // Purging never changes what callers see: an expired row and a purged one both read as absent
    // and are both replaced at version 1.
    block_on(store.commit(
        "p",
        vec![put("recent", Condition::Absent, b"y", None)],
        much_later,
    ))
    .expect("replace");
    assert_eq!(
        get_one(&store, "p", "recent", much_later).map(|i| i.version),
        Some(1)
    );
}

#[test]
fn purging_pauses_for_a_second_once_nothing_is_left() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let options = SqliteOptions::default().with_purge_expired_after(Some(1_000));
    let store = SqliteStore::open_with(&path, options).expect("open");
    let commit_at = |key: &str, now: u64| {
        block_on(store.commit("q", vec![put(key, Condition::Absent, b"x", None)], now))
            .expect("commit")
    };
    // Expired 800 ms before NOW: not yet past the one-second horizon at NOW, so this purge
    // finds nothing and pauses.
    block_on(store.commit(
        "p",
        vec![put("old", Condition::Absent, b"x", Some(NOW - 800))],
        NOW,
    ))
    .expect("write");
    commit_at("a", NOW + 100);
    // Half a second later the row is purgeable, but the purge is still paused.
    commit_at("b", NOW + 500);
    assert_eq!(raw_row_count(&path), 3);
    // A second after the pause began, it looks again.
    commit_at("c", NOW + 1_000);
    assert_eq!(raw_row_count(&path), 3, "old went, c came");
    assert_eq!(
        block_on(store.list("p", "", NOW)).expect("list"),
        Vec::<String>::new()
    );
}
