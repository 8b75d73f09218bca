//! The WAL is checkpointed beside the writer: it stays bounded however much is committed, and
//! what it held reaches the database file.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::executor::block_on;
use handoff_core::{Condition, Store, Write};
use handoff_store_sqlite::SqliteStore;

const NOW: u64 = 1_700_000_000_000;

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Values of 64 KiB, unlike each other (so no page is written twice by chance).
fn value(n: u32) -> Vec<u8> {
    (0..64 * 1024u32)
        .map(|i| (i.wrapping_add(n).wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect()
}

#[test]
fn the_wal_stays_bounded_and_its_pages_reach_the_database_file() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let wal = dir.path().join("store.sqlite3-wal");
    let store = SqliteStore::open(&path).expect("open");
    // 640 commits of 64 KiB: 40 MiB through a WAL that SQLite's own automatic checkpoint no
    // longer empties (the writer's WAL hook replaced it). Without the checkpoint thread the
    // WAL would hold all of it.
    let commits = 640u32;
    block_on(async {
        for n in 0..commits {
            let write = Write::put(format!("k{n}"), Condition::Absent, value(n), None);
            store.commit("p", vec![write], NOW).await.expect("commit");
        }
    });
    // A checkpoint is asked for past 1,000 frames of 4 KiB pages, so up to about that much
    // may still be only in the WAL; the last checkpoint may still be running.
    let checkpointed = u64::from(commits) * 64 * 1024 - 1_000 * 4096;
    for _ in 0..1_500 {
        if file_len(&path) >= checkpointed {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        file_len(&path) >= checkpointed,
        "the database file holds {} bytes, expected at least {checkpointed}",
        file_len(&path)
    );
    // Reset and reused after each complete checkpoint: a few thousand frames at most. The
    // writer restarts it past 4,000 frames of 4 KiB (16 MiB), after the group that crossed
    // the line; a restart that waited 50 ms for the checkpoint thread in vain is retried after
    // the next group, so on a busy machine a few more commits land first (one CI run saw
    // 16.8 MB). Without checkpoints it would hold all 40 MiB.
    assert!(
        file_len(&wal) < 24 << 20,
        "the WAL grew to {} bytes",
        file_len(&wal)
    );
    // Every value reads back whole, from wherever it now lives.
    let keys: Vec<String> = (0..commits).map(|n| format!("k{n}")).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let items = block_on(store.get("p", &keys, NOW)).expect("get");
    for (n, item) in (0..commits).zip(items) {
        assert_eq!(item.expect("present").value, value(n), "k{n}");
    }
}

/// Under steady load (commits always queued, readers always reading) a passive checkpoint
/// never finds the WAL both fully copied and unread, so the WAL was never reused and grew by
/// every commit. Past a limit the writer runs a restarting checkpoint between two groups, and
/// its next group starts the WAL over.
#[test]
fn the_wal_stays_bounded_under_steady_concurrent_load() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let wal = dir.path().join("store.sqlite3-wal");
    let store = SqliteStore::open(&path).expect("open");
    let done = AtomicBool::new(false);
    const IN_FLIGHT: u32 = 8;
    let (writers, commits) = (8u32, 400u32);
    let largest_wal = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            let mut largest = 0;
            while !done.load(Ordering::Acquire) {
                largest = largest.max(file_len(&wal));
                std::thread::sleep(Duration::from_millis(5));
            }
            largest.max(file_len(&wal))
        });
        for _ in 0..2 {
            scope.spawn(|| {
                while !done.load(Ordering::Acquire) {
                    block_on(store.get("p", &["w0-0", "w1-1"], NOW)).expect("get");
                }
            });
        }
        // Several commits in flight per thread: the writer's queue is never empty, as under
        // the load benchmark (with one commit per thread, the gaps while the threads send the
        // next let a checkpoint catch up now and then).
        let writing: Vec<_> = (0..writers)
            .map(|w| {
                let store = &store;
                scope.spawn(move || {
                    for round in 0..commits / IN_FLIGHT {
                        let batch = (0..IN_FLIGHT).map(|i| {
                            let n = round * IN_FLIGHT + i;
                            let mut value = value(w * commits + n);
                            value.truncate(16 * 1024);
                            let write =
                                Write::put(format!("w{w}-{n}"), Condition::Absent, value, None);
                            store.commit("p", vec![write], NOW)
                        });
                        for outcome in block_on(futures::future::join_all(batch)) {
                            outcome.expect("commit");
                        }
                    }
                })
            })
            .collect();
        for writer in writing {
            writer.join().expect("writer");
        }
        done.store(true, Ordering::Release);
        watcher.join().expect("watcher")
    });
    // 50 MiB went through it; it restarts past 4,000 frames of 4 KiB (16 MiB), after the
    // group that crossed the line (without the restart it grew to 28-59 MB here).
    assert!(
        largest_wal < 24 << 20,
        "the WAL grew to {largest_wal} bytes"
    );
    let items = block_on(store.get("p", &["w7-399", "w0-0"], NOW)).expect("get");
    assert!(items.iter().all(Option::is_some));
}
