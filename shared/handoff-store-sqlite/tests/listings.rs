//! Listings (`list_index`) on the file: the listing columns on every put path, ranks, expiry.

mod raw;

use futures::executor::block_on;
use handoff_core::store::IndexHit;
use handoff_core::{Condition, Store, StoreError, Write};
use handoff_store_sqlite::SqliteStore;
use raw::{NOW, entry, get_one, listed, put};

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
