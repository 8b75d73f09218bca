//! Handoff's embedded store: [`handoff_core::Store`] on one SQLite file.
//!
//! [`SqliteStore`] keeps every partition in one table of one database file, survives restarts,
//! and may be shared by several **processes** at once (a dev server and a CLI, or several
//! workers): all of them see one strongly consistent store.
//!
//! ```no_run
//! use handoff_core::{Condition, Store, StoreError, Write};
//! use handoff_store_sqlite::SqliteStore;
//!
//! # fn main() -> Result<(), StoreError> {
//! // Creates `.handoff/` and the file if needed; blocks while it migrates the schema.
//! let store = SqliteStore::open(".handoff/handoff.sqlite3")?;
//! futures::executor::block_on(async {
//!     let now_ms = 1_700_000_000_000;
//!     let create = Write::put("thread", Condition::Absent, br#"{"status":"idle"}"#.to_vec(), None);
//!     store.commit("thread#t1", vec![create], now_ms).await?;
//!     let thread = store.get("thread#t1", &["thread"], now_ms).await?.remove(0);
//!     assert_eq!(thread.map(|item| item.version), Some(1));
//!     Ok(())
//! })
//! # }
//! ```
//!
//! An in-memory database (one per call, gone when dropped) has the same semantics:
//!
//! ```
//! use handoff_core::{Condition, Store, StoreError, Write};
//! use handoff_store_sqlite::SqliteStore;
//!
//! # fn main() -> Result<(), StoreError> {
//! let store = SqliteStore::in_memory()?;
//! futures::executor::block_on(async {
//!     let lease = |until| vec![Write::put("lease", Condition::Absent, b"me".to_vec(), Some(until))];
//!     store.commit("p", lease(2_000), 1_000).await?;
//!     // A second creation fails while the lease lives...
//!     assert_eq!(store.commit("p", lease(3_000), 1_999).await, Err(StoreError::ConditionFailed { index: 0 }));
//!     // ...and succeeds once it expired, replacing it as if it never existed.
//!     store.commit("p", lease(3_000), 2_000).await?;
//!     assert_eq!(store.get("p", &["lease"], 2_000).await?[0].as_ref().map(|i| i.version), Some(1));
//!     Ok(())
//! })
//! # }
//! ```
//!
//! # The table
//!
//! ```sql
//! CREATE TABLE items (
//!     partition     TEXT    NOT NULL,
//!     key           TEXT    NOT NULL,
//!     version       INTEGER NOT NULL,  -- 1 on creation, +1 on every put over a live row
//!     expires_at_ms INTEGER,           -- Unix ms; NULL = never
//!     value         BLOB    NOT NULL,
//!     ix_scope      TEXT,              -- the listing the item is in (IndexEntry); NULL = none
//!     ix_rank       INTEGER,           -- its rank there; NULL when ix_scope is
//!     UNIQUE (partition, key)
//! ) STRICT;
//! CREATE INDEX items_listing ON items (ix_scope, ix_rank DESC, partition, key)
//!     WHERE ix_scope IS NOT NULL;
//! ```
//!
//! A rowid table, not `WITHOUT ROWID` (schema version 1): an index b-tree keeps at most about
//! a quarter of a page of a row inline, so the engine's records of one to four KB (a run's
//! event log, a resume's result) spilled into overflow pages, more pages written per commit;
//! a table b-tree keeps them inline. The value comes after the version and expiry so reading
//! them never touches it. No index on the expiry (versions 1 and 2 had one): every put
//! moves a row's expiry, so the index cost a b-tree delete and insert, and about a quarter of
//! the pages written, per put; expired rows are found by a sweep instead (below). Files of
//! earlier versions are migrated in place when opened.
//!
//! **Listings** ([`Store::list_index`], schema version 4). A put with an
//! [`IndexEntry`](handoff_core::store::IndexEntry) sets `ix_scope` and `ix_rank` in the same
//! statement that writes the row, and a put without one sets both to NULL (a delete removes the
//! row): no statement of its own, and a listing changes exactly when its row's commit does.
//! The index is partial, so the rows no listing names (most of them) cost it nothing. A page is
//! one `SELECT` walking `items_listing` from the scope's top, or from the last hit's rank on
//! (keyset pagination: `ix_rank <= rank AND (ix_rank < rank OR (partition, key) > (…))`), that
//! skips rows expired as reads do and stops at the limit; an expired row stays in the index
//! until the sweep deletes it. The columns were added by `ALTER TABLE`, so they come after
//! the value; only a put reads them (the old entry, from a row it rewrites whole anyway).
//! `ix_rank` holds the rank as a plain integer, so ranks sort as numbers: a put ranked past
//! `i64::MAX` (the engine ranks by Unix milliseconds) is refused with [`StoreError::Backend`],
//! its whole batch before any condition, rather than stored out of order.
//!
//! # Guarantees
//!
//! - **Atomic, conditional commits.** Every [`Store::commit`] runs under the database's write
//!   lock (`BEGIN IMMEDIATE`): it checks every condition against the rows as they are, and
//!   either applies every write or none (reporting the first failing index). A write carries
//!   its condition in its own statement (a put under `Version(v)` is an `UPDATE … WHERE
//!   version = v`; no read of the row first), and a failure rolls back the writes before it;
//!   a batch that names a key twice is checked whole before its first write instead.
//! - **Group commit.** Commits queued together share one transaction: the writer thread takes
//!   a commit and every commit already queued behind it (up to 64; finding none, it yields
//!   its time slice once and looks again), runs them in queue order,
//!   each inside its own savepoint, then `COMMIT`s once (one fsync for the group) and only then
//!   answers them. Each commit sees the ones before it and gets exactly the answer it would get
//!   alone; one whose condition fails, or that errors, is rolled back to its savepoint, leaves
//!   no trace and answers its own error while the others proceed. If the transaction itself
//!   fails (taking the lock, `COMMIT`), nothing of the group is applied and every commit of the
//!   group answers that error. [`SqliteOptions::with_max_group`] lowers the limit (1 turns
//!   group commit off, for comparison), and [`SqliteStore::stats`] counts commits,
//!   transactions, WAL frames and checkpoints, to measure what grouping saves.
//! - **Consistent reads.** A multi-key [`Store::get`] runs in one read transaction, so it sees
//!   one commit's result for all keys; a [`Store::list`] and a page of [`Store::list_index`]
//!   are one statement each. A read that starts
//!   after a commit returned sees it, in this process or any other.
//! - **Several processes.** The database runs in WAL mode: readers never block the writer or each
//!   other, and writers queue on SQLite's lock. A writer waits up to the busy timeout (5 s by
//!   default, [`SqliteOptions::with_busy_timeout`]) and then fails with
//!   [`StoreError::Unavailable`], which callers may retry. Several processes may also create
//!   and open a fresh file at the same moment.
//! - **Durability.** `synchronous = FULL` by default: a commit that returned survives a
//!   crash of the process or the machine. [`Synchronous::Normal`]
//!   ([`SqliteOptions::with_synchronous`]; `HANDOFF_SQLITE_SYNC=normal` on the dev server)
//!   survives a crash of the process, not a power loss. A commit is answered only after its
//!   group's `COMMIT` returned.
//! - **Versions and expiry** follow the reference store exactly. A row whose
//!   `expires_at_ms <= now_ms` reads as absent, is not listed (by `list` or `list_index`),
//!   satisfies `Absent` and fails `Version`. A put yields the live version + 1, or 1 over a missing or expired row (so the
//!   version is predictable from the condition: `v + 1` under `Version(v)`, 1 under `Absent`);
//!   a key re-created after a `Delete` starts at 1 too. Expired rows stay in the table until a
//!   sweep deletes them: each group with a successful commit examines the next 100 rows in
//!   rowid order ([`SqliteOptions::with_purge_batch`]) and deletes those among them that expired
//!   at least an hour before the latest `now_ms` of its successful commits
//!   ([`SqliteOptions::with_purge_expired_after`]). A sweep that reaches the end of the table
//!   ends; the next starts a horizon later by the commits' clock (at least a second), so a row
//!   is gone within about two horizons of its expiry under steady writes, and between sweeps a
//!   group does no purging work at all. That deletion is invisible, except to a caller whose
//!   clock lags the purging one's by more than the horizon.
//! - **Checkpoints beside the writer.** Past 1,000 WAL frames, and every 256 after, commits nudge a
//!   thread with a connection of its own, which copies the WAL into the database file
//!   (`PRAGMA wal_checkpoint(PASSIVE)`) while the writer goes on committing; SQLite's
//!   automatic checkpoint, which would stall the commit that crossed the line and every
//!   commit queued behind it, is off on the writer. Past 4,000 frames (16 MiB) the writer,
//!   between two groups, runs a `RESTART` checkpoint itself (copying what the thread has not,
//!   waiting at most 50 ms for readers to move on), so the WAL starts over even under steady
//!   load, when no moment finds it both fully copied and unread.
//! - **Commits never block the executor; reads only for as long as they read.** Commits run on
//!   a thread owned by the store (one writer connection): [`Store::commit`] queues its work and
//!   awaits the answer, so waiting for the lock or the disk never holds the caller's thread,
//!   under any executor (tokio, `futures::executor`, ...). A `get`, `list` or `list_index` runs
//!   on the caller's thread on one of two read-only connections kept for that (an "inline reader",
//!   [`SqliteOptions::with_inline_readers`]): a read of rows in the page cache takes
//!   microseconds, less than the two thread switches of handing it to a thread (under the load
//!   benchmark on one core, 20 thread switches per pair fell to 6). These connections never
//!   wait: a read that finds them all in use, or the database busy, goes to a reader thread (two
//!   by default, [`SqliteOptions::with_readers`]), which waits up to the busy timeout.
//!   Dropping a pending [`Store::commit`] future does not cancel the commit: it may still be
//!   applied.
//! - Callers must not name one key twice in a batch (the trait's rule); if they do, the writes
//!   apply in order after every condition was checked against the rows before the batch, as in
//!   the reference store.
//!
//! Opening ([`SqliteStore::open`]) and dropping a store block the calling thread (dropping
//! waits for queued work to finish and closes the connections), so do both at startup or
//! shutdown, or from a blocking context.

mod checkpoint;
mod conditional;
mod group;
mod inline;
mod open;
mod options;
mod prepared;
mod read;
mod row;
mod sql;
mod stats;
mod worker;
mod write;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use handoff_core::store::{IndexHit, Item, Store, StoreError, Write};
use rusqlite::Connection;

pub use options::{SqliteOptions, Synchronous};
pub use stats::SqliteStats;

use checkpoint::Checkpointer;
use inline::InlineReaders;
use open::{Role, migrate, open_connection, open_in_memory};
use read::{list_index, list_keys, read_items};
use sql::with_context;
use stats::Counters;
use worker::{CommitSettings, Worker};
use write::Commit;

/// The schema version this build creates and understands (`PRAGMA user_version`).
pub const SCHEMA_VERSION: u32 = 4;

/// [`Store`] on a SQLite database; see the [crate docs](crate) for the table and the guarantees.
pub struct SqliteStore {
    /// Serve reads on the caller's thread when one is free (none for an in-memory database).
    inline: Option<InlineReaders>,
    writer: Worker,
    readers: Option<Worker>,
    /// Checkpoints the WAL beside the writer (none for an in-memory database).
    _checkpointer: Option<Checkpointer>,
    path: Option<PathBuf>,
    /// What [`SqliteStore::stats`] reports.
    counters: Arc<Counters>,
}

impl SqliteStore {
    /// Opens (creating it and its parent directories if needed) the database at `path` with the
    /// default [`SqliteOptions`], switches it to WAL mode and migrates its schema.
    ///
    /// Blocks the calling thread; while other processes hold locks it needs (they are writing,
    /// or opening the same fresh file), each step waits up to about the busy timeout.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(path, SqliteOptions::default())
    }

    /// [`open`](Self::open) with explicit options.
    pub fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let context = |e: StoreError| with_context(e, &format!("opening {}", path.display()));
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                StoreError::Backend(format!("cannot create {}: {e}", parent.display()))
            })?;
        }
        let mut writer = open_connection(path, &options, Role::Writer).map_err(context)?;
        migrate(&mut writer).map_err(context)?;
        // Its own read-write connection, with the writer's settings (`synchronous = FULL`).
        let checkpoints = open_connection(path, &options, Role::Writer).map_err(context)?;
        let counters = Arc::new(Counters::default());
        let (checkpointer, restart) = Checkpointer::spawn(
            checkpoints,
            &mut writer,
            options.busy_timeout,
            Arc::clone(&counters),
        )?;
        let settings = CommitSettings {
            purge: options.purge,
            max_group: options.max_group,
            restart: Some(restart),
            counters: Arc::clone(&counters),
        };
        let readers: Vec<Connection> = (0..options.readers)
            .map(|_| open_connection(path, &options, Role::Reader))
            .collect::<Result<_, _>>()
            .map_err(context)?;
        let inline = InlineReaders::open(path, &options).map_err(context)?;
        Ok(Self {
            inline,
            writer: Worker::spawn("handoff-sqlite-writer", vec![writer], &settings)?,
            readers: if readers.is_empty() {
                None
            } else {
                Some(Worker::spawn("handoff-sqlite-reader", readers, &settings)?)
            },
            _checkpointer: Some(checkpointer),
            path: Some(path.to_owned()),
            counters,
        })
    }

    /// A private in-memory database (not shared, gone when the store is dropped), served by one
    /// connection. Cheap; for tests.
    pub fn in_memory() -> Result<Self, StoreError> {
        let conn = open_in_memory()?;
        let options = SqliteOptions::default();
        let counters = Arc::new(Counters::default());
        let settings = CommitSettings {
            purge: options.purge,
            max_group: options.max_group,
            restart: None,
            counters: Arc::clone(&counters),
        };
        Ok(Self {
            inline: None,
            writer: Worker::spawn("handoff-sqlite-memory", vec![conn], &settings)?,
            readers: None,
            _checkpointer: None,
            path: None,
            counters,
        })
    }

    /// What the store's commits have cost the database since it was opened: commits
    /// answered, transactions committed, WAL frames written, checkpoints (see
    /// [`SqliteStats`]). Counts this store's work only, not other processes' on the same
    /// file. Cheap (four relaxed loads); the counting costs a few relaxed additions per group.
    pub fn stats(&self) -> SqliteStats {
        self.counters.snapshot()
    }

    /// The database file, or `None` for [`in_memory`](Self::in_memory).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    fn reader(&self) -> &Worker {
        self.readers.as_ref().unwrap_or(&self.writer)
    }
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .field(
                "inline_readers",
                &self.inline.as_ref().map_or(0, InlineReaders::len),
            )
            .field(
                "readers",
                &self.readers.as_ref().map_or(0, |r| r.threads.len()),
            )
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Store for SqliteStore {
    fn system_name(&self) -> &'static str {
        "sqlite"
    }

    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let inline = self.inline.as_ref();
        if let Some(items) =
            inline.and_then(|i| i.try_read(|p| read_items(p, partition, keys, now_ms)))
        {
            return items;
        }
        let partition = partition.to_owned();
        let keys: Vec<String> = keys.iter().map(|k| (*k).to_owned()).collect();
        self.reader()
            .run(move |p| {
                let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
                read_items(p, &partition, &keys, now_ms)
            })
            .await
    }

    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let commit = Commit {
            partition: partition.to_owned(),
            writes,
            now_ms,
        };
        self.writer.commit(commit).await
    }

    async fn list(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        let inline = self.inline.as_ref();
        if let Some(keys) =
            inline.and_then(|i| i.try_read(|p| list_keys(p, partition, prefix, now_ms)))
        {
            return keys;
        }
        let partition = partition.to_owned();
        let prefix = prefix.to_owned();
        self.reader()
            .run(move |conn| list_keys(conn, &partition, &prefix, now_ms))
            .await
    }

    async fn list_index(
        &self,
        scope: &str,
        after: Option<&IndexHit>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<IndexHit>, StoreError> {
        let inline = self.inline.as_ref();
        if let Some(hits) =
            inline.and_then(|i| i.try_read(|p| list_index(p, scope, after, limit, now_ms)))
        {
            return hits;
        }
        let scope = scope.to_owned();
        let after = after.cloned();
        self.reader()
            .run(move |conn| list_index(conn, &scope, after.as_ref(), limit, now_ms))
            .await
    }
}
