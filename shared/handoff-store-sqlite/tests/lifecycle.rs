//! What the conformance suite cannot see: the file, restarts, locking. The schema and its
//! migrations are in `schema.rs`, listings in `listings.rs`, purging in `purge.rs`.

mod raw;

use std::time::Duration;

use futures::executor::block_on;
use handoff_core::{Condition, Item, Store, StoreError};
use handoff_store_sqlite::{SqliteOptions, SqliteStore};
use raw::{NOW, get_one, put};

#[test]
fn data_survives_a_restart() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let big: Vec<u8> = (0..(1 << 20))
        .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    {
        let store = SqliteStore::open(&path).expect("open");
        block_on(async {
            store
                .commit(
                    "t1",
                    vec![put("thread", Condition::Absent, b"v1", None)],
                    NOW,
                )
                .await?;
            store
                .commit(
                    "t1",
                    vec![put("thread", Condition::Version(1), b"v2", None)],
                    NOW,
                )
                .await?;
            store
                .commit(
                    "t1",
                    vec![put("thread", Condition::Version(2), b"v3", None)],
                    NOW,
                )
                .await?;
            store
                .commit(
                    "t1",
                    vec![put("run#1", Condition::Absent, &big, Some(NOW + 60_000))],
                    NOW,
                )
                .await?;
            store
                .commit(
                    "t2",
                    vec![put("thread", Condition::Absent, b"other", None)],
                    NOW,
                )
                .await
        })
        .expect("write");
    }
    let store = SqliteStore::open(&path).expect("reopen");
    assert_eq!(store.path(), Some(path.as_path()));
    let items = block_on(store.get("t1", &["thread", "run#1"], NOW)).expect("read back");
    assert_eq!(
        items[0],
        Some(Item {
            key: "thread".into(),
            version: 3,
            value: b"v3".to_vec(),
            expires_at_ms: None
        })
    );
    assert_eq!(
        items[1],
        Some(Item {
            key: "run#1".into(),
            version: 1,
            value: big,
            expires_at_ms: Some(NOW + 60_000)
        })
    );
    assert_eq!(
        block_on(store.list("t1", "", NOW)).expect("list"),
        vec!["run#1".to_owned(), "thread".to_owned()]
    );
    assert_eq!(
        get_one(&store, "t2", "thread", NOW).map(|i| i.value),
        Some(b"other".to_vec())
    );
    // Versions read before the restart still fence writers after it.
    assert_eq!(
        block_on(store.commit(
            "t1",
            vec![put("thread", Condition::Version(2), b"stale", None)],
            NOW
        )),
        Err(StoreError::ConditionFailed { index: 0 })
    );
    block_on(store.commit(
        "t1",
        vec![put("thread", Condition::Version(3), b"v4", None)],
        NOW,
    ))
    .expect("continue after restart");
    assert_eq!(
        get_one(&store, "t1", "thread", NOW).map(|i| i.version),
        Some(4)
    );
}

#[test]
fn open_creates_parent_directories() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("a").join("b").join("store.sqlite3");
    let store = SqliteStore::open(&path).expect("open in a missing directory");
    block_on(store.commit("p", vec![put("k", Condition::Absent, b"v", None)], NOW)).expect("write");
    assert!(path.is_file());
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    rusqlite::Connection::open(&path)
        .expect("raw connection")
        .pragma_update(None, "user_version", 99)
        .expect("set user_version");
    match SqliteStore::open(&path) {
        Err(StoreError::Backend(message)) => {
            assert!(message.contains("schema version 99"), "{message}")
        }
        other => panic!("expected a Backend error, got {other:?}"),
    }
}

#[test]
fn a_held_write_lock_maps_to_unavailable_and_reads_go_on() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let options = SqliteOptions::default().with_busy_timeout(Duration::from_millis(200));
    let store = SqliteStore::open_with(&path, options).expect("open");
    block_on(store.commit("p", vec![put("k", Condition::Absent, b"v1", None)], NOW))
        .expect("write");

    // Another process (here: another connection) holds the write lock.
    let mut other = rusqlite::Connection::open(&path).expect("raw connection");
    let lock = other
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .expect("take the write lock");
    match block_on(store.commit("p", vec![put("k", Condition::Version(1), b"v2", None)], NOW)) {
        Err(StoreError::Unavailable(_)) => {}
        other => panic!("expected Unavailable while another connection writes, got {other:?}"),
    }
    assert_eq!(
        get_one(&store, "p", "k", NOW).map(|i| i.value),
        Some(b"v1".to_vec()),
        "WAL readers are not blocked by a writer"
    );
    lock.commit().expect("release the lock");
    block_on(store.commit("p", vec![put("k", Condition::Version(1), b"v2", None)], NOW))
        .expect("write after the lock is released");
}

#[test]
fn a_waiting_commit_does_not_block_the_executor() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let store = SqliteStore::open_with(
        &path,
        SqliteOptions::default().with_busy_timeout(Duration::from_secs(20)),
    )
    .expect("open");
    block_on(store.commit("p", vec![put("k", Condition::Absent, b"v1", None)], NOW))
        .expect("write");

    let mut other = rusqlite::Connection::open(&path).expect("raw connection");
    let lock = other
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .expect("take the write lock");
    // On one single-threaded executor: the commit waits for the lock; the read and the release
    // can only run if waiting for the lock does not block the executor. Were it blocking, the
    // commit would give up after the busy timeout and fail.
    let commit = store.commit("p", vec![put("k", Condition::Version(1), b"v2", None)], NOW);
    let read_then_release = async {
        let item = store
            .get("p", &["k"], NOW)
            .await
            .expect("read while a commit waits")
            .remove(0);
        assert_eq!(item.map(|i| i.value), Some(b"v1".to_vec()));
        lock.commit().expect("release the lock");
    };
    let (committed, ()) = block_on(futures::future::join(commit, read_then_release));
    committed.expect("the commit went through once the lock was released");
    assert_eq!(get_one(&store, "p", "k", NOW).map(|i| i.version), Some(2));
}

#[test]
fn expiries_beyond_i64_round_trip() {
    let store = SqliteStore::in_memory().expect("open");
    let huge = [u64::MAX, i64::MAX as u64 + 1, i64::MAX as u64];
    let writes = huge
        .iter()
        .enumerate()
        .map(|(n, at)| put(&format!("k{n}"), Condition::Absent, b"x", Some(*at)))
        .collect();
    block_on(store.commit("p", writes, NOW)).expect("write");
    for (n, at) in huge.iter().enumerate() {
        assert_eq!(
            get_one(&store, "p", &format!("k{n}"), NOW).and_then(|i| i.expires_at_ms),
            Some(*at),
            "k{n}"
        );
    }
    // A commit at a `now` beyond i64::MAX: its purge removes `k2`, long expired by then, and
    // leaves the rows stored with the high bit set.
    block_on(store.commit(
        "q",
        vec![put("x", Condition::Absent, b"x", None)],
        u64::MAX - 1,
    ))
    .expect("commit");
    assert_eq!(
        get_one(&store, "p", "k0", u64::MAX - 1).map(|i| i.version),
        Some(1),
        "live until u64::MAX"
    );
    assert_eq!(
        get_one(&store, "p", "k1", NOW).and_then(|i| i.expires_at_ms),
        Some(i64::MAX as u64 + 1)
    );
    assert_eq!(get_one(&store, "p", "k2", NOW), None, "purged");
}

#[test]
fn store_is_usable_behind_dyn_and_arc() {
    let store: std::sync::Arc<dyn Store> =
        std::sync::Arc::new(SqliteStore::in_memory().expect("open"));
    block_on(store.commit("p", vec![put("k", Condition::Absent, b"v", None)], NOW)).expect("write");
    assert!(format!("{:?}", SqliteStore::in_memory().expect("open")).starts_with("SqliteStore"));
    assert_eq!(
        block_on(store.list("p", "k", NOW)).expect("list"),
        vec!["k".to_owned()]
    );
}
