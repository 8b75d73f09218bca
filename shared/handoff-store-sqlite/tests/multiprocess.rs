//! Several processes share one database file: the test binary re-executes itself as child
//! processes (the `child_process` test, which does nothing unless the parent set its
//! environment variables; see `common`).

mod common;

use std::time::Duration;

use common::{CHILDREN, child_env, spawn_children, wait_for, write_report};

use futures::executor::block_on;
use handoff_core::{Condition, Store, StoreError, Write};
use handoff_store_sqlite::{SqliteOptions, SqliteStore};
use serde_json::{Value, json};

const INCREMENTS: u64 = 50;
const PARTITION: &str = "thread#shared";
const KEY: &str = "counter";
const NOW: u64 = 1_700_000_000_000;

/// 4 processes each add 50 to one counter with compare-and-set loops: no lost update.
#[test]
fn four_processes_increment_one_counter() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let db = dir.path().join("shared.sqlite3");
    {
        let store = SqliteStore::open(&db).expect("open");
        let initial = json!({ "counter": 0 }).to_string().into_bytes();
        let create = Write::put(KEY, Condition::Absent, initial, None);
        block_on(store.commit(PARTITION, vec![create], NOW)).expect("create the counter");
    }

    // Hold the write lock while the children start, so their first writes queue on it and all
    // of them contend from the moment it is released (correctness does not depend on it).
    let mut gate = rusqlite::Connection::open(&db).expect("open a raw connection");
    let lock = gate
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .expect("take the write lock");
    let children = spawn_children(&db, "increment");
    lock.commit().expect("release the write lock");
    drop(gate);

    let (mut conflicts, mut busy) = (0, 0);
    for (n, report) in wait_for(children, &db) {
        assert_eq!(
            report.first(),
            Some(&INCREMENTS),
            "child {n} report: {report:?}"
        );
        conflicts += report[1];
        busy += report[2];
    }
    eprintln!(
        "{CHILDREN} processes x {INCREMENTS} increments: \
         {conflicts} version conflicts and {busy} busy timeouts retried"
    );

    let store = SqliteStore::open(&db).expect("reopen");
    let item = block_on(store.get(PARTITION, &[KEY], NOW)).expect("read the counter");
    let item = item
        .into_iter()
        .next()
        .flatten()
        .expect("the counter exists");
    let value: Value = serde_json::from_slice(&item.value).expect("JSON");
    let total = CHILDREN as u64 * INCREMENTS;
    assert_eq!(
        value["counter"],
        json!(total),
        "no lost update across processes"
    );
    assert_eq!(item.version, total + 1, "one version per successful put");
}

/// 4 processes open one file that does not exist yet, at once: each switches it to WAL mode
/// and migrates it without failing, and exactly one creates a shared key.
#[test]
fn four_processes_create_one_file() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let db = dir.path().join("fresh").join("shared.sqlite3");
    let children = spawn_children(&db, "open");
    let created: u64 = wait_for(children, &db)
        .into_iter()
        .map(|(_, report)| report[0])
        .sum();
    assert_eq!(created, 1, "exactly one process creates the shared key");

    let store = SqliteStore::open(&db).expect("reopen");
    let opened = block_on(store.list(PARTITION, "opened#", NOW)).expect("list");
    assert_eq!(
        opened,
        (0..CHILDREN)
            .map(|n| format!("opened#{n}"))
            .collect::<Vec<_>>()
    );
}

/// The child side of the tests above.
#[test]
fn child_process() {
    let Some((db, id, mode)) = child_env() else {
        return;
    };
    // A long busy timeout: the parent may hold the write lock while it spawns the children.
    let options = SqliteOptions::default().with_busy_timeout(Duration::from_secs(60));
    let store = SqliteStore::open_with(&db, options).expect("child: open");
    let report = match mode.as_str() {
        "increment" => block_on(increment(&store, id)),
        "open" => block_on(async {
            let mine = Write::put(format!("opened#{id}"), Condition::Absent, vec![], None);
            store
                .commit(PARTITION, vec![mine], NOW)
                .await
                .expect("child: write its key");
            let shared = Write::put("created-by", Condition::Absent, vec![id as u8], None);
            match store.commit(PARTITION, vec![shared], NOW).await {
                Ok(()) => vec![1],
                Err(StoreError::ConditionFailed { index: 0 }) => vec![0],
                Err(e) => panic!("child {id}: unexpected store error {e:?}"),
            }
        }),
        other => panic!("unknown child mode {other}"),
    };
    write_report(&db, id, &report);
}

/// Adds [`INCREMENTS`] to the counter; reports `[increments, conflicts, busy]`.
async fn increment(store: &SqliteStore, id: usize) -> Vec<u64> {
    let (mut conflicts, mut busy) = (0, 0);
    for _ in 0..INCREMENTS {
        for attempt in 0.. {
            assert!(
                attempt < 10_000,
                "child {id}: no successful compare-and-set in 10000 attempts"
            );
            let item = store
                .get(PARTITION, &[KEY], NOW)
                .await
                .expect("child: read");
            let item = item
                .into_iter()
                .next()
                .flatten()
                .expect("child: the counter exists");
            let mut value: Value = serde_json::from_slice(&item.value).expect("child: JSON");
            value["counter"] = json!(value["counter"].as_u64().expect("child: counter") + 1);
            let bytes = value.to_string().into_bytes();
            let write = Write::put(KEY, Condition::Version(item.version), bytes, None);
            match store.commit(PARTITION, vec![write], NOW).await {
                Ok(()) => break,
                Err(StoreError::ConditionFailed { index: 0 }) => conflicts += 1,
                Err(StoreError::Unavailable(_)) => busy += 1,
                Err(e) => panic!("child {id}: unexpected store error {e:?}"),
            }
        }
    }
    vec![INCREMENTS, conflicts, busy]
}
