//! [`SqliteStore::stats`] counts the store's write work: every commit answered, every
//! transaction committed, the WAL frames they wrote; and group commit can be turned off.

use std::sync::{Arc, Barrier};
use std::thread;

use futures::executor::block_on;
use handoff_core::{Condition, Store, StoreError, Write};
use handoff_store_sqlite::{SqliteOptions, SqliteStats, SqliteStore};

const NOW: u64 = 1_700_000_000_000;
const THREADS: usize = 8;
const COMMITS_PER_THREAD: usize = 6;
const COMMITS: u64 = (THREADS * COMMITS_PER_THREAD) as u64;

fn create(key: &str) -> Vec<Write> {
    vec![Write::put(key, Condition::Absent, b"v".to_vec(), None)]
}

/// Commits [`COMMITS`] creations of distinct keys from [`THREADS`] threads started together;
/// returns the stats they added.
fn concurrent_commits(store: Arc<SqliteStore>) -> SqliteStats {
    let before = store.stats();
    let start = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let store = Arc::clone(&store);
            let start = Arc::clone(&start);
            thread::spawn(move || {
                start.wait();
                for n in 0..COMMITS_PER_THREAD {
                    block_on(store.commit("p", create(&format!("k{t}-{n}")), NOW)).expect("commit");
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("committer");
    }
    store.stats().since(&before)
}

fn open(dir: &tempfile::TempDir, options: SqliteOptions) -> Arc<SqliteStore> {
    Arc::new(SqliteStore::open_with(dir.path().join("stats.db"), options).expect("open"))
}

#[test]
fn concurrent_commits_are_counted_and_share_transactions() {
    let dir = tempfile::tempdir().expect("temp dir");
    let stats = concurrent_commits(open(&dir, SqliteOptions::default()));
    assert_eq!(stats.commits, COMMITS, "{stats:?}");
    assert!(
        (1..=COMMITS).contains(&stats.transactions),
        "a transaction holds one commit or more: {stats:?}"
    );
    // Every transaction wrote at least the page of its rows.
    assert!(stats.wal_frames >= stats.transactions, "{stats:?}");
}

#[test]
fn without_group_commit_every_commit_is_a_transaction() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = open(&dir, SqliteOptions::default().with_max_group(1));
    let stats = concurrent_commits(Arc::clone(&store));
    assert_eq!(stats.commits, COMMITS, "{stats:?}");
    assert_eq!(stats.transactions, COMMITS, "{stats:?}");
    assert!(stats.wal_frames >= COMMITS, "{stats:?}");

    // A commit refused by its condition is answered, and commits nothing.
    let before = store.stats();
    assert_eq!(
        block_on(store.commit("p", create("k0-0"), NOW)),
        Err(StoreError::ConditionFailed { index: 0 })
    );
    let refused = store.stats().since(&before);
    assert_eq!(
        refused,
        SqliteStats {
            commits: 1,
            ..SqliteStats::default()
        }
    );
}

#[test]
fn one_commit_to_a_file_writes_wal_frames_and_in_memory_none() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = open(&dir, SqliteOptions::default());
    block_on(file.commit("p", create("k"), NOW)).expect("commit");
    let stats = file.stats();
    assert_eq!((stats.commits, stats.transactions), (1, 1), "{stats:?}");
    assert!(stats.wal_frames > 0, "{stats:?}");

    let memory = SqliteStore::in_memory().expect("in-memory store");
    block_on(memory.commit("p", create("k"), NOW)).expect("commit");
    let stats = memory.stats();
    assert_eq!((stats.commits, stats.transactions), (1, 1), "{stats:?}");
    assert_eq!(stats.wal_frames, 0, "no WAL in memory: {stats:?}");
}
