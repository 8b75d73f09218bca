//! The file's schema, and the migrations of files written by older versions.

mod raw;

use futures::executor::block_on;
use handoff_core::{Condition, Store};
use handoff_store_sqlite::{SCHEMA_VERSION, SqliteStore};
use raw::{NOW, entry, get_one, listed, put, raw_indexes, raw_row_count};

#[test]
fn the_file_has_the_documented_schema() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let store = SqliteStore::open(&path).expect("open");
    block_on(store.commit(
        "p",
        vec![put("k", Condition::Absent, b"v", Some(NOW + 1))],
        NOW,
    ))
    .expect("write");
    let conn = rusqlite::Connection::open(&path).expect("raw connection");
    let user_version: u32 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .expect("user_version");
    assert_eq!(user_version, SCHEMA_VERSION);
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .expect("journal_mode");
    assert_eq!(mode, "wal");
    let row: (String, String, i64, Vec<u8>, Option<i64>) = conn
        .query_row(
            "SELECT partition, key, version, value, expires_at_ms FROM items",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .expect("the row");
    assert_eq!(
        row,
        (
            "p".to_owned(),
            "k".to_owned(),
            1,
            b"v".to_vec(),
            Some(NOW as i64 + 1)
        )
    );
    let sql: String = conn
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE name = 'items'",
            [],
            |r| r.get(0),
        )
        .expect("table sql");
    assert!(
        sql.contains("UNIQUE (partition, key)") && sql.ends_with("STRICT"),
        "{sql}"
    );
    assert!(!sql.contains("WITHOUT ROWID"), "{sql}");
    assert!(
        sql.contains("ix_scope TEXT") && sql.contains("ix_rank INTEGER"),
        "{sql}"
    );
    let index: String = conn
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE name = 'items_listing'",
            [],
            |r| r.get(0),
        )
        .expect("index sql");
    assert!(
        index.contains("(ix_scope, ix_rank DESC, partition, key)")
            && index.ends_with("WHERE ix_scope IS NOT NULL"),
        "{index}"
    );
}

/// A file written by a build with schema version 1 (a `WITHOUT ROWID` table) opens, is
/// migrated in place and reads exactly as before.
#[test]
fn a_version_1_file_is_migrated_with_its_rows() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let big: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    {
        let conn = rusqlite::Connection::open(&path).expect("raw connection");
        conn.execute_batch(
            "CREATE TABLE items (
                partition     TEXT    NOT NULL,
                key           TEXT    NOT NULL,
                version       INTEGER NOT NULL,
                value         BLOB    NOT NULL,
                expires_at_ms INTEGER,
                PRIMARY KEY (partition, key)
            ) WITHOUT ROWID, STRICT;
            CREATE INDEX items_by_expiry ON items (expires_at_ms) WHERE expires_at_ms IS NOT NULL;
            PRAGMA user_version = 1;",
        )
        .expect("version 1 schema");
        let mut insert = conn
            .prepare("INSERT INTO items VALUES (?1, ?2, ?3, ?4, ?5)")
            .expect("prepare");
        insert
            .execute(rusqlite::params![
                "t1",
                "thread",
                3,
                b"v3".to_vec(),
                None::<i64>
            ])
            .expect("row");
        insert
            .execute(rusqlite::params![
                "t1",
                "run#r1",
                1,
                big.clone(),
                NOW as i64 + 10
            ])
            .expect("row");
        insert
            .execute(rusqlite::params![
                "t2",
                "lease",
                2,
                b"gone".to_vec(),
                NOW as i64 - 1
            ])
            .expect("row");
    }
    let store = SqliteStore::open(&path).expect("open migrates");
    let thread = get_one(&store, "t1", "thread", NOW).expect("thread kept");
    assert_eq!(
        (
            thread.version,
            thread.value.as_slice(),
            thread.expires_at_ms
        ),
        (3, &b"v3"[..], None)
    );
    let run = get_one(&store, "t1", "run#r1", NOW).expect("run kept");
    assert_eq!((run.version, run.expires_at_ms), (1, Some(NOW + 10)));
    assert_eq!(run.value, big);
    assert_eq!(
        get_one(&store, "t2", "lease", NOW),
        None,
        "expired stays expired"
    );
    assert_eq!(
        block_on(store.list("t1", "", NOW)).expect("list"),
        ["run#r1", "thread"]
    );
    // Writes keep their conditions and versions on the new table.
    block_on(store.commit(
        "t1",
        vec![put("thread", Condition::Version(3), b"v4", None)],
        NOW,
    ))
    .expect("conditional write");
    assert_eq!(
        get_one(&store, "t1", "thread", NOW).map(|i| i.version),
        Some(4)
    );
    let stale = put("thread", Condition::Version(3), b"v5", None);
    assert!(block_on(store.commit("t1", vec![stale], NOW)).is_err());
    drop(store);
    let conn = rusqlite::Connection::open(&path).expect("raw connection");
    let user_version: u32 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .expect("user_version");
    assert_eq!(user_version, SCHEMA_VERSION);
    assert_eq!(raw_row_count(&path), 3);
    // Version 3 sweeps for expired rows instead of keeping them in an index; version 4 adds
    // the listings' index.
    assert_eq!(raw_indexes(&path), ["items_listing"]);
}

/// A file written by a build with schema version 3 (no listing columns) opens, gains the
/// columns and their index in place, keeps its rows (listed nowhere until a put lists them)
/// and lists what is put next.
#[test]
fn a_version_3_file_is_migrated_and_lists() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    {
        let conn = rusqlite::Connection::open(&path).expect("raw connection");
        conn.execute_batch(
            "CREATE TABLE items (
                partition     TEXT    NOT NULL,
                key           TEXT    NOT NULL,
                version       INTEGER NOT NULL,
                expires_at_ms INTEGER,
                value         BLOB    NOT NULL,
                UNIQUE (partition, key)
            ) STRICT;
            PRAGMA user_version = 3;
            PRAGMA journal_mode = WAL;",
        )
        .expect("version 3 schema");
        let mut insert = conn
            .prepare("INSERT INTO items VALUES (?1, ?2, ?3, ?4, ?5)")
            .expect("prepare");
        for (partition, version) in [("t1", 2), ("t2", 5)] {
            insert
                .execute(rusqlite::params![
                    partition,
                    "thread",
                    version,
                    None::<i64>,
                    b"v".to_vec()
                ])
                .expect("row");
        }
    }
    let store = SqliteStore::open(&path).expect("open migrates");
    assert_eq!(
        get_one(&store, "t2", "thread", NOW).map(|i| i.version),
        Some(5)
    );
    assert!(
        listed(&store, "mine", None, NOW).is_empty(),
        "rows of version 3 are listed nowhere"
    );
    let head = |version, rank| {
        put("thread", Condition::Version(version), b"w", None).indexed(entry("mine", rank))
    };
    block_on(store.commit("t1", vec![head(2, NOW)], NOW)).expect("list t1");
    block_on(store.commit("t2", vec![head(5, NOW + 1)], NOW)).expect("list t2");
    assert_eq!(
        listed(&store, "mine", None, NOW),
        [format!("t2/thread@{}", NOW + 1), format!("t1/thread@{NOW}")]
    );
    assert_eq!(
        get_one(&store, "t1", "thread", NOW).map(|i| i.version),
        Some(3),
        "versions go on"
    );
    drop(store);
    let conn = rusqlite::Connection::open(&path).expect("raw connection");
    let user_version: u32 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .expect("user_version");
    assert_eq!(user_version, SCHEMA_VERSION);
    assert_eq!(raw_indexes(&path), ["items_listing"]);
    // Reopened (no migration left), the listing is still there.
    let store = SqliteStore::open(&path).expect("reopen");
    assert_eq!(listed(&store, "mine", None, NOW).len(), 2);
}
