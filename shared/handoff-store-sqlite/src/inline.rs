//! Reads on the caller's thread: read-only connections that a `get` or `list` borrows for
//! the length of one read, instead of handing it to a reader thread and waiting for the
//! answer (two thread switches per read, each costing more than a read of a few cached pages).

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use handoff_core::store::StoreError;
use rusqlite::Connection;

use crate::open::{Role, open_connection};
use crate::options::SqliteOptions;
use crate::prepared::Prepared;

/// Connections any thread may read on, one caller at a time each.
pub(crate) struct InlineReaders {
    connections: Vec<Mutex<Connection>>,
}

impl InlineReaders {
    /// How many connections there are.
    pub(crate) fn len(&self) -> usize {
        self.connections.len()
    }

    /// The options' inline readers (none when 0): read-only connections that never wait for a
    /// lock (SQLite answers `SQLITE_BUSY` at once instead of running the busy handler, which
    /// sleeps, on the caller's thread).
    pub(crate) fn open(path: &Path, options: &SqliteOptions) -> Result<Option<Self>, StoreError> {
        if options.inline_readers == 0 {
            return Ok(None);
        }
        let no_wait = options.clone().with_busy_timeout(Duration::ZERO);
        let connections = (0..options.inline_readers)
            .map(|_| open_connection(path, &no_wait, Role::Reader).map(Mutex::new))
            .collect::<Result<_, _>>()?;
        Ok(Some(Self { connections }))
    }

    /// Runs `read` on the first connection not in use. `None` when every one is in use, or
    /// when the read found the database busy (a checkpoint restarting the WAL, a process
    /// recovering it): the caller then hands the read to a reader thread, which may wait.
    pub(crate) fn try_read<T>(
        &self,
        read: impl FnOnce(&mut Prepared<'_>) -> Result<T, StoreError>,
    ) -> Option<Result<T, StoreError>> {
        // In use by another caller (or poisoned, which `contain` rules out: it catches
        // panics): next.
        let conn = self.connections.iter().find_map(|c| c.try_lock().ok())?;
        // A read that panicked inside its transaction leaves none open for the next caller.
        let outcome = Prepared::from_cache(&conn).contain(read);
        match outcome {
            // Only a busy database maps to `Unavailable` here (`sql_err`).
            Err(StoreError::Unavailable(_)) => None,
            other => Some(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::InlineReaders;
    use crate::open::{Role, migrate, open_connection};
    use crate::options::SqliteOptions;
    use crate::read::read_items;

    /// A migrated database file with one row, `p`/`k` at version 1.
    fn database(dir: &tempfile::TempDir) -> Connection {
        let path = dir.path().join("store.sqlite3");
        let mut conn =
            open_connection(&path, &SqliteOptions::default(), Role::Writer).expect("open");
        migrate(&mut conn).expect("migrate");
        conn.execute(
            "INSERT INTO items (partition, key, version, value) VALUES ('p', 'k', 1, x'01')",
            [],
        )
        .expect("insert");
        conn
    }

    fn readers(dir: &tempfile::TempDir, count: usize) -> InlineReaders {
        let path = dir.path().join("store.sqlite3");
        InlineReaders::open(&path, &SqliteOptions::default().with_inline_readers(count))
            .expect("open")
            .expect("some connections")
    }

    fn read(readers: &InlineReaders) -> Option<Option<u64>> {
        readers
            .try_read(|p| read_items(p, "p", &["k"], 1))
            .map(|items| items.expect("read")[0].as_ref().map(|item| item.version))
    }

    #[test]
    fn a_read_takes_a_free_connection_and_leaves_it_when_all_are_in_use() {
        let dir = tempfile::tempdir().expect("tempdir");
        let _writer = database(&dir);
        let readers = readers(&dir, 2);
        assert_eq!(read(&readers), Some(Some(1)));
        let first = readers.connections[0].lock().expect("lock");
        assert_eq!(
            read(&readers),
            Some(Some(1)),
            "the second connection serves it"
        );
        let second = readers.connections[1].lock().expect("lock");
        assert_eq!(read(&readers), None, "every connection is in use");
        drop((first, second));
        assert_eq!(read(&readers), Some(Some(1)));
    }

    #[test]
    fn a_read_that_finds_the_database_busy_is_left_to_the_reader_threads() {
        let dir = tempfile::tempdir().expect("tempdir");
        let writer = database(&dir);
        let readers = readers(&dir, 1);
        // A connection in exclusive locking mode keeps every other one out, readers too.
        writer
            .execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; UPDATE items SET version = 2; COMMIT;")
            .expect("take the file");
        assert_eq!(
            read(&readers),
            None,
            "busy: answered at once, not waited for"
        );
        writer
            .execute_batch("PRAGMA locking_mode = NORMAL; SELECT count(*) FROM items;")
            .expect("release the file");
        assert_eq!(read(&readers), Some(Some(2)));
    }

    #[test]
    fn no_connections_no_inline_reads() {
        let dir = tempfile::tempdir().expect("tempdir");
        let _writer = database(&dir);
        let path = dir.path().join("store.sqlite3");
        assert!(
            InlineReaders::open(&path, &SqliteOptions::default().with_inline_readers(0))
                .expect("open")
                .is_none()
        );
    }
}
