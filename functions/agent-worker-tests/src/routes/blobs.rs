//! Test routes for the KV blob lifecycle (see `handoff_store_cloudflare`, "Blob
//! lifecycle"): what KV holds for a partition against what its rows reference,
//! and the scenarios that must leave nothing behind. Values above 1 KiB go to KV here.
//!
//! - `GET /__test/blobs/{partition}`: `{stored, referenced, readError}`: the KV keys
//!   under the partition's blob prefix, the blob keys its rows reference (expired
//!   rows not yet purged included), and the error reading every live item, if any.
//! - `POST /__test/blobs/{partition}/lifecycle`: blobs replaced, deleted, expiring
//!   (1 s) and kept, two rows with the same bytes of which one is replaced; answers
//!   the keys left live.
//! - `POST /__test/blobs/{partition}/failed-commit?fault=condition|object`: a commit
//!   that fails after its blob landed in KV, on a condition (the object refuses it)
//!   or in the object (a 2.5 MB key that its SQLite refuses); answers `{error,
//!   landed, kvPuts, releases}`, `landed` listed right after the failure.
//! - `POST /__test/blobs/{partition}/release`: the object handed a release naming a
//!   blob a live row references, a stray blob of the partition and a blob outside
//!   the partition's prefix; answers whether each is still in KV once the stray is
//!   gone (or 15 s passed).

use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query};
use axum::http::StatusCode;
use axum::routing::{get, post};
use handoff_core::{Clock, Condition, Store, StoreError, Write};
use handoff_store_cloudflare::DurableStore;
use handoff_store_cloudflare::protocol::{GetResponse, ListResponse, StoreRequest, StoredValue};
use serde::Deserialize;
use serde_json::{Value, json};
use worker::kv::KvStore;
use worker::send::SendFuture;
use worker::wasm_bindgen::JsValue;
use worker::{Delay, Env, Method, Request, RequestInit};

use crate::WorkerClock;

/// Values above this many bytes go to KV in these routes.
const INLINE_LIMIT: usize = 1024;

type Answer = Result<Json<Value>, (StatusCode, String)>;

pub(crate) fn routes(env: &Env) -> worker::Result<Router> {
    let store = crate::store(env)?.with_inline_limit(INLINE_LIMIT);
    let (inventory_env, inventory_store) = (env.clone(), store.clone());
    let lifecycle_store = store.clone();
    let (failed_env, failed_store) = (env.clone(), store.clone());
    let (release_env, release_store) = (env.clone(), store);
    Ok(Router::new()
        .route(
            "/__test/blobs/{partition}",
            get(move |Path(partition): Path<String>| {
                SendFuture::new(async move {
                    answer(inventory(&inventory_env, &inventory_store, &partition).await)
                })
            }),
        )
        .route(
            "/__test/blobs/{partition}/lifecycle",
            post(move |Path(partition): Path<String>| async move {
                answer(lifecycle(&lifecycle_store, &partition).await)
            }),
        )
        .route(
            "/__test/blobs/{partition}/failed-commit",
            post(
                move |Path(partition): Path<String>, Query(fault): Query<Fault>| {
                    SendFuture::new(async move {
                        answer(
                            failed_commit(&failed_env, &failed_store, &partition, &fault.fault)
                                .await,
                        )
                    })
                },
            ),
        )
        .route(
            "/__test/blobs/{partition}/release",
            post(move |Path(partition): Path<String>| {
                SendFuture::new(async move {
                    answer(release(&release_env, &release_store, &partition).await)
                })
            }),
        ))
}

#[derive(Deserialize)]
struct Fault {
    fault: String,
}

fn answer(result: Result<Value, String>) -> Answer {
    result
        .map(Json)
        .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e))
}

fn shown(err: impl std::fmt::Display) -> String {
    err.to_string()
}

/// `len` bytes starting with `tag`, distinct per tag.
fn large(tag: &str, len: usize) -> Vec<u8> {
    let mut bytes = format!("{tag}:").into_bytes();
    bytes.resize(len, b'.');
    bytes
}

/// What KV holds under the partition's prefix, what its rows reference, and whether
/// every live item reads back.
pub(crate) async fn inventory(
    env: &Env,
    store: &DurableStore,
    partition: &str,
) -> Result<Value, String> {
    let kv = env.kv(crate::BLOBS).map_err(shown)?;
    let stored = kv_keys(&kv, &DurableStore::blob_prefix(partition)).await?;
    let all = list_rows(env, partition, 0).await?;
    let request = StoreRequest::Get {
        keys: all,
        now_ms: 0,
    };
    let rows: GetResponse = object_json(env, partition, &request).await?;
    let mut referenced: Vec<String> = rows
        .items
        .into_iter()
        .flatten()
        .filter_map(|row| match row.value {
            StoredValue::Blob(reference) => Some(reference.kv_key),
            StoredValue::Inline(_) => None,
        })
        .collect();
    referenced.sort();
    let now = WorkerClock.now_ms();
    let live = list_rows(env, partition, now).await?;
    let live: Vec<&str> = live.iter().map(String::as_str).collect();
    let read_error = store.get(partition, &live, now).await.err().map(shown);
    Ok(json!({ "stored": stored, "referenced": referenced, "readError": read_error }))
}

async fn lifecycle(store: &DurableStore, partition: &str) -> Result<Value, String> {
    let now = WorkerClock.now_ms();
    let put = |key: &str, condition, value| Write::put(key, condition, value, None);
    let seed = vec![
        put("replaced", Condition::Absent, large("v1", 4096)),
        put("deleted", Condition::Absent, large("deleted", 4096)),
        Write::put(
            "expiring",
            Condition::Absent,
            large("expiring", 4096),
            Some(now + 1_000),
        ),
        put("kept", Condition::Absent, large("kept", 4096)),
        put("twin-a", Condition::Absent, large("twin", 4096)),
        put("twin-b", Condition::Absent, large("twin", 4096)),
    ];
    store.commit(partition, seed, now).await.map_err(shown)?;
    let change = vec![
        put("replaced", Condition::Version(1), large("v2", 4096)),
        Write::delete("deleted", Condition::Version(1)),
        put("twin-a", Condition::Version(1), large("twin-2", 4096)),
    ];
    store.commit(partition, change, now).await.map_err(shown)?;
    Ok(json!({ "live": ["kept", "replaced", "twin-a", "twin-b"] }))
}

async fn failed_commit(
    env: &Env,
    store: &DurableStore,
    partition: &str,
    fault: &str,
) -> Result<Value, String> {
    let now = WorkerClock.now_ms();
    let orphan = large("orphan", 4096);
    let batch = match fault {
        // The row is absent: a version condition fails in the object.
        "condition" => vec![Write::put("orphan", Condition::Version(7), orphan, None)],
        // The object's SQLite refuses a 2.5 MB key (as it does a 2.5 MB value, see
        // `atomic_batch`): the object fails the call after the blob landed.
        "object" => vec![
            Write::put("orphan", Condition::Absent, orphan, None),
            Write::put(
                "k".repeat(super::OVERSIZED),
                Condition::Absent,
                b"v".to_vec(),
                None,
            ),
        ],
        other => return Err(format!("unknown fault {other}")),
    };
    let before = store.blob_stats();
    let error = match store.commit(partition, batch, now).await {
        Ok(()) => return Err("the faulty commit succeeded".to_owned()),
        Err(err) => err,
    };
    let after = store.blob_stats();
    let kv = env.kv(crate::BLOBS).map_err(shown)?;
    let landed = kv_keys(&kv, &DurableStore::blob_prefix(partition)).await?;
    Ok(json!({
        "error": error.to_string(),
        "conditionFailed": matches!(error, StoreError::ConditionFailed { .. }),
        "landed": landed,
        "kvPuts": after.kv_puts - before.kv_puts,
        "releases": after.releases - before.releases,
    }))
}

async fn release(env: &Env, store: &DurableStore, partition: &str) -> Result<Value, String> {
    let now = WorkerClock.now_ms();
    let live = vec![Write::put(
        "live",
        Condition::Absent,
        large("live", 4096),
        None,
    )];
    store.commit(partition, live, now).await.map_err(shown)?;
    let kv = env.kv(crate::BLOBS).map_err(shown)?;
    let prefix = DurableStore::blob_prefix(partition);
    let [referenced] = &kv_keys(&kv, &prefix).await?[..] else {
        return Err("expected one blob after one large put".to_owned());
    };
    let stray = format!("{prefix}stray");
    let foreign = format!("blob/foreign-{partition}/none");
    for key in [&stray, &foreign] {
        kv.put(key, "stray")
            .map_err(shown)?
            .execute()
            .await
            .map_err(shown)?;
    }
    let request = StoreRequest::Release {
        keys: vec![referenced.clone(), stray.clone(), foreign.clone()],
    };
    let _: Value = object_json(env, partition, &request).await?;
    let exists = |key: String| {
        let kv = kv.clone();
        async move {
            kv.get(&key)
                .bytes()
                .await
                .map(|b| b.is_some())
                .map_err(shown)
        }
    };
    let mut waited_ms = 0;
    while exists(stray.clone()).await? && waited_ms < 15_000 {
        Delay::from(Duration::from_millis(100)).await;
        waited_ms += 100;
    }
    let read_back = store
        .get_one(partition, "live", WorkerClock.now_ms())
        .await
        .map_err(shown)?
        .map(|item| item.value == large("live", 4096));
    Ok(json!({
        "strayDeleted": !exists(stray).await?,
        "referencedKept": exists(referenced.clone()).await?,
        "foreignKept": exists(foreign.clone()).await?,
        "readBack": read_back,
        "waitedMs": waited_ms,
    }))
}

/// Every KV key under `prefix`, sorted.
async fn kv_keys(kv: &KvStore, prefix: &str) -> Result<Vec<String>, String> {
    let mut keys = Vec::new();
    let mut cursor = None;
    loop {
        let mut list = kv.list().prefix(prefix.to_owned());
        if let Some(cursor) = cursor.take() {
            list = list.cursor(cursor);
        }
        let page = list.execute().await.map_err(shown)?;
        keys.extend(page.keys.into_iter().map(|k| k.name));
        match page.cursor {
            Some(next) if !page.list_complete => cursor = Some(next),
            _ => break,
        }
    }
    keys.sort();
    Ok(keys)
}

/// The partition's row keys live at `now_ms` (0: every row not yet purged).
async fn list_rows(env: &Env, partition: &str, now_ms: u64) -> Result<Vec<String>, String> {
    let request = StoreRequest::List {
        prefix: String::new(),
        now_ms,
    };
    let listed: ListResponse = object_json(env, partition, &request).await?;
    Ok(listed.keys)
}

/// One request straight to the partition's object, below the store.
async fn object_json<T: serde::de::DeserializeOwned>(
    env: &Env,
    partition: &str,
    request: &StoreRequest,
) -> Result<T, String> {
    let body = serde_json::to_string(request).map_err(shown)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_body(Some(JsValue::from_str(&body)));
    let request = Request::new_with_init("https://partition.handoff/", &init).map_err(shown)?;
    let stub = env
        .durable_object(crate::PARTITIONS)
        .and_then(|ns| ns.get_by_name(partition))
        .map_err(shown)?;
    let mut response = stub.fetch_with_request(request).await.map_err(shown)?;
    let text = response.text().await.map_err(shown)?;
    match response.status_code() {
        200 => serde_json::from_str(&text).map_err(shown),
        status => Err(format!("object answered {status}: {text}")),
    }
}
