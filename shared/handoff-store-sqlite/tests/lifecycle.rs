//! What the conformance suite cannot see: the file, restarts, locking, the schema, purging.

use std::time::Duration;

use futures::executor::block_on;
use handoff_core::store::{IndexEntry, IndexHit};
use handoff_core::{Condition, Item, Store, StoreError, Write};
use handoff_store_sqlite::{SCHEMA_VERSION, SqliteOptions, SqliteStore};

const NOW: u64 = 1_700_000_000_000;

fn put(key: &str, condition: Condition, value: &[u8], expires_at_ms: Option<u64>) -> Write {
    Write::put(key, condition, value.to_vec(), expires_at_ms)
}

fn get_one(store: &SqliteStore, partition: &str, key: &str, now_ms: u64) -> Option<Item> {
    block_on(store.get(partition, &[key], now_ms))
        .expect("get")
        .remove(0)
}

fn raw_row_count(path: &std::path::Path) -> i64 {
    let conn = rusqlite::Connection::open(path).expect("raw connection");
    conn.query_row("SELECT count(*) FROM items", [], |row| row.get(0))
        .expect("count rows")
}

/// The keys of `partition` as stored, expired or not.
fn raw_keys(path: &std::path::Path, partition: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).expect("raw connection");
    let mut select = conn
        .prepare("SELECT key FROM items WHERE partition = ?1 ORDER BY key")
        .expect("prepare");
    select
        .query_map([partition], |row| row.get(0))
        .and_then(Iterator::collect)
        .expect("keys")
}

#[test]
fn data_survives_a_restart() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let big: Vec<u8> = (0..(1 << 20))
        .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    {
        let store = SqliteStore::open(&path).expect("open");
        block_on(async {
            store
                .commit(
                    "t1",
                    vec![put("thread", Condition::Absent, b"v1", None)],
                    NOW,
                )
                .await?;
            store
                .commit(
                    "t1",
                    vec![put("thread", Condition::Version(1), b"v2", None)],
                    NOW,
                )
                .await?;
            store
                .commit(
                    "t1",
                    vec![put("thread", Condition::Version(2), b"v3", None)],
                    NOW,
                )
                .await?;
            store
                .commit(
                    "t1",
                    vec![put("run#1", Condition::Absent, &big, Some(NOW + 60_000))],
                    NOW,
                )
                .await?;
            store
                .commit(
                    "t2",
                    vec![put("thread", Condition::Absent, b"other", None)],
                    NOW,
                )
                .await
        })
        .expect("write");
    }
    let store = SqliteStore::open(&path).expect("reopen");
    assert_eq!(store.path(), Some(path.as_path()));
    let items = block_on(store.get("t1", &["thread", "run#1"], NOW)).expect("read back");
    assert_eq!(
        items[0],
        Some(Item {
            key: "thread".into(),
            version: 3,
            value: b"v3".to_vec(),
            expires_at_ms: None
        })
    );
    assert_eq!(
        items[1],
        Some(Item {
            key: "run#1".into(),
            version: 1,
            value: big,
            expires_at_ms: Some(NOW + 60_000)
        })
    );
    assert_eq!(
        block_on(store.list("t1", "", NOW)).expect("list"),
        vec!["run#1".to_owned(), "thread".to_owned()]
    );
    assert_eq!(
        get_one(&store, "t2", "thread", NOW).map(|i| i.value),
        Some(b"other".to_vec())
    );
    // Versions read before the restart still fence writers after it.
    assert_eq!(
        block_on(store.commit(
            "t1",
            vec![put("thread", Condition::Version(2), b"stale", None)],
            NOW
        )),
        Err(StoreError::ConditionFailed { index: 0 })
    );
    block_on(store.commit(
        "t1",
        vec![put("thread", Condition::Version(3), b"v4", None)],
        NOW,
    ))
    .expect("continue after restart");
    assert_eq!(
        get_one(&store, "t1", "thread", NOW).map(|i| i.version),
        Some(4)
    );
}

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

/// The indexes of the file, beside the table's own.
fn raw_indexes(path: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).expect("raw connection");
    conn.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'")
        .and_then(|mut s| s.query_map([], |row| row.get(0))?.collect())
        .expect("indexes")
}

fn entry(scope: &str, rank: u64) -> IndexEntry {
    IndexEntry {
        scope: scope.to_owned(),
        rank,
    }
}

fn listed(store: &SqliteStore, scope: &str, after: Option<&IndexHit>, now_ms: u64) -> Vec<String> {
    block_on(store.list_index(scope, after, 10, now_ms))
        .expect("list_index")
        .into_iter()
        .map(|hit| format!("{}/{}@{}", hit.partition, hit.key, hit.rank))
        .collect()
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

/// Every put writes the row's listing columns (NULL without an entry), on the fast path and
/// on the general one (a key named twice), so the file shows what `list_index` answers.
#[test]
fn puts_write_the_listing_columns_on_every_path() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let store = SqliteStore::open(&path).expect("open");
    let raw = |partition: &str| -> (Option<String>, Option<i64>) {
        let conn = rusqlite::Connection::open(&path).expect("raw connection");
        conn.query_row(
            "SELECT ix_scope, ix_rank FROM items WHERE partition = ?1 AND key = 'k'",
            [partition],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("row")
    };
    let listed_in = |partition: &str, scope: &str, rank: i64| {
        assert_eq!(
            raw(partition),
            (Some(scope.to_owned()), Some(rank)),
            "{partition}"
        );
    };
    let unlisted = |partition: &str| assert_eq!(raw(partition), (None, None), "{partition}");
    let put_k = |condition, rank: Option<u64>| {
        let write = put("k", condition, b"v", None);
        match rank {
            Some(rank) => write.indexed(entry("s", rank)),
            None => write,
        }
    };
    let commit = |partition: &str, writes: Vec<Write>| {
        block_on(store.commit(partition, writes, NOW)).expect("commit");
    };
    // Fast path: each condition's statement.
    commit("absent", vec![put_k(Condition::Absent, Some(1))]);
    listed_in("absent", "s", 1);
    commit("absent", vec![put_k(Condition::Always, Some(2))]);
    listed_in("absent", "s", 2);
    commit("absent", vec![put_k(Condition::Version(2), Some(3))]);
    listed_in("absent", "s", 3);
    commit("absent", vec![put_k(Condition::Version(3), None)]);
    unlisted("absent");
    commit("absent", vec![put_k(Condition::Always, Some(4))]);
    commit("absent", vec![put_k(Condition::Always, None)]);
    unlisted("absent");
    // The general path: the key named twice, the last put wins.
    commit(
        "general",
        vec![
            put_k(Condition::Absent, Some(5)),
            put_k(Condition::Always, Some(6)),
        ],
    );
    listed_in("general", "s", 6);
    commit(
        "general",
        vec![
            put_k(Condition::Version(2), Some(7)),
            put_k(Condition::Always, None),
        ],
    );
    unlisted("general");
    // A put over an expired row lists it again, at its new rank.
    block_on(store.commit(
        "expired",
        vec![put("k", Condition::Absent, b"v", Some(NOW + 1)).indexed(entry("s", 8))],
        NOW,
    ))
    .expect("expiring put");
    block_on(store.commit("expired", vec![put_k(Condition::Absent, Some(9))], NOW + 1))
        .expect("put over the expired row");
    listed_in("expired", "s", 9);
    assert_eq!(
        listed(&store, "s", None, NOW + 1),
        ["expired/k@9".to_owned()]
    );
}

/// A rank past `i64::MAX` cannot be kept in order: the batch is refused whole, before its
/// conditions, on either path. `i64::MAX` itself is kept, and a cursor ranked past it (a
/// caller's "from the top") lists everything.
#[test]
fn ranks_past_i64_max_are_refused() {
    let store = SqliteStore::in_memory().expect("open");
    let top = i64::MAX as u64;
    let write = |key: &str, rank| put(key, Condition::Absent, b"v", None).indexed(entry("s", rank));
    for writes in [
        vec![
            write("a", top + 1),
            Write::check("missing", Condition::Version(1)),
        ],
        vec![write("a", u64::MAX), write("a", 1)],
    ] {
        assert!(
            matches!(
                block_on(store.commit("p", writes, NOW)),
                Err(StoreError::Backend(message)) if message.contains("i64::MAX")
            ),
            "refused"
        );
    }
    assert_eq!(get_one(&store, "p", "a", NOW), None, "nothing written");
    // A delete carrying an entry (not through the constructors) does not care.
    let mut delete = Write::delete("a", Condition::Always);
    delete.index = Some(entry("s", u64::MAX));
    block_on(store.commit("p", vec![delete], NOW)).expect("delete");
    block_on(store.commit("p", vec![write("a", top), write("b", 0)], NOW)).expect("kept");
    let from_top = IndexHit {
        rank: u64::MAX,
        partition: String::new(),
        key: String::new(),
    };
    let expected = [format!("p/a@{top}"), "p/b@0".to_owned()];
    assert_eq!(listed(&store, "s", None, NOW), expected);
    assert_eq!(listed(&store, "s", Some(&from_top), NOW), expected);
    let after_a = IndexHit {
        rank: top,
        partition: "p".to_owned(),
        key: "a".to_owned(),
    };
    assert_eq!(
        listed(&store, "s", Some(&after_a), NOW),
        ["p/b@0".to_owned()]
    );
}

/// Listings filter expiry as reads do, expiries and clocks past `i64::MAX` included, and
/// count only live items against the limit.
#[test]
fn listings_skip_expired_items_as_reads_do() {
    let store = SqliteStore::in_memory().expect("open");
    let beyond = i64::MAX as u64 + 10;
    let expiries = [
        ("never", None),
        ("soon", Some(NOW + 1)),
        ("beyond", Some(beyond)),
        ("max", Some(u64::MAX)),
    ];
    let writes = expiries
        .iter()
        .enumerate()
        .map(|(n, (key, at))| put(key, Condition::Absent, b"v", *at).indexed(entry("s", n as u64)))
        .collect();
    block_on(store.commit("p", writes, NOW)).expect("write");
    let keys = |now_ms, limit| -> Vec<String> {
        block_on(store.list_index("s", None, limit, now_ms))
            .expect("list_index")
            .into_iter()
            .map(|hit| hit.key)
            .collect()
    };
    for now_ms in [NOW, NOW + 1, beyond - 1, beyond, u64::MAX - 1] {
        let live: Vec<String> = expiries
            .iter()
            .rev()
            .filter(|(key, _)| get_one(&store, "p", key, now_ms).is_some())
            .map(|(key, _)| (*key).to_owned())
            .collect();
        assert_eq!(keys(now_ms, 10), live, "at {now_ms}");
        assert_eq!(
            keys(now_ms, 1),
            live[..1],
            "at {now_ms}: the limit counts live items"
        );
    }
    assert_eq!(keys(NOW, 10), ["max", "beyond", "soon", "never"]);
    assert_eq!(keys(beyond, 10), ["max", "never"]);
    assert!(keys(NOW, 0).is_empty());
}

#[test]
fn open_creates_parent_directories() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("a").join("b").join("store.sqlite3");
    let store = SqliteStore::open(&path).expect("open in a missing directory");
    block_on(store.commit("p", vec![put("k", Condition::Absent, b"v", None)], NOW)).expect("write");
    assert!(path.is_file());
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    rusqlite::Connection::open(&path)
        .expect("raw connection")
        .pragma_update(None, "user_version", 99)
        .expect("set user_version");
    match SqliteStore::open(&path) {
        Err(StoreError::Backend(message)) => {
            assert!(message.contains("schema version 99"), "{message}")
        }
        other => panic!("expected a Backend error, got {other:?}"),
    }
}

#[test]
fn a_held_write_lock_maps_to_unavailable_and_reads_go_on() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let options = SqliteOptions::default().with_busy_timeout(Duration::from_millis(200));
    let store = SqliteStore::open_with(&path, options).expect("open");
    block_on(store.commit("p", vec![put("k", Condition::Absent, b"v1", None)], NOW))
        .expect("write");

    // Another process (here: another connection) holds the write lock.
    let mut other = rusqlite::Connection::open(&path).expect("raw connection");
    let lock = other
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .expect("take the write lock");
    match block_on(store.commit("p", vec![put("k", Condition::Version(1), b"v2", None)], NOW)) {
        Err(StoreError::Unavailable(_)) => {}
        other => panic!("expected Unavailable while another connection writes, got {other:?}"),
    }
    assert_eq!(
        get_one(&store, "p", "k", NOW).map(|i| i.value),
        Some(b"v1".to_vec()),
        "WAL readers are not blocked by a writer"
    );
    lock.commit().expect("release the lock");
    block_on(store.commit("p", vec![put("k", Condition::Version(1), b"v2", None)], NOW))
        .expect("write after the lock is released");
}

#[test]
fn a_waiting_commit_does_not_block_the_executor() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let store = SqliteStore::open_with(
        &path,
        SqliteOptions::default().with_busy_timeout(Duration::from_secs(20)),
    )
    .expect("open");
    block_on(store.commit("p", vec![put("k", Condition::Absent, b"v1", None)], NOW))
        .expect("write");

    let mut other = rusqlite::Connection::open(&path).expect("raw connection");
    let lock = other
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .expect("take the write lock");
    // On one single-threaded executor: the commit waits for the lock; the read and the release
    // can only run if waiting for the lock does not block the executor. Were it blocking, the
    // commit would give up after the busy timeout and fail.
    let commit = store.commit("p", vec![put("k", Condition::Version(1), b"v2", None)], NOW);
    let read_then_release = async {
        let item = store
            .get("p", &["k"], NOW)
            .await
            .expect("read while a commit waits")
            .remove(0);
        assert_eq!(item.map(|i| i.value), Some(b"v1".to_vec()));
        lock.commit().expect("release the lock");
    };
    let (committed, ()) = block_on(futures::future::join(commit, read_then_release));
    committed.expect("the commit went through once the lock was released");
    assert_eq!(get_one(&store, "p", "k", NOW).map(|i| i.version), Some(2));
}

#[test]
fn long_expired_rows_are_purged_in_bounded_batches() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let options = SqliteOptions::default()
        .with_purge_expired_after(Some(1_000))
        .with_purge_batch(2);
    let store = SqliteStore::open_with(&path, options).expect("open");
    let writes = (0..5)
        .map(|n| put(&format!("old#{n}"), Condition::Absent, b"x", Some(NOW + n)))
        .collect();
    block_on(store.commit("p", writes, NOW)).expect("write expiring rows");
    block_on(store.commit(
        "p",
        vec![put("recent", Condition::Absent, b"x", Some(NOW + 5_000))],
        NOW,
    ))
    .expect("write");
    block_on(store.commit("p", vec![put("live", Condition::Absent, b"x", None)], NOW))
        .expect("write");
    assert_eq!(raw_row_count(&path), 7);

    // From 1.5 s after the old rows expired, a commit a second: the sweep deletes at most two
    // rows per group (it examines two), until every old row is gone; `recent` (not purgeable
    // before NOW + 6 s) and `live` stay.
    let mut rows = raw_row_count(&path);
    let mut now = NOW + 1_004 + 500;
    for n in 0.. {
        if now >= NOW + 6_000 {
            break;
        }
        block_on(store.commit(
            "q",
            vec![put(&format!("k{n}"), Condition::Absent, b"x", None)],
            now,
        ))
        .expect("commit");
        let after = raw_row_count(&path);
        assert!(
            rows + 1 - after <= 2,
            "{} rows purged by one group",
            rows + 1 - after
        );
        rows = after;
        now += 1_000;
    }
    assert_eq!(raw_keys(&path, "p"), ["live", "recent"]);
    // A failed commit purges nothing.
    let much_later = NOW + 10_000;
    let failed = block_on(store.commit(
        "q",
        vec![put("k0", Condition::Absent, b"x", None)],
        much_later,
    ));
    assert_eq!(failed, Err(StoreError::ConditionFailed { index: 0 }));
    assert_eq!(raw_row_count(&path), rows);
    // Purging never changes what callers see: an expired row and a purged one both read as absent
    // and are both replaced at version 1.
    block_on(store.commit(
        "p",
        vec![put("recent", Condition::Absent, b"y", None)],
        much_later,
    ))
    .expect("replace");
    assert_eq!(
        get_one(&store, "p", "recent", much_later).map(|i| i.version),
        Some(1)
    );
}

#[test]
fn purging_pauses_for_a_second_once_nothing_is_left() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store.sqlite3");
    let options = SqliteOptions::default().with_purge_expired_after(Some(1_000));
    let store = SqliteStore::open_with(&path, options).expect("open");
    let commit_at = |key: &str, now: u64| {
        block_on(store.commit("q", vec![put(key, Condition::Absent, b"x", None)], now))
            .expect("commit")
    };
    // Expired 800 ms before NOW: not yet past the one-second horizon at NOW, so this purge
    // finds nothing and pauses.
    block_on(store.commit(
        "p",
        vec![put("old", Condition::Absent, b"x", Some(NOW - 800))],
        NOW,
    ))
    .expect("write");
    commit_at("a", NOW + 100);
    // Half a second later the row is purgeable, but the purge is still paused.
    commit_at("b", NOW + 500);
    assert_eq!(raw_row_count(&path), 3);
    // A second after the pause began, it looks again.
    commit_at("c", NOW + 1_000);
    assert_eq!(raw_row_count(&path), 3, "old went, c came");
    assert_eq!(
        block_on(store.list("p", "", NOW)).expect("list"),
        Vec::<String>::new()
    );
}

#[test]
fn expiries_beyond_i64_round_trip() {
    let store = SqliteStore::in_memory().expect("open");
    let huge = [u64::MAX, i64::MAX as u64 + 1, i64::MAX as u64];
    let writes = huge
        .iter()
        .enumerate()
        .map(|(n, at)| put(&format!("k{n}"), Condition::Absent, b"x", Some(*at)))
        .collect();
    block_on(store.commit("p", writes, NOW)).expect("write");
    for (n, at) in huge.iter().enumerate() {
        assert_eq!(
            get_one(&store, "p", &format!("k{n}"), NOW).and_then(|i| i.expires_at_ms),
            Some(*at),
            "k{n}"
        );
    }
    // A commit at a `now` beyond i64::MAX: its purge removes `k2`, long expired by then, and
    // leaves the rows stored with the high bit set.
    block_on(store.commit(
        "q",
        vec![put("x", Condition::Absent, b"x", None)],
        u64::MAX - 1,
    ))
    .expect("commit");
    assert_eq!(
        get_one(&store, "p", "k0", u64::MAX - 1).map(|i| i.version),
        Some(1),
        "live until u64::MAX"
    );
    assert_eq!(
        get_one(&store, "p", "k1", NOW).and_then(|i| i.expires_at_ms),
        Some(i64::MAX as u64 + 1)
    );
    assert_eq!(get_one(&store, "p", "k2", NOW), None, "purged");
}

#[test]
fn store_is_usable_behind_dyn_and_arc() {
    let store: std::sync::Arc<dyn Store> =
        std::sync::Arc::new(SqliteStore::in_memory().expect("open"));
    block_on(store.commit("p", vec![put("k", Condition::Absent, b"v", None)], NOW)).expect("write");
    assert!(format!("{:?}", SqliteStore::in_memory().expect("open")).starts_with("SqliteStore"));
    assert_eq!(
        block_on(store.list("p", "k", NOW)).expect("list"),
        vec!["k".to_owned()]
    );
}
