//! The conformance suite against `SqliteStore`: a fresh database file per check.

use handoff_store_conformance::{Guarded, run_all, store_conformance_tests};
use handoff_store_sqlite::{SqliteOptions, SqliteStore};
use tempfile::TempDir;

/// A store on a new file in a new temporary directory, removed after the store is dropped.
fn temp_store(options: SqliteOptions) -> Guarded<SqliteStore, TempDir> {
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let store =
        SqliteStore::open_with(dir.path().join("store.sqlite3"), options).expect("open the store");
    Guarded::new(store, dir)
}

// One `#[tokio::test]` per check (the store itself needs no runtime; this shows it runs under tokio).
store_conformance_tests!(#[tokio::test], temp_store(SqliteOptions::default()));

/// Reads served by the writer's connection (no inline readers, no reader threads).
#[test]
fn suite_with_reads_on_the_writer_connection() {
    futures::executor::block_on(run_all(|| {
        temp_store(
            SqliteOptions::default()
                .with_inline_readers(0)
                .with_readers(0),
        )
    }));
}

/// Reads served by the reader threads only (the default serves most on the caller's thread).
#[test]
fn suite_with_reads_on_reader_threads() {
    futures::executor::block_on(run_all(|| {
        temp_store(SqliteOptions::default().with_inline_readers(0))
    }));
}

/// Every check against one shared file (each check uses its own partitions).
#[test]
fn suite_on_one_shared_file() {
    let shared = std::sync::Arc::new(temp_store(SqliteOptions::default()));
    futures::executor::block_on(run_all(|| std::sync::Arc::clone(&shared)));
}

/// The in-memory database.
#[test]
fn suite_in_memory() {
    futures::executor::block_on(run_all(|| {
        SqliteStore::in_memory().expect("open an in-memory store")
    }));
}
