//! Both ends of a listing (see [`crate::listing`]): the partition's outbox, written in the
//! commit's transaction and delivered after it, and the scope's table it feeds.

use std::collections::BTreeMap;

use futures::future::join_all;
use wasm_bindgen::JsValue;
use worker::{Method, ObjectNamespace, Request, RequestInit, Result, SqlStorage, SqlStorageValue};

use super::{as_u64, int, object_now};
use crate::protocol::StoreRequest;
use crate::protocol::{ListingChange, WireHit};

/// The tables of both roles (an object plays one; the other's tables stay empty).
pub(super) const SCHEMA: [&str; 5] = [
    // Partition role: changes not yet acknowledged by their scope, and the sequence.
    "CREATE TABLE IF NOT EXISTS listing_outbox (
        seq INTEGER PRIMARY KEY,
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        rank INTEGER,
        expires_at INTEGER,
        due_at INTEGER NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0
    )",
    "CREATE TABLE IF NOT EXISTS listing_meta (
        id INTEGER PRIMARY KEY CHECK (id = 0),
        seq INTEGER NOT NULL,
        partition TEXT NOT NULL
    )",
    // Scope role: the latest change per item; `rank` NULL is a tombstone.
    "CREATE TABLE IF NOT EXISTS listing (
        partition TEXT NOT NULL,
        key TEXT NOT NULL,
        rank INTEGER,
        expires_at INTEGER,
        seq INTEGER NOT NULL,
        PRIMARY KEY (partition, key)
    )",
    "CREATE INDEX IF NOT EXISTS listing_order ON listing (rank DESC, partition, key) WHERE rank IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS listing_expiry ON listing (expires_at) WHERE expires_at IS NOT NULL",
];

/// Columns added to `items` by this version; adding one that exists fails harmlessly.
pub(super) const ITEM_COLUMNS: [&str; 2] = [
    "ALTER TABLE items ADD COLUMN ix_scope TEXT",
    "ALTER TABLE items ADD COLUMN ix_rank INTEGER",
];

/// A removal stays this long, so an older change that arrives late cannot list the item again.
const TOMBSTONE_MS: u64 = 86_400_000;

/// Expired entries and tombstones purged per change delivered to a scope.
const PURGE_BATCH: u64 = 100;

/// Outbox changes sent per delivery (the rest go with the next one, scheduled at once).
const DELIVERY_BATCH: u64 = 500;

/// A failed delivery is retried after 2^attempts seconds, at most this long.
const MAX_BACKOFF_MS: u64 = 600_000;

/// Numbers `changes` after the partition's last sequence number and adds them to its
/// outbox; runs inside the commit's transaction.
pub(super) fn enqueue(sql: &SqlStorage, partition: &str, changes: &[ListingChange]) -> Result<()> {
    if changes.is_empty() {
        return Ok(());
    }
    let last = super::min_of(sql, "SELECT seq FROM listing_meta WHERE id = 0")?.unwrap_or(0);
    for (offset, change) in (1..).zip(changes) {
        sql.exec(
            "INSERT INTO listing_outbox (seq, scope, key, rank, expires_at) VALUES (?, ?, ?, ?, ?)",
            vec![
                int(last + offset),
                SqlStorageValue::from(change.scope.as_str()),
                SqlStorageValue::from(change.key.as_str()),
                change.rank.map_or(SqlStorageValue::Null, int),
                change.expires_at_ms.map_or(SqlStorageValue::Null, int),
            ],
        )?;
    }
    sql.exec(
        "INSERT INTO listing_meta (id, seq, partition) VALUES (0, ?, ?)
         ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, partition = excluded.partition",
        vec![
            int(last + changes.len() as u64),
            SqlStorageValue::from(partition),
        ],
    )?;
    Ok(())
}

/// Sends the due outbox changes to their scopes' objects, dropping those acknowledged
/// and delaying the others with backoff. Returns when the next delivery is due, if any
/// change is left.
pub(super) async fn deliver(sql: &SqlStorage, objects: &ObjectNamespace) -> Result<Option<u64>> {
    let Some(partition) = partition_of(sql)? else {
        return Ok(None);
    };
    let now = object_now();
    let mut by_scope: BTreeMap<String, Vec<(ListingChange, u64)>> = BTreeMap::new();
    let rows = sql.exec(
        "SELECT seq, scope, key, rank, expires_at, attempts FROM listing_outbox WHERE due_at <= ? ORDER BY seq LIMIT ?",
        vec![int(now), int(DELIVERY_BATCH)],
    )?;
    for row in rows.raw() {
        let mut columns = row?.into_iter();
        let mut next = || columns.next().unwrap_or(SqlStorageValue::Null);
        let (seq, scope, key, rank, expires, attempts) =
            (next(), next(), next(), next(), next(), next());
        let (Some(seq), SqlStorageValue::String(scope), SqlStorageValue::String(key)) =
            (as_u64(seq), scope, key)
        else {
            return Err("listing_outbox row is malformed".into());
        };
        by_scope.entry(scope.clone()).or_default().push((
            ListingChange {
                seq,
                scope,
                key,
                rank: as_u64(rank),
                expires_at_ms: as_u64(expires),
            },
            as_u64(attempts).unwrap_or(0),
        ));
    }
    let deliveries = by_scope.iter().map(|(scope, changes)| {
        let request = StoreRequest::Relist {
            partition: partition.clone(),
            changes: changes.iter().map(|(c, _)| c.clone()).collect(),
        };
        send(objects, scope, request)
    });
    let outcomes = join_all(deliveries).await;
    for ((scope, changes), outcome) in by_scope.iter().zip(outcomes) {
        for (change, attempts) in changes {
            match &outcome {
                Ok(()) => {
                    sql.exec(
                        "DELETE FROM listing_outbox WHERE seq = ?",
                        vec![int(change.seq)],
                    )?;
                }
                Err(_) => {
                    let backoff = (1_000u64 << (*attempts).min(20)).min(MAX_BACKOFF_MS);
                    sql.exec(
                        "UPDATE listing_outbox SET attempts = attempts + 1, due_at = ? WHERE seq = ?",
                        vec![int(now + backoff), int(change.seq)],
                    )?;
                }
            }
        }
        if let Err(err) = outcome {
            worker::console_warn!("handoff: listing {scope:?} not told yet, will retry: {err}");
        }
    }
    super::min_of(sql, "SELECT MIN(due_at) FROM listing_outbox")
}

fn partition_of(sql: &SqlStorage) -> Result<Option<String>> {
    let rows = sql.exec("SELECT partition FROM listing_meta WHERE id = 0", None)?;
    Ok(
        match rows
            .raw()
            .next()
            .transpose()?
            .and_then(|r| r.into_iter().next())
        {
            Some(SqlStorageValue::String(partition)) => Some(partition),
            _ => None,
        },
    )
}

async fn send(objects: &ObjectNamespace, scope: &str, request: StoreRequest) -> Result<()> {
    let body = serde_json::to_string(&request)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_body(Some(JsValue::from_str(&body)));
    let request = Request::new_with_init("https://listing.handoff/", &init)?;
    let stub = objects.get_by_name(&crate::listing::scope_object_name(scope))?;
    let response = stub.fetch_with_request(request).await?;
    match response.status_code() {
        200 => Ok(()),
        status => Err(format!("scope object answered {status}").into()),
    }
}

/// Applies a partition's changes to this scope's listing: per item, the change with the
/// highest sequence number wins; then purges a few entries expired by `purge_before`.
pub(super) fn relist(
    sql: &SqlStorage,
    partition: &str,
    changes: &[ListingChange],
    purge_before: u64,
) -> Result<()> {
    let tombstone_expiry = object_now().saturating_add(TOMBSTONE_MS);
    for change in changes {
        let expires = match change.rank {
            Some(_) => change.expires_at_ms,
            None => Some(tombstone_expiry),
        };
        sql.exec(
            "INSERT INTO listing (partition, key, rank, expires_at, seq) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (partition, key) DO UPDATE
             SET rank = excluded.rank, expires_at = excluded.expires_at, seq = excluded.seq
             WHERE excluded.seq > listing.seq",
            vec![
                SqlStorageValue::from(partition),
                SqlStorageValue::from(change.key.as_str()),
                change.rank.map_or(SqlStorageValue::Null, int),
                expires.map_or(SqlStorageValue::Null, int),
                int(change.seq),
            ],
        )?;
    }
    sql.exec(
        "DELETE FROM listing WHERE rowid IN (SELECT rowid FROM listing WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?)",
        vec![int(purge_before), int(PURGE_BATCH)],
    )?;
    Ok(())
}

/// A page of this scope's live entries, highest rank first, after `after`.
pub(super) fn page(
    sql: &SqlStorage,
    after: Option<&WireHit>,
    limit: u32,
    now_ms: u64,
) -> Result<Vec<WireHit>> {
    let live = "rank IS NOT NULL AND (expires_at IS NULL OR expires_at > ?)";
    let rows = match after {
        None => sql.exec(
            &format!("SELECT rank, partition, key FROM listing WHERE {live} ORDER BY rank DESC, partition, key LIMIT ?"),
            vec![int(now_ms), int(u64::from(limit))],
        )?,
        Some(hit) => sql.exec(
            &format!(
                "SELECT rank, partition, key FROM listing WHERE {live}
                 AND (rank < ? OR (rank = ? AND (partition > ? OR (partition = ? AND key > ?))))
                 ORDER BY rank DESC, partition, key LIMIT ?"
            ),
            vec![
                int(now_ms),
                int(hit.rank),
                int(hit.rank),
                SqlStorageValue::from(hit.partition.as_str()),
                SqlStorageValue::from(hit.partition.as_str()),
                SqlStorageValue::from(hit.key.as_str()),
                int(u64::from(limit)),
            ],
        )?,
    };
    let mut hits = Vec::new();
    for row in rows.raw() {
        let mut columns = row?.into_iter();
        let mut next = || columns.next().unwrap_or(SqlStorageValue::Null);
        if let (Some(rank), SqlStorageValue::String(partition), SqlStorageValue::String(key)) =
            (as_u64(next()), next(), next())
        {
            hits.push(WireHit {
                rank,
                partition,
                key,
            });
        }
    }
    Ok(hits)
}
