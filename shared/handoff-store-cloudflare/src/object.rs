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

use serde::Serialize;
use wasm_bindgen::prelude::{Closure, JsValue, wasm_bindgen};
use worker::js_sys::Function;
use worker::wasm_bindgen::JsCast;
use worker::{
    Date, DurableObject, Env, Request, Response, Result, SqlStorage, SqlStorageValue, State,
    Storage, durable_object,
};

use crate::protocol::{
    ConditionFailedResponse, GetResponse, ListResponse, Mutation, Row, StoreRequest, StoredValue,
    plan_commit,
};

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS items (
    key TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    inline BLOB,
    blob TEXT,
    expires_at INTEGER
)";

/// Durable Object SQL accepts at most 100 bound parameters per statement.
const KEYS_PER_SELECT: usize = 90;

/// Expired rows already read as absent; physical deletion waits this long past
/// expiry so a Worker whose clock runs slightly behind the object's never sees
/// a row vanish before it expired by the Worker's own clock. The variable
/// `HANDOFF_PURGE_GRACE_MS` overrides it (tests use 0).
const PURGE_GRACE_MS: u64 = 60_000;

/// One partition's items. Bind it as a SQLite-backed class (`new_sqlite_classes`).
#[durable_object]
pub struct PartitionObject {
    state: State,
    purge_grace_ms: u64,
}

impl DurableObject for PartitionObject {
    fn new(state: State, env: Env) -> Self {
        if let Err(err) = state.storage().sql().exec(SCHEMA, None) {
            // Every later statement fails the same way and is answered with a 500.
            worker::console_error!("handoff partition schema: {err}");
        }
        let purge_grace_ms = env
            .var("HANDOFF_PURGE_GRACE_MS")
            .ok()
            .and_then(|v| v.to_string().parse().ok())
            .unwrap_or(PURGE_GRACE_MS);
        Self {
            state,
            purge_grace_ms,
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let request: StoreRequest = match req.json().await {
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
            StoreRequest::Commit { writes, now_ms } => {
                let keys: Vec<String> = writes.iter().map(|w| w.key.clone()).collect();
                let current = read_rows(&sql, &keys)?;
                match plan_commit(writes, &current, now_ms) {
                    Err(index) => {
                        Ok(Response::from_json(&ConditionFailedResponse { index })?
                            .with_status(409))
                    }
                    Ok(mutations) => {
                        let earliest = earliest_expiry(&mutations);
                        if let Err(err) = apply_atomically(&self.state.storage(), sql, mutations) {
                            // Not retryable (the same batch fails the same way): a 500, which
                            // the client reports as a backend error, not as "unavailable".
                            return Response::error(format!("commit rolled back: {err}"), 500);
                        }
                        if let Some(at) = earliest {
                            self.purge_no_later_than(at + self.purge_grace_ms).await?;
                        }
                        Response::from_json(&Empty {})
                    }
                }
            }
            StoreRequest::List { prefix, now_ms } => {
                let keys = list_keys(&sql, &prefix, now_ms)?;
                Response::from_json(&ListResponse { keys })
            }
        }
    }

    async fn alarm(&self) -> Result<Response> {
        let sql = self.state.storage().sql();
        let cutoff = now_ms().saturating_sub(self.purge_grace_ms);
        sql.exec(
            "DELETE FROM items WHERE expires_at IS NOT NULL AND expires_at <= ?",
            vec![int(cutoff)],
        )?;
        let next: Option<u64> = sql
            .exec("SELECT MIN(expires_at) FROM items", None)?
            .raw()
            .next()
            .transpose()?
            .and_then(|row| row.into_iter().next())
            .and_then(as_u64);
        if let Some(at) = next {
            self.purge_no_later_than(at + self.purge_grace_ms).await?;
        }
        Response::ok("purged")
    }
}

impl PartitionObject {
    /// Makes sure the purge alarm fires by `at` (Unix ms).
    async fn purge_no_later_than(&self, at: u64) -> Result<()> {
        let storage = self.state.storage();
        let scheduled = storage.get_alarm().await?;
        if scheduled.is_some_and(|s| u64::try_from(s).is_ok_and(|s| s <= at)) {
            return Ok(());
        }
        let offset = i64::try_from(at.saturating_sub(now_ms())).unwrap_or(i64::MAX);
        storage.set_alarm(offset).await
    }
}

#[derive(Serialize)]
struct Empty {}

fn now_ms() -> u64 {
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
            "SELECT key, version, inline, blob, expires_at FROM items WHERE key IN ({marks})"
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

/// Applies `mutations` all together or not at all. (Raw `BEGIN`/`COMMIT` are
/// refused by Durable Object SQL; `transactionSync` is the way in.)
fn apply_atomically(storage: &Storage, sql: SqlStorage, mutations: Vec<Mutation>) -> Result<()> {
    // An `Err` returned from the closure is thrown into JavaScript, which rolls back.
    let body = Closure::once(move || apply(&sql, mutations).map_err(JsValue::from));
    storage
        .as_raw()
        .unchecked_ref::<TransactionSync>()
        .transaction_sync(body.as_ref().unchecked_ref())
        .map(drop)
        .map_err(worker::Error::from)
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
                sql.exec(
                    "INSERT OR REPLACE INTO items (key, version, inline, blob, expires_at) VALUES (?, ?, ?, ?, ?)",
                    vec![
                        SqlStorageValue::from(row.key),
                        int(row.version),
                        inline,
                        blob,
                        row.expires_at_ms.map_or(SqlStorageValue::Null, int),
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
