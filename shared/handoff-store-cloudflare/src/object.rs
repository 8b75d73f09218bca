//! The Durable Object that owns one partition: the single, strongly consistent
//! writer for its items, in the object's SQLite storage.
//!
//! Isolation comes from the object model, not from locks: a commit reads the
//! rows it conditions on, decides ([`plan_commit`]) and writes, all with
//! synchronous SQL calls and no `await` in between, so no other request to
//! this object can interleave. Atomicity needs one more step: each SQL
//! statement is applied as it runs, so a statement that throws half-way (a
//! value over SQLite's size limit, a constraint) would leave the earlier ones
//! in place. The writes therefore run inside `storage.transactionSync`, which
//! rolls all of them back when one throws.
//!
//! The object also collects the partition's KV blobs (see the crate docs,
//! "Blob lifecycle"): a commit that replaces or deletes a row referencing a
//! blob records that blob in `blob_gc` inside the same transaction, and so
//! does the alarm that purges expired rows; a refused commit or a release
//! from the Worker records the blobs of a batch that never landed. The alarm
//! then deletes each recorded blob from KV once its grace has passed, unless
//! a row references it again, retrying failed deletes with backoff.

use serde::Serialize;
use wasm_bindgen::prelude::{Closure, JsValue, wasm_bindgen};
use worker::js_sys::Function;
use worker::kv::KvStore;
use worker::wasm_bindgen::JsCast;
use worker::{
    Date, DurableObject, Env, ObjectNamespace, Request, Response, Result, SqlStorage,
    SqlStorageValue, State, Storage, durable_object,
};

use crate::listing::listing_changes;
use crate::protocol::{
    BlobChanges, ConditionFailedResponse, GetResponse, ListIndexResponse, ListResponse, Listed,
    ListingChange, Mutation, Row, StoreRequest, StoredValue, WireWrite, batch_blobs, blob_changes,
    is_collectable, plan_commit,
};

mod blob_gc;
mod listings;

use blob_gc::{collect_due, referenced, retire};

/// `items` holds the partition; `blob_gc` the KV blobs no row references any
/// more, due for deletion at `due_at` (Unix ms). The expression index answers
/// "does a row still reference this blob?" without a scan.
const SCHEMA: [&str; 4] = [
    "CREATE TABLE IF NOT EXISTS items (
        key TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        inline BLOB,
        blob TEXT,
        expires_at INTEGER
    )",
    "CREATE INDEX IF NOT EXISTS items_blob_key ON items (json_extract(blob, '$.kvKey')) WHERE blob IS NOT NULL",
    "CREATE TABLE IF NOT EXISTS blob_gc (
        kv_key TEXT PRIMARY KEY,
        due_at INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0
    )",
    "CREATE INDEX IF NOT EXISTS blob_gc_due ON blob_gc (due_at)",
];

/// Durable Object SQL accepts at most 100 bound parameters per statement.
const KEYS_PER_SELECT: usize = 90;

/// Expired rows already read as absent; physical deletion waits this long past
/// expiry so a Worker whose clock runs slightly behind the object's never sees
/// a row vanish before it expired by the Worker's own clock. The variable
/// `HANDOFF_PURGE_GRACE_MS` overrides it (tests use 0).
const PURGE_GRACE_MS: u64 = 60_000;

/// A blob no row references any more is deleted from KV this long after it was
/// released, so a reader that got the row just before it was replaced still
/// finds the bytes (readers wait at most a few seconds for a blob). The
/// variable `HANDOFF_BLOB_GC_GRACE_MS` overrides it (tests use 1 s).
const BLOB_GC_GRACE_MS: u64 = 60_000;

/// The KV binding the object deletes blobs from, unless `HANDOFF_BLOBS_BINDING` names another.
const DEFAULT_BLOBS_BINDING: &str = "BLOBS";

/// The binding of this class, through which a partition's object tells scopes' objects
/// about listing changes, unless `HANDOFF_PARTITIONS_BINDING` names another.
const DEFAULT_PARTITIONS_BINDING: &str = "PARTITIONS";

/// One partition's items. Bind it as a SQLite-backed class (`new_sqlite_classes`).
#[durable_object]
pub struct PartitionObject {
    state: State,
    purge_grace_ms: u64,
    gc_grace_ms: u64,
    /// Without a KV binding there are no blobs to collect.
    blobs: Option<KvStore>,
    /// This class's namespace, to reach the objects that keep listings.
    objects: Option<ObjectNamespace>,
}

impl DurableObject for PartitionObject {
    fn new(state: State, env: Env) -> Self {
        let sql = state.storage().sql();
        for statement in SCHEMA.into_iter().chain(listings::SCHEMA) {
            if let Err(err) = sql.exec(statement, None) {
                // Every later statement fails the same way and is answered with a 500.
                worker::console_error!("handoff partition schema: {err}");
            }
        }
        for statement in listings::ITEM_COLUMNS {
            // Fails with "duplicate column" on every start after the first: nothing to do.
            let _ = sql.exec(statement, None);
        }
        let var = |name: &str| env.var(name).ok().map(|v| v.to_string());
        let millis =
            |name: &str, default: u64| var(name).and_then(|v| v.parse().ok()).unwrap_or(default);
        let binding =
            var("HANDOFF_BLOBS_BINDING").unwrap_or_else(|| DEFAULT_BLOBS_BINDING.to_owned());
        let objects = var("HANDOFF_PARTITIONS_BINDING")
            .unwrap_or_else(|| DEFAULT_PARTITIONS_BINDING.to_owned());
        Self {
            objects: env.durable_object(&objects).ok(),
            purge_grace_ms: millis("HANDOFF_PURGE_GRACE_MS", PURGE_GRACE_MS),
            gc_grace_ms: millis("HANDOFF_BLOB_GC_GRACE_MS", BLOB_GC_GRACE_MS),
            blobs: env.kv(&binding).ok(),
            state,
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        // serde_json on the text, not JavaScript's JSON.parse (`req.json()`): a number past
        // 2^53 (a rank above MAX_RANK, say) is refused by name instead of read rounded.
        let parsed = match req.text().await {
            Ok(text) => serde_json::from_str::<StoreRequest>(&text).map_err(|e| e.to_string()),
            Err(err) => Err(err.to_string()),
        };
        let request = match parsed {
            Ok(request) => request,
            Err(err) => return Response::error(format!("bad store request: {err}"), 400),
        };
        let sql = self.state.storage().sql();
        match request {
            StoreRequest::Get { keys, now_ms } => {
                let items = read_rows(&sql, &keys)?
                    .into_iter()
                    .map(|row| row.filter(|r| r.is_live(now_ms)))
                    .collect();
                Response::from_json(&GetResponse { items })
            }
            StoreRequest::Commit {
                partition,
                writes,
                now_ms,
            } => self.commit(&sql, partition, writes, now_ms).await,
            StoreRequest::List { prefix, now_ms } => {
                let keys = list_keys(&sql, &prefix, now_ms)?;
                Response::from_json(&ListResponse { keys })
            }
            StoreRequest::Release { keys } => {
                self.release(&sql, &keys).await?;
                Response::from_json(&Empty {})
            }
            StoreRequest::Relist { partition, changes } => {
                let purge_before = object_now().saturating_sub(self.purge_grace_ms);
                run_atomically(&self.state.storage(), move |sql| {
                    listings::relist(sql, &partition, &changes, purge_before)
                })?;
                Response::from_json(&Empty {})
            }
            StoreRequest::ListIndex {
                after,
                limit,
                now_ms,
            } => {
                let hits = listings::page(&sql, after.as_ref(), limit, now_ms)?;
                Response::from_json(&ListIndexResponse { hits })
            }
        }
    }

    /// Purges expired rows (recording their blobs), deletes due blobs from KV,
    /// and schedules itself again for the next expiry or due blob.
    async fn alarm(&self) -> Result<Response> {
        let storage = self.state.storage();
        let sql = storage.sql();
        let now = object_now();
        let cutoff = now.saturating_sub(self.purge_grace_ms);
        let due = now.saturating_add(self.gc_grace_ms);
        let collect = self.blobs.is_some();
        run_atomically(&storage, move |sql| {
            if collect {
                let expired = sql.exec(
                    "SELECT json_extract(blob, '$.kvKey') FROM items WHERE blob IS NOT NULL AND expires_at IS NOT NULL AND expires_at <= ?",
                    vec![int(cutoff)],
                )?;
                let mut keys = Vec::new();
                for row in expired.raw() {
                    if let Some(SqlStorageValue::String(key)) = row?.into_iter().next() {
                        keys.push(key);
                    }
                }
                retire(sql, keys.iter().map(String::as_str), due)?;
            }
            sql.exec(
                "DELETE FROM items WHERE expires_at IS NOT NULL AND expires_at <= ?",
                vec![int(cutoff)],
            )?;
            Ok(())
        })?;
        if let Some(kv) = &self.blobs {
            collect_due(&sql, kv, now).await?;
        }
        let next_delivery = self.deliver_listings(&sql).await?;
        let next_purge =
            min_of(&sql, "SELECT MIN(expires_at) FROM items")?.map(|at| at + self.purge_grace_ms);
        let next_collect = match self.blobs {
            Some(_) => min_of(&sql, "SELECT MIN(due_at) FROM blob_gc")?,
            None => None,
        };
        if let Some(at) = next_purge
            .into_iter()
            .chain(next_collect)
            .chain(next_delivery)
            .min()
        {
            // The alarm running now may still read as scheduled: only a later one counts.
            let storage = self.state.storage();
            let scheduled = storage
                .get_alarm()
                .await?
                .and_then(|s| u64::try_from(s).ok());
            if !scheduled.is_some_and(|s| s > now && s <= at) {
                set_alarm_at(&storage, at).await?;
            }
        }
        Response::ok("purged")
    }
}

impl PartitionObject {
    async fn commit(
        &self,
        sql: &SqlStorage,
        partition: Option<String>,
        writes: Vec<WireWrite>,
        now_ms: u64,
    ) -> Result<Response> {
        let keys: Vec<String> = writes.iter().map(|w| w.key.clone()).collect();
        let current = read_rows(sql, &keys)?;
        let written = batch_blobs(&writes);
        let mutations = match plan_commit(writes, &current, now_ms) {
            Ok(mutations) => mutations,
            Err(index) => {
                // The batch's blobs landed in KV first; nothing will reference them.
                self.release(sql, &written).await?;
                return Ok(
                    Response::from_json(&ConditionFailedResponse { index })?.with_status(409)
                );
            }
        };
        let relisted = listing_changes(&current, &mutations);
        let tells_listings = !relisted.is_empty();
        let partition = match (partition, tells_listings) {
            (Some(partition), _) => partition,
            (None, false) => String::new(),
            (None, true) => return Response::error("a listed write needs its partition", 400),
        };
        let earliest = earliest_expiry(&mutations);
        let changes = match self.blobs {
            Some(_) => blob_changes(&current, &mutations),
            None => BlobChanges::default(),
        };
        let due = object_now().saturating_add(self.gc_grace_ms);
        let retired = !changes.retired.is_empty();
        let storage = self.state.storage();
        if let Err(err) = apply_atomically(&storage, mutations, changes, (partition, relisted), due)
        {
            // Not retryable (the same batch fails the same way): a 500, which the client
            // reports as a backend error, not as "unavailable". The client releases the
            // batch's blobs.
            return Response::error(format!("commit rolled back: {err}"), 500);
        }
        let purge = earliest.map(|at| at + self.purge_grace_ms);
        let collect = retired.then_some(due);
        // Told before the answer, so a listing read after the commit shows it. The commit
        // has landed whatever happens here: a failure only delays the listing.
        let redeliver = match tells_listings {
            true => self.deliver_listings(sql).await.unwrap_or_else(|err| {
                worker::console_warn!("handoff: listing delivery failed, will retry: {err}");
                Some(object_now().saturating_add(1_000))
            }),
            false => None,
        };
        if let Some(at) = purge.into_iter().chain(collect).chain(redeliver).min() {
            self.wake_no_later_than(at).await?;
        }
        Response::from_json(&Empty {})
    }

    /// Records `keys` (blobs of a batch that did not land) for deletion, except
    /// those a row references.
    async fn release(&self, sql: &SqlStorage, keys: &[String]) -> Result<()> {
        if self.blobs.is_none() || keys.is_empty() {
            return Ok(());
        }
        let due = object_now().saturating_add(self.gc_grace_ms);
        let mut recorded = false;
        for key in keys.iter().filter(|k| is_collectable(k)) {
            if !referenced(sql, key)? {
                retire(sql, [key.as_str()], due)?;
                recorded = true;
            }
        }
        if recorded {
            self.wake_no_later_than(due).await?;
        }
        Ok(())
    }

    /// Delivers the due listing changes of the outbox; returns when the rest are due.
    async fn deliver_listings(&self, sql: &SqlStorage) -> Result<Option<u64>> {
        match &self.objects {
            Some(objects) => listings::deliver(sql, objects).await,
            None => Ok(None),
        }
    }

    /// Makes sure the alarm fires by `at` (Unix ms).
    async fn wake_no_later_than(&self, at: u64) -> Result<()> {
        let storage = self.state.storage();
        let scheduled = storage.get_alarm().await?;
        if scheduled.is_some_and(|s| u64::try_from(s).is_ok_and(|s| s <= at)) {
            return Ok(());
        }
        set_alarm_at(&storage, at).await
    }
}

async fn set_alarm_at(storage: &Storage, at: u64) -> Result<()> {
    let offset = i64::try_from(at.saturating_sub(object_now())).unwrap_or(i64::MAX);
    storage.set_alarm(offset).await
}

#[derive(Serialize)]
struct Empty {}

fn object_now() -> u64 {
    Date::now().as_millis()
}

fn int(value: u64) -> SqlStorageValue {
    // Versions and Unix-ms expiries stay far below 2^53, JavaScript's exact range.
    SqlStorageValue::Integer(i64::try_from(value).unwrap_or(i64::MAX))
}

fn as_u64(value: SqlStorageValue) -> Option<u64> {
    match value {
        SqlStorageValue::Integer(i) => u64::try_from(i).ok(),
        SqlStorageValue::Float(f) if f >= 0.0 => Some(f as u64),
        _ => None,
    }
}

/// Stored rows for `keys`, in order, expired ones included.
fn read_rows(sql: &SqlStorage, keys: &[String]) -> Result<Vec<Option<Row>>> {
    let mut found = std::collections::HashMap::with_capacity(keys.len());
    for chunk in keys.chunks(KEYS_PER_SELECT) {
        let marks = vec!["?"; chunk.len()].join(",");
        let query = format!(
            "SELECT key, version, inline, blob, expires_at, ix_scope, ix_rank FROM items WHERE key IN ({marks})"
        );
        let bindings = chunk
            .iter()
            .map(|k| SqlStorageValue::from(k.as_str()))
            .collect::<Vec<_>>();
        for row in sql.exec(&query, bindings)?.raw() {
            let row = decode_row(row?)?;
            found.insert(row.key.clone(), row);
        }
    }
    Ok(keys.iter().map(|k| found.get(k).cloned()).collect())
}

fn decode_row(columns: Vec<SqlStorageValue>) -> Result<Row> {
    let mut columns = columns.into_iter();
    let mut next = || columns.next().unwrap_or(SqlStorageValue::Null);
    let (key, version, inline, blob, expires) = (next(), next(), next(), next(), next());
    let index = match (next(), as_u64(next())) {
        (SqlStorageValue::String(scope), Some(rank)) => Some(Listed { scope, rank }),
        _ => None,
    };
    let SqlStorageValue::String(key) = key else {
        return Err("items.key is not text".into());
    };
    let version = as_u64(version).ok_or("items.version is not an integer")?;
    let value = match (inline, blob) {
        (SqlStorageValue::Blob(bytes), _) => StoredValue::Inline(bytes),
        (SqlStorageValue::Null, SqlStorageValue::String(blob)) => {
            StoredValue::Blob(serde_json::from_str(&blob)?)
        }
        // SQLite hands an empty BLOB back as NULL-free zero-length data; treat a missing one as empty.
        (SqlStorageValue::Null, SqlStorageValue::Null) => StoredValue::Inline(Vec::new()),
        _ => return Err("items row holds neither bytes nor a blob reference".into()),
    };
    Ok(Row {
        key,
        version,
        value,
        expires_at_ms: as_u64(expires),
        index,
    })
}

// workers-rs 0.8.7 binds only the asynchronous key-value `transaction`, so
// the storage object is viewed through this type for `transactionSync`.
#[wasm_bindgen]
extern "C" {
    type TransactionSync;

    /// `storage.transactionSync(body)`: runs `body` as one SQLite transaction,
    /// rolled back (and the exception rethrown) if it throws.
    #[wasm_bindgen(method, catch, js_name = transactionSync)]
    fn transaction_sync(
        this: &TransactionSync,
        body: &Function,
    ) -> std::result::Result<JsValue, JsValue>;
}

/// Runs `body` as one transaction: all its statements apply or none does.
/// (Raw `BEGIN`/`COMMIT` are refused by Durable Object SQL; `transactionSync`
/// is the way in.)
fn run_atomically(
    storage: &Storage,
    body: impl FnOnce(&SqlStorage) -> Result<()> + 'static,
) -> Result<()> {
    let sql = storage.sql();
    // An `Err` returned from the closure is thrown into JavaScript, which rolls back.
    let body = Closure::once(move || body(&sql).map_err(JsValue::from));
    storage
        .as_raw()
        .unchecked_ref::<TransactionSync>()
        .transaction_sync(body.as_ref().unchecked_ref())
        .map(drop)
        .map_err(worker::Error::from)
}

/// Applies `mutations` and their blob bookkeeping all together or not at all:
/// blobs the batch stops referencing become due for deletion at `due`; blobs it
/// references are no longer due (a commit that landed after its blobs were released).
fn apply_atomically(
    storage: &Storage,
    mutations: Vec<Mutation>,
    changes: BlobChanges,
    (partition, relisted): (String, Vec<ListingChange>),
    due: u64,
) -> Result<()> {
    run_atomically(storage, move |sql| {
        apply(sql, mutations)?;
        listings::enqueue(sql, &partition, &relisted)?;
        for key in &changes.adopted {
            sql.exec(
                "DELETE FROM blob_gc WHERE kv_key = ?",
                vec![SqlStorageValue::from(key.as_str())],
            )?;
        }
        retire(sql, changes.retired.iter().map(String::as_str), due)
    })
}

/// The first column of the first row of `query`, as an integer.
fn min_of(sql: &SqlStorage, query: &str) -> Result<Option<u64>> {
    min_of_with(sql, query, Vec::new())
}

fn min_of_with(
    sql: &SqlStorage,
    query: &str,
    bindings: Vec<SqlStorageValue>,
) -> Result<Option<u64>> {
    let bindings = (!bindings.is_empty()).then_some(bindings);
    Ok(sql
        .exec(query, bindings)?
        .raw()
        .next()
        .transpose()?
        .and_then(|row| row.into_iter().next())
        .and_then(as_u64))
}

fn apply(sql: &SqlStorage, mutations: Vec<Mutation>) -> Result<()> {
    for mutation in mutations {
        match mutation {
            Mutation::Upsert(row) => {
                let (inline, blob) = match row.value {
                    StoredValue::Inline(bytes) => {
                        (SqlStorageValue::Blob(bytes), SqlStorageValue::Null)
                    }
                    StoredValue::Blob(reference) => (
                        SqlStorageValue::Null,
                        SqlStorageValue::String(serde_json::to_string(&reference)?),
                    ),
                };
                let (ix_scope, ix_rank) = match row.index {
                    Some(listed) => (SqlStorageValue::from(listed.scope), int(listed.rank)),
                    None => (SqlStorageValue::Null, SqlStorageValue::Null),
                };
                sql.exec(
                    "INSERT OR REPLACE INTO items (key, version, inline, blob, expires_at, ix_scope, ix_rank) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    vec![
                        SqlStorageValue::from(row.key),
                        int(row.version),
                        inline,
                        blob,
                        row.expires_at_ms.map_or(SqlStorageValue::Null, int),
                        ix_scope,
                        ix_rank,
                    ],
                )?;
            }
            Mutation::Delete(key) => {
                sql.exec(
                    "DELETE FROM items WHERE key = ?",
                    vec![SqlStorageValue::from(key)],
                )?;
            }
        }
    }
    Ok(())
}

fn list_keys(sql: &SqlStorage, prefix: &str, now_ms: u64) -> Result<Vec<String>> {
    // substr counts characters, so the bound is the prefix's length in characters.
    let cursor = sql.exec(
        "SELECT key FROM items WHERE substr(key, 1, ?) = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY key",
        vec![int(prefix.chars().count() as u64), SqlStorageValue::from(prefix), int(now_ms)],
    )?;
    let mut keys = Vec::new();
    for row in cursor.raw() {
        if let Some(SqlStorageValue::String(key)) = row?.into_iter().next() {
            keys.push(key);
        }
    }
    Ok(keys)
}

fn earliest_expiry(mutations: &[Mutation]) -> Option<u64> {
    mutations
        .iter()
        .filter_map(|m| match m {
            Mutation::Upsert(row) => row.expires_at_ms,
            Mutation::Delete(_) => None,
        })
        .min()
}
