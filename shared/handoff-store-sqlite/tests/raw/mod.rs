//! What the file holds, read around the store, and small helpers the store's file-level
//! tests share.

#![allow(dead_code, unreachable_pub)]

use futures::executor::block_on;
use handoff_core::store::{IndexEntry, IndexHit};
use handoff_core::{Condition, Item, Store, Write};
use handoff_store_sqlite::SqliteStore;

pub const NOW: u64 = 1_700_000_000_000;

pub fn put(key: &str, condition: Condition, value: &[u8], expires_at_ms: Option<u64>) -> Write {
    Write::put(key, condition, value.to_vec(), expires_at_ms)
}

pub fn get_one(store: &SqliteStore, partition: &str, key: &str, now_ms: u64) -> Option<Item> {
    block_on(store.get(partition, &[key], now_ms))
        .expect("get")
        .remove(0)
}

pub fn raw_row_count(path: &std::path::Path) -> i64 {
    let conn = rusqlite::Connection::open(path).expect("raw connection");
    conn.query_row("SELECT count(*) FROM items", [], |row| row.get(0))
        .expect("count rows")
}

/// The keys of `partition` as stored, expired or not.
pub fn raw_keys(path: &std::path::Path, partition: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).expect("raw connection");
    let mut select = conn
        .prepare("SELECT key FROM items WHERE partition = ?1 ORDER BY key")
        .expect("prepare");
    select
        .query_map([partition], |row| row.get(0))
        .and_then(Iterator::collect)
        .expect("keys")
}

/// The indexes of the file, beside the table's own.
pub fn raw_indexes(path: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).expect("raw connection");
    conn.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'")
        .and_then(|mut s| s.query_map([], |row| row.get(0))?.collect())
        .expect("indexes")
}

pub fn entry(scope: &str, rank: u64) -> IndexEntry {
    IndexEntry {
        scope: scope.to_owned(),
        rank,
    }
}

pub fn listed(
    store: &SqliteStore,
    scope: &str,
    after: Option<&IndexHit>,
    now_ms: u64,
) -> Vec<String> {
    block_on(store.list_index(scope, after, 10, now_ms))
        .expect("list_index")
        .into_iter()
        .map(|hit| format!("{}/{}@{}", hit.partition, hit.key, hit.rank))
        .collect()
}
