//! Group commit: commits that queue up together share one transaction, yet each one gets
//! exactly the answer it would get alone, and a failed one leaves no trace.

use std::sync::{Arc, Barrier};
use std::thread;

use futures::executor::block_on;
use handoff_core::{Condition, Store, StoreError, Write};
use handoff_store_sqlite::{SqliteOptions, SqliteStore};

const NOW: u64 = 1_700_000_000_000;
/// Concurrent committers: more than one group's worth.
const TASKS: usize = 96;
/// Committers racing to create the one `lease` key.
const RIVALS: usize = 16;

fn put(key: &str, condition: Condition, value: &str) -> Write {
    Write::put(key, condition, value.as_bytes().to_vec(), None)
}

/// What task `i` commits, and the answer it must get whatever the order.
fn task(i: usize) -> (Vec<Write>, Result<(), StoreError>) {
    match i % 4 {
        // Creates its own key.
        0 => (
            vec![put(&format!("own#{i}"), Condition::Absent, "v")],
            Ok(()),
        ),
        // Creates its own key, then fails on a condition: the creation must leave no trace.
        1 => (
            vec![
                put(&format!("trace#{i}"), Condition::Absent, "v"),
                Write::check("missing", Condition::Version(1)),
            ],
            Err(StoreError::ConditionFailed { index: 1 }),
        ),
        // Fails on its first write.
        2 => (
            vec![put(&format!("own#{i}"), Condition::Version(7), "v")],
            Err(StoreError::ConditionFailed { index: 0 }),
        ),
        // Creates its own key and updates it in a second commit (see `run_task`).
        _ => (
            vec![put(&format!("own#{i}"), Condition::Absent, "v1")],
            Ok(()),
        ),
    }
}

/// Runs task `i` on `store` (after the barrier), then reads back what it wrote.
fn run_task(store: &SqliteStore, i: usize) -> Result<(), String> {
    let (writes, expected) = task(i);
    let answer = block_on(store.commit("p", writes, NOW));
    if answer != expected {
        return Err(format!("task {i}: {answer:?}, expected {expected:?}"));
    }
    let own = format!("own#{i}");
    let trace = format!("trace#{i}");
    let items = block_on(store.get("p", &[own.as_str(), trace.as_str()], NOW))
        .map_err(|e| format!("task {i}: get: {e}"))?;
    let own_version = items[0].as_ref().map(|item| item.version);
    let wanted = if expected.is_ok() { Some(1) } else { None };
    if own_version != wanted || items[1].is_some() {
        return Err(format!("task {i}: read back {items:?} after {answer:?}"));
    }
    if i % 4 == 3 {
        let update = vec![put(&own, Condition::Version(1), "v2")];
        block_on(store.commit("p", update, NOW)).map_err(|e| format!("task {i}: {e}"))?;
    }
    // The rivals: exactly one creates the lease.
    if i < RIVALS {
        let lease = vec![put("lease", Condition::Absent, &i.to_string())];
        match block_on(store.commit("p", lease, NOW)) {
            Ok(()) | Err(StoreError::ConditionFailed { index: 0 }) => {}
            Err(e) => return Err(format!("task {i}: lease: {e}")),
        }
    }
    Ok(())
}

/// `TASKS` threads commit at once (so the writer finds many commits queued), then check the
/// final state.
fn concurrent_commits(store: SqliteStore) {
    let store = Arc::new(store);
    let barrier = Arc::new(Barrier::new(TASKS));
    let threads: Vec<_> = (0..TASKS)
        .map(|i| {
            let store = Arc::clone(&store);
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                run_task(&store, i)
            })
        })
        .collect();
    let failures: Vec<String> = threads
        .into_iter()
        .filter_map(|thread| thread.join().expect("no panic").err())
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");

    let keys = block_on(store.list("p", "", NOW)).expect("list");
    let mut expected: Vec<String> = (0..TASKS)
        .filter(|i| i % 4 == 0 || i % 4 == 3)
        .map(|i| format!("own#{i}"))
        .chain(["lease".to_owned()])
        .collect();
    expected.sort();
    assert_eq!(keys, expected, "failed commits left no trace");
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    let items = block_on(store.get("p", &refs, NOW)).expect("get");
    for item in items
        .into_iter()
        .map(|item| item.expect("listed, so present"))
    {
        let (version, value) = match item.key.strip_prefix("own#") {
            None => {
                // The lease: created once, by one of the rivals.
                let rival: usize = String::from_utf8(item.value.clone())
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .expect("a rival's number");
                assert!(rival < RIVALS, "{item:?}");
                (1, rival.to_string())
            }
            Some(i) if i.parse::<usize>().expect("a task number") % 4 == 3 => (2, "v2".to_owned()),
            Some(_) => (1, "v".to_owned()),
        };
        assert_eq!(item.version, version, "{item:?}");
        assert_eq!(item.value, value.as_bytes(), "{item:?}");
    }
}

#[test]
fn concurrent_commits_on_a_file() {
    let dir = tempfile::tempdir().expect("temporary directory");
    concurrent_commits(SqliteStore::open(dir.path().join("store.sqlite3")).expect("open"));
}

#[test]
fn concurrent_commits_with_reads_on_the_writer_connection() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let options = SqliteOptions::default().with_readers(0);
    concurrent_commits(
        SqliteStore::open_with(dir.path().join("store.sqlite3"), options).expect("open"),
    );
}

#[test]
fn concurrent_commits_in_memory() {
    concurrent_commits(SqliteStore::in_memory().expect("open"));
}

/// Commits that return are visible to a new store on the same file at once (another process
/// would see the same): nothing of a group is acknowledged before it is committed.
#[test]
fn returned_commits_are_visible_to_another_connection() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let store = Arc::new(SqliteStore::open(&path).expect("open"));
    let other = Arc::new(SqliteStore::open(&path).expect("open again"));
    let barrier = Arc::new(Barrier::new(32));
    let threads: Vec<_> = (0..32)
        .map(|i| {
            let (store, other, barrier) =
                (Arc::clone(&store), Arc::clone(&other), Arc::clone(&barrier));
            thread::spawn(move || {
                barrier.wait();
                let key = format!("k#{i}");
                for version in 0..5u64 {
                    let condition = if version == 0 {
                        Condition::Absent
                    } else {
                        Condition::Version(version)
                    };
                    block_on(store.commit("p", vec![put(&key, condition, "v")], NOW))
                        .expect("commit");
                    let seen = block_on(other.get("p", &[key.as_str()], NOW)).expect("get");
                    assert_eq!(seen[0].as_ref().map(|item| item.version), Some(version + 1));
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("no panic");
    }
}
