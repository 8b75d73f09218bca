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
//!     value         BLOB    NOT NULL,
//!     expires_at_ms INTEGER,           -- Unix ms; NULL = never
//!     PRIMARY KEY (partition, key)
//! ) WITHOUT ROWID, STRICT;
//! CREATE INDEX items_by_expiry ON items (expires_at_ms) WHERE expires_at_ms IS NOT NULL;
//! ```
//!
//! The schema version is kept in `PRAGMA user_version` ([`SCHEMA_VERSION`]); opening a file
//! applies the missing migrations in one transaction and refuses a file written by a newer
//! build. Keys sort by their UTF-8 bytes (SQLite's `BINARY` collation), like Rust strings.
//! `expires_at_ms` holds the `u64`'s bit pattern, so an expiry beyond `i64::MAX` (hundreds of
//! millions of years) shows as negative in SQL but round-trips exactly.
//!
//! # Guarantees
//!
//! - **Atomic, conditional commits.** Every [`Store::commit`] is one `BEGIN IMMEDIATE`
//!   transaction: it takes the database's write lock, checks every condition against the rows as
//!   they are, and either applies every write or none (reporting the first failing index).
//!   Conditions are all checked before any write of the batch is applied.
//! - **Consistent reads.** A multi-key [`Store::get`] runs in one read transaction, so it sees
//!   one commit's result for all keys; a [`Store::list`] is one statement. A read that starts
//!   after a commit returned sees it, in this process or any other.
//! - **Several processes.** The database runs in WAL mode: readers never block the writer or each
//!   other, and writers queue on SQLite's lock. A writer waits up to the busy timeout (5 s by
//!   default, [`SqliteOptions::with_busy_timeout`]) and then fails with
//!   [`StoreError::Unavailable`], which callers may retry. Several processes may also create
//!   and open a fresh file at the same moment.
//! - **Durability.** `synchronous = FULL`: a commit that returned survives a crash of the
//!   process or the machine.
//! - **Versions and expiry** follow the reference store exactly. A row whose
//!   `expires_at_ms <= now_ms` reads as absent, is not listed, satisfies `Absent` and fails
//!   `Version`. A put yields the live version + 1, or 1 over a missing or expired row (so the
//!   version is predictable from the condition: `v + 1` under `Version(v)`, 1 under `Absent`);
//!   a key re-created after a `Delete` starts at 1 too. Expired rows stay in the table until a
//!   successful commit deletes a bounded batch of those expired at least an hour before its
//!   `now_ms` ([`SqliteOptions::with_purge_expired_after`]); that deletion is invisible, except
//!   to a caller whose clock lags the purging one's by more than the horizon.
//! - **Never blocks the executor.** SQLite calls run on threads owned by the store (one writer
//!   connection, and by default two reader connections); the async methods only queue work and
//!   await its answer, so the store works under any executor (tokio, `futures::executor`, ...).
//!   Dropping a pending [`Store::commit`] future does not cancel the commit: it may still be
//!   applied.
//! - Callers must not name one key twice in a batch (the trait's rule); if they do, the writes
//!   apply in order after every condition was checked against the rows before the batch, as in
//!   the reference store.
//!
//! Opening ([`SqliteStore::open`]) and dropping a store block the calling thread (dropping
//! waits for queued work to finish and closes the connections), so do both at startup or
//! shutdown, or from a blocking context.

use std::collections::HashMap;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread;
use std::time::Duration;

use async_trait::async_trait;
use futures::channel::oneshot;
use handoff_core::store::{Item, Store, StoreError, Write, WriteOp, condition_holds, is_live};
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior, params};

/// The schema version this build creates and understands (`PRAGMA user_version`).
pub const SCHEMA_VERSION: u32 = 1;

/// `MIGRATIONS[n]` takes the schema from version `n` to `n + 1`.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = ["
    CREATE TABLE IF NOT EXISTS items (
        partition     TEXT    NOT NULL,
        key           TEXT    NOT NULL,
        version       INTEGER NOT NULL,
        value         BLOB    NOT NULL,
        expires_at_ms INTEGER,
        PRIMARY KEY (partition, key)
    ) WITHOUT ROWID, STRICT;
    CREATE INDEX IF NOT EXISTS items_by_expiry ON items (expires_at_ms) WHERE expires_at_ms IS NOT NULL;
"];

const SELECT_ITEM: &str =
    "SELECT version, value, expires_at_ms FROM items WHERE partition = ?1 AND key = ?2";
const SELECT_VERSION: &str =
    "SELECT version, expires_at_ms FROM items WHERE partition = ?1 AND key = ?2";
const SELECT_KEYS: &str =
    "SELECT key, expires_at_ms FROM items WHERE partition = ?1 AND key >= ?2 ORDER BY key";
const UPSERT: &str =
    "INSERT INTO items (partition, key, version, value, expires_at_ms) VALUES (?1, ?2, ?3, ?4, ?5)
    ON CONFLICT (partition, key) DO UPDATE SET
        version = excluded.version, value = excluded.value, expires_at_ms = excluded.expires_at_ms";
const DELETE: &str = "DELETE FROM items WHERE partition = ?1 AND key = ?2";
const PURGE: &str = "DELETE FROM items WHERE (partition, key) IN (
    SELECT partition, key FROM items
    WHERE expires_at_ms IS NOT NULL AND expires_at_ms BETWEEN 0 AND ?1
    ORDER BY expires_at_ms LIMIT ?2)";

/// Tuning for [`SqliteStore::open_with`]; [`Default`] gives the values [`SqliteStore::open`] uses.
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    busy_timeout: Duration,
    readers: usize,
    purge: Purge,
}

#[derive(Debug, Clone, Copy)]
struct Purge {
    after_ms: Option<u64>,
    batch: u32,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            busy_timeout: Duration::from_secs(5),
            readers: 2,
            purge: Purge {
                after_ms: Some(60 * 60 * 1000),
                batch: 100,
            },
        }
    }
}

impl SqliteOptions {
    /// How long a commit waits for another connection's write lock before failing with
    /// [`StoreError::Unavailable`] (default 5 s).
    pub fn with_busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// How many read-only connections serve `get` and `list` (default 2). With 0, reads share
    /// the writer's connection and queue behind commits.
    pub fn with_readers(mut self, readers: usize) -> Self {
        self.readers = readers;
        self
    }

    /// Rows that expired at least this many milliseconds before a commit's `now_ms` may be
    /// deleted by that commit (default 1 hour); `None` keeps every row forever. An expired row
    /// already behaves as absent, so deleting it changes nothing for callers whose clocks agree;
    /// the horizon keeps a caller whose clock lags by less than it from seeing a row it still
    /// considers live disappear.
    pub fn with_purge_expired_after(mut self, after_ms: Option<u64>) -> Self {
        self.purge.after_ms = after_ms;
        self
    }

    /// At most this many long-expired rows are deleted per commit (default 100; 0 disables).
    pub fn with_purge_batch(mut self, rows: u32) -> Self {
        self.purge.batch = rows;
        self
    }
}

/// [`Store`] on a SQLite database; see the [crate docs](crate) for the table and the guarantees.
pub struct SqliteStore {
    writer: Worker,
    readers: Option<Worker>,
    path: Option<PathBuf>,
    purge: Purge,
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
        let readers: Vec<Connection> = (0..options.readers)
            .map(|_| open_connection(path, &options, Role::Reader))
            .collect::<Result<_, _>>()
            .map_err(context)?;
        Ok(Self {
            writer: Worker::spawn("handoff-sqlite-writer", vec![writer])?,
            readers: if readers.is_empty() {
                None
            } else {
                Some(Worker::spawn("handoff-sqlite-reader", readers)?)
            },
            path: Some(path.to_owned()),
            purge: options.purge,
        })
    }

    /// A private in-memory database (not shared, gone when the store is dropped), served by one
    /// connection. Cheap; for tests.
    pub fn in_memory() -> Result<Self, StoreError> {
        let mut conn = Connection::open_in_memory().map_err(sql_err)?;
        migrate(&mut conn)?;
        Ok(Self {
            writer: Worker::spawn("handoff-sqlite-memory", vec![conn])?,
            readers: None,
            path: None,
            purge: SqliteOptions::default().purge,
        })
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
                "readers",
                &self.readers.as_ref().map_or(0, |r| r.threads.len()),
            )
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let partition = partition.to_owned();
        let keys: Vec<String> = keys.iter().map(|k| (*k).to_owned()).collect();
        self.reader()
            .run(move |conn| read_items(conn, &partition, keys, now_ms))
            .await
    }

    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let partition = partition.to_owned();
        let purge = self.purge;
        self.writer
            .run(move |conn| apply(conn, &partition, writes, now_ms, purge))
            .await
    }

    async fn list(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        let partition = partition.to_owned();
        let prefix = prefix.to_owned();
        self.reader()
            .run(move |conn| list_keys(conn, &partition, &prefix, now_ms))
            .await
    }
}

fn read_items(
    conn: &mut Connection,
    partition: &str,
    keys: Vec<String>,
    now_ms: u64,
) -> Result<Vec<Option<Item>>, StoreError> {
    // One read transaction: every key comes from the same snapshot.
    let tx = conn.transaction().map_err(sql_err)?;
    let mut items = Vec::with_capacity(keys.len());
    {
        let mut select = tx.prepare_cached(SELECT_ITEM).map_err(sql_err)?;
        for key in keys {
            let row = select
                .query_row(params![partition, key], |row| {
                    Ok((
                        row.get::<_, i64>(0)?,
                        row.get::<_, Vec<u8>>(1)?,
                        row.get::<_, Option<i64>>(2)?,
                    ))
                })
                .optional()
                .map_err(sql_err)?;
            let item = match row {
                Some((version, value, expires)) if is_live(expires.map(ms_from_sql), now_ms) => {
                    Some(Item {
                        key,
                        version: version_from_sql(version)?,
                        value,
                        expires_at_ms: expires.map(ms_from_sql),
                    })
                }
                _ => None,
            };
            items.push(item);
        }
    }
    tx.commit().map_err(sql_err)?;
    Ok(items)
}

fn list_keys(
    conn: &mut Connection,
    partition: &str,
    prefix: &str,
    now_ms: u64,
) -> Result<Vec<String>, StoreError> {
    // A range scan from the prefix, stopping at the first key without it: no `LIKE`, whose
    // wildcards and case folding would not match `starts_with`.
    let mut select = conn.prepare_cached(SELECT_KEYS).map_err(sql_err)?;
    let mut rows = select.query(params![partition, prefix]).map_err(sql_err)?;
    let mut keys = Vec::new();
    while let Some(row) = rows.next().map_err(sql_err)? {
        let key: String = row.get(0).map_err(sql_err)?;
        if !key.starts_with(prefix) {
            break;
        }
        let expires: Option<i64> = row.get(1).map_err(sql_err)?;
        if is_live(expires.map(ms_from_sql), now_ms) {
            keys.push(key);
        }
    }
    Ok(keys)
}

fn apply(
    conn: &mut Connection,
    partition: &str,
    writes: Vec<Write>,
    now_ms: u64,
    purge: Purge,
) -> Result<(), StoreError> {
    // Takes the write lock up front (waiting up to the busy timeout), so the conditions checked
    // below still hold when the writes land. Dropping `tx` on an early return rolls back.
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql_err)?;
    {
        // Every condition is checked against the rows as they were before the batch; `live`
        // then tracks each key's live version as the writes apply, in order.
        let mut live: HashMap<String, Option<u64>> = HashMap::with_capacity(writes.len());
        let mut select = tx.prepare_cached(SELECT_VERSION).map_err(sql_err)?;
        for (index, write) in writes.iter().enumerate() {
            let row = select
                .query_row(params![partition, write.key], |row| {
                    Ok((row.get::<_, i64>(0)?, row.get::<_, Option<i64>>(1)?))
                })
                .optional()
                .map_err(sql_err)?;
            let current = match row {
                Some((version, expires)) if is_live(expires.map(ms_from_sql), now_ms) => {
                    Some(Item {
                        key: String::new(),
                        version: version_from_sql(version)?,
                        value: Vec::new(),
                        expires_at_ms: expires.map(ms_from_sql),
                    })
                }
                _ => None,
            };
            if !condition_holds(write.condition, current.as_ref()) {
                return Err(StoreError::ConditionFailed { index });
            }
            live.entry(write.key.clone())
                .or_insert(current.map(|item| item.version));
        }
        let mut put = tx.prepare_cached(UPSERT).map_err(sql_err)?;
        let mut delete = tx.prepare_cached(DELETE).map_err(sql_err)?;
        for write in writes {
            match write.op {
                WriteOp::Put {
                    value,
                    expires_at_ms,
                } => {
                    // The live version + 1, or 1 over a missing or expired row.
                    let version = live.get(&write.key).copied().flatten().map_or(1, |v| v + 1);
                    let sql_version = i64::try_from(version).map_err(|_| {
                        StoreError::Backend(format!("version overflow on {}", write.key))
                    })?;
                    put.execute(params![
                        partition,
                        write.key,
                        sql_version,
                        value,
                        expires_at_ms.map(ms_to_sql)
                    ])
                    .map_err(sql_err)?;
                    live.insert(write.key, is_live(expires_at_ms, now_ms).then_some(version));
                }
                WriteOp::Delete => {
                    delete
                        .execute(params![partition, write.key])
                        .map_err(sql_err)?;
                    live.insert(write.key, None);
                }
                WriteOp::Check => {}
            }
        }
        if let Some(after_ms) = purge.after_ms
            && let Some(cutoff) = now_ms.checked_sub(after_ms)
            && purge.batch > 0
        {
            let cutoff = i64::try_from(cutoff).unwrap_or(i64::MAX);
            tx.prepare_cached(PURGE)
                .map_err(sql_err)?
                .execute(params![cutoff, purge.batch])
                .map_err(sql_err)?;
        }
    }
    tx.commit().map_err(sql_err)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Writer,
    Reader,
}

fn open_connection(
    path: &Path,
    options: &SqliteOptions,
    role: Role,
) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(sql_err)?;
    conn.busy_timeout(options.busy_timeout).map_err(sql_err)?;
    match role {
        Role::Writer => {
            enable_wal(&conn, options.busy_timeout)?;
            conn.pragma_update(None, "synchronous", "FULL")
                .map_err(sql_err)?;
        }
        Role::Reader => conn
            .pragma_update(None, "query_only", true)
            .map_err(sql_err)?,
    }
    Ok(conn)
}

/// Switches the file to WAL mode (persistent: later connections, in any process, find it so).
///
/// Switching needs an exclusive lock, and SQLite answers `SQLITE_BUSY` at once, without its busy
/// handler, while another connection holds any lock, which happens when several processes open
/// a fresh file together. So retry with a growing pause, as the busy handler would, for up to the
/// busy timeout. Once the file is in WAL mode the pragma is a no-op that succeeds at once.
fn enable_wal(conn: &Connection, busy_timeout: Duration) -> Result<(), StoreError> {
    let mut waited = Duration::ZERO;
    let mut pause = Duration::from_millis(1);
    loop {
        let outcome = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0));
        let failure = match outcome {
            Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
            // SQLite may also answer with the unchanged mode instead of an error.
            Ok(mode) => StoreError::Unavailable(format!("journal_mode stays {mode}")),
            Err(e) if is_busy(&e) => sql_err(e),
            Err(e) => return Err(with_context(sql_err(e), "switching to WAL mode")),
        };
        if waited >= busy_timeout {
            return Err(with_context(failure, "switching to WAL mode"));
        }
        thread::sleep(pause);
        waited += pause;
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| with_context(sql_err(e), "migrating: BEGIN IMMEDIATE"))?;
    let found: u32 = tx
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(|e| with_context(sql_err(e), "migrating: reading user_version"))?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::Backend(format!(
            "the database has schema version {found}, newer than this build's {SCHEMA_VERSION}; upgrade Handoff"
        )));
    }
    for version in found..SCHEMA_VERSION {
        tx.execute_batch(MIGRATIONS[version as usize])
            .map_err(sql_err)?;
        tx.pragma_update(None, "user_version", version + 1)
            .map_err(sql_err)?;
    }
    tx.commit().map_err(sql_err)
}

/// `u64` milliseconds as the `i64` with the same bits (exact round trip).
fn ms_to_sql(ms: u64) -> i64 {
    i64::from_ne_bytes(ms.to_ne_bytes())
}

fn ms_from_sql(ms: i64) -> u64 {
    u64::from_ne_bytes(ms.to_ne_bytes())
}

fn version_from_sql(version: i64) -> Result<u64, StoreError> {
    u64::try_from(version)
        .map_err(|_| StoreError::Backend(format!("corrupt row: version {version}")))
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

fn sql_err(e: rusqlite::Error) -> StoreError {
    if is_busy(&e) {
        return StoreError::Unavailable(format!(
            "sqlite: another connection held the database lock past the busy timeout ({e})"
        ));
    }
    match e.sqlite_error_code() {
        Some(ErrorCode::TooBig) => StoreError::TooLarge(format!("sqlite: {e}")),
        _ => StoreError::Backend(format!("sqlite: {e}")),
    }
}

fn with_context(e: StoreError, context: &str) -> StoreError {
    match e {
        StoreError::Unavailable(m) => StoreError::Unavailable(format!("{context}: {m}")),
        StoreError::TooLarge(m) => StoreError::TooLarge(format!("{context}: {m}")),
        StoreError::Backend(m) => StoreError::Backend(format!("{context}: {m}")),
        other => other,
    }
}

type Job = Box<dyn FnOnce(&mut Connection) + Send + 'static>;

/// Threads that each own one connection and take jobs from a shared queue.
struct Worker {
    queue: Option<mpsc::Sender<Job>>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl Worker {
    fn spawn(name: &str, connections: Vec<Connection>) -> Result<Self, StoreError> {
        let (queue, jobs) = mpsc::channel::<Job>();
        let jobs = Arc::new(Mutex::new(jobs));
        let mut worker = Self {
            queue: Some(queue),
            threads: Vec::with_capacity(connections.len()),
        };
        for (n, mut conn) in connections.into_iter().enumerate() {
            let jobs = Arc::clone(&jobs);
            let thread = thread::Builder::new()
                .name(format!("{name}-{n}"))
                .spawn(move || {
                    loop {
                        // The lock is held only while waiting for the next job, never while running one.
                        let job = jobs.lock().unwrap_or_else(PoisonError::into_inner).recv();
                        match job {
                            Ok(job) => job(&mut conn),
                            Err(mpsc::RecvError) => break, // the store was dropped
                        }
                    }
                })
                .map_err(|e| StoreError::Backend(format!("cannot start a sqlite thread: {e}")))?;
            worker.threads.push(thread);
        }
        Ok(worker)
    }

    /// Runs `f` on one of the worker's connections and awaits its result without blocking.
    async fn run<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let (answer, result) = oneshot::channel();
        let job: Job = Box::new(move |conn| {
            // A panic is reported to the caller and the thread keeps serving; an open
            // transaction was rolled back when the unwinding dropped it.
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| f(conn)))
                .unwrap_or_else(|_| Err(StoreError::Backend("sqlite worker panicked".to_owned())));
            // The caller may have stopped waiting; the outcome is then nobody's business.
            let _ = answer.send(outcome);
        });
        let stopped = || StoreError::Backend("sqlite worker stopped".to_owned());
        self.queue
            .as_ref()
            .ok_or_else(stopped)?
            .send(job)
            .map_err(|_| stopped())?;
        result.await.map_err(|_| stopped())?
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the queue ends each thread after the jobs already queued; joining closes the
        // connections before the store is gone (a reopened store finds the file released).
        drop(self.queue.take());
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}
