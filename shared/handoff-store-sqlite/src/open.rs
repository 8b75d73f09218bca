//! Opening a database: connections, their pragmas, WAL mode and schema migrations.

use std::path::Path;
use std::thread;
use std::time::Duration;

use handoff_core::store::StoreError;
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::SCHEMA_VERSION;
use crate::options::SqliteOptions;
use crate::sql::{is_busy, sql_err, with_context};

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
", "
    CREATE TABLE items_v2 (
        partition     TEXT    NOT NULL,
        key           TEXT    NOT NULL,
        version       INTEGER NOT NULL,
        expires_at_ms INTEGER,
        value         BLOB    NOT NULL,
        UNIQUE (partition, key)
    ) STRICT;
    INSERT INTO items_v2 (partition, key, version, expires_at_ms, value)
        SELECT partition, key, version, expires_at_ms, value FROM items;
    DROP TABLE items;
    ALTER TABLE items_v2 RENAME TO items;
    CREATE INDEX items_by_expiry ON items (expires_at_ms) WHERE expires_at_ms IS NOT NULL;
", "
    DROP INDEX IF EXISTS items_by_expiry;
", "
    ALTER TABLE items ADD COLUMN ix_scope TEXT;
    ALTER TABLE items ADD COLUMN ix_rank INTEGER;
    CREATE INDEX items_listing ON items (ix_scope, ix_rank DESC, partition, key)
        WHERE ix_scope IS NOT NULL;
"];

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Writer,
    Reader,
}

pub(crate) fn open_connection(
    path: &Path,
    options: &SqliteOptions,
    role: Role,
) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(sql_err)?;
    conn.busy_timeout(options.busy_timeout).map_err(sql_err)?;
    plan_stably(&conn)?;
    match role {
        Role::Writer => {
            enable_wal(&conn, options.busy_timeout)?;
            conn.pragma_update(None, "synchronous", options.synchronous.pragma())
                .map_err(sql_err)?;
        }
        Role::Reader => conn
            .pragma_update(None, "query_only", true)
            .map_err(sql_err)?,
    }
    Ok(conn)
}

/// Turns on the query planner's stability guarantee: plans never depend on bound values.
/// Without it this build of SQLite (STAT4) re-prepares a cached statement whenever a parameter
/// in a range (`key >= ?`, `rowid > ?`) is bound anew, so every list and every sweep
/// parsed its SQL again; the plans are the same either way (the obvious indexes).
pub(crate) fn plan_stably(conn: &Connection) -> Result<(), StoreError> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map(drop)
        .map_err(sql_err)
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

pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
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

/// A migrated in-memory database, configured as the store's file connections are.
pub(crate) fn open_in_memory() -> Result<Connection, StoreError> {
    let mut conn = Connection::open_in_memory().map_err(sql_err)?;
    plan_stably(&conn)?;
    migrate(&mut conn)?;
    Ok(conn)
}

/// [`open_in_memory`], for unit tests.
#[cfg(test)]
pub(crate) fn test_database() -> Connection {
    open_in_memory().expect("in-memory database")
}

#[cfg(test)]
mod tests {
    use super::{Role, open_connection};
    use crate::options::{SqliteOptions, Synchronous};

    fn synchronous_of(options: &SqliteOptions) -> i64 {
        let dir = tempfile::tempdir().unwrap();
        let conn = open_connection(&dir.path().join("s.db"), options, Role::Writer).unwrap();
        conn.pragma_query_value(None, "synchronous", |row| row.get(0))
            .unwrap()
    }

    #[test]
    fn writers_use_the_chosen_synchronous_level() {
        // SQLite reports FULL as 2 and NORMAL as 1.
        assert_eq!(synchronous_of(&SqliteOptions::default()), 2);
        let normal = SqliteOptions::default().with_synchronous(Synchronous::Normal);
        assert_eq!(synchronous_of(&normal), 1);
        assert_eq!("Normal".parse::<Synchronous>(), Ok(Synchronous::Normal));
        assert!("off".parse::<Synchronous>().is_err());
    }
}
