//! [`SqliteOptions`]: tuning for [`SqliteStore::open_with`](crate::SqliteStore::open_with).

use std::time::Duration;

/// The most commits one transaction takes from the queue (the default of
/// [`SqliteOptions::with_max_group`], and its ceiling).
pub(crate) const MAX_GROUP: usize = 64;

/// Tuning for [`SqliteStore::open_with`](crate::SqliteStore::open_with); [`Default`] gives the
/// values [`SqliteStore::open`](crate::SqliteStore::open) uses.
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    pub(crate) busy_timeout: Duration,
    pub(crate) readers: usize,
    pub(crate) inline_readers: usize,
    pub(crate) purge: Purge,
    pub(crate) synchronous: Synchronous,
    pub(crate) max_group: usize,
}

/// How hard a commit waits for the disk (SQLite's `synchronous` in WAL mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Synchronous {
    /// `FULL` (the default): a commit that returned survives a crash of the process or of
    /// the machine (a power loss).
    #[default]
    Full,
    /// `NORMAL`: a commit that returned survives a crash of the process, but the last
    /// commits before a power loss or an operating-system crash may be lost (the database
    /// stays consistent). Fewer fsyncs: faster commits.
    Normal,
}

impl Synchronous {
    /// The pragma's value.
    pub(crate) fn pragma(self) -> &'static str {
        match self {
            Synchronous::Full => "FULL",
            Synchronous::Normal => "NORMAL",
        }
    }
}

impl std::str::FromStr for Synchronous {
    type Err = String;

    /// `full` or `normal` (any case).
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value.trim().to_ascii_lowercase().as_str() {
            "full" => Ok(Synchronous::Full),
            "normal" => Ok(Synchronous::Normal),
            _ => Err(format!("{value:?} is not full or normal")),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Purge {
    pub(crate) after_ms: Option<u64>,
    pub(crate) batch: u32,
}

impl Purge {
    /// Nothing is ever purged (unit tests of the writer's other work).
    #[cfg(test)]
    pub(crate) const NEVER: Purge = Purge {
        after_ms: None,
        batch: 0,
    };
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            busy_timeout: Duration::from_secs(5),
            readers: 2,
            inline_readers: 2,
            purge: Purge {
                after_ms: Some(60 * 60 * 1000),
                batch: 100,
            },
            synchronous: Synchronous::Full,
            max_group: MAX_GROUP,
        }
    }
}

impl SqliteOptions {
    /// How hard a commit waits for the disk (default [`Synchronous::Full`]).
    pub fn with_synchronous(mut self, synchronous: Synchronous) -> Self {
        self.synchronous = synchronous;
        self
    }

    /// How long a commit waits for another connection's write lock before failing with
    /// [`StoreError::Unavailable`](handoff_core::StoreError::Unavailable) (default 5 s).
    pub fn with_busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// How many reader threads, each with a read-only connection, serve the `get`s and `list`s
    /// that the inline readers ([`with_inline_readers`](Self::with_inline_readers)) leave to
    /// them (default 2). With 0, those reads share the writer's connection and queue behind
    /// commits.
    pub fn with_readers(mut self, readers: usize) -> Self {
        self.readers = readers;
        self
    }

    /// How many read-only connections serve `get` and `list` on the caller's thread (default
    /// 2). A read takes the first one free and runs at once, without waiting for a reader
    /// thread; it goes to the reader threads instead when all are in use, or when the database
    /// is busy (these connections never wait for a lock). A read of rows in the operating
    /// system's page cache takes microseconds; on a file system where a read may wait on the
    /// network, set 0 so that no read blocks the caller's thread.
    pub fn with_inline_readers(mut self, connections: usize) -> Self {
        self.inline_readers = connections;
        self
    }

    /// Rows that expired at least this many milliseconds before a commit's `now_ms` may be
    /// deleted by that commit's group (default 1 hour); `None` keeps every row forever. An expired row
    /// already behaves as absent, so deleting it changes nothing for callers whose clocks agree;
    /// the horizon keeps a caller whose clock lags by less than it from seeing a row it still
    /// considers live disappear.
    pub fn with_purge_expired_after(mut self, after_ms: Option<u64>) -> Self {
        self.purge.after_ms = after_ms;
        self
    }

    /// How many rows a group of commits examines for long-expired ones while a sweep runs,
    /// and so deletes at most (default 100; 0 disables purging). A sweep that reaches the end
    /// of the table pauses the purge for the horizon (at least a second).
    pub fn with_purge_batch(mut self, rows: u32) -> Self {
        self.purge.batch = rows;
        self
    }

    /// The most commits one transaction takes from the queue (default 64, the most allowed;
    /// values are kept between 1 and 64). A measurement knob: 1 turns group commit off, so
    /// every commit is a transaction (and under `synchronous = FULL` an fsync) of its own,
    /// the baseline [`SqliteStore::stats`](crate::SqliteStore::stats) compares group commit
    /// with. Answers and durability are the same either way.
    pub fn with_max_group(mut self, commits: usize) -> Self {
        self.max_group = commits.clamp(1, MAX_GROUP);
        self
    }
}
