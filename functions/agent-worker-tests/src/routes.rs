//! The test routes: the store conformance suite, run inside workerd against the real
//! Durable Objects and KV; the KV blob lifecycle ([`blobs`]) and what a turn costs KV
//! ([`turns`]).

mod blobs;
mod turns;

use axum::Json;
use axum::Router;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::routing::{get, post};
use handoff_core::{Clock, Condition, Store, Write};
use handoff_store_cloudflare::DurableStore;
use worker::Env;

use crate::WorkerClock;

/// `POST /__test/atomic-batch/{partition}`: a batch whose last statement
/// throws inside the object leaves nothing of itself behind (see [`atomic_batch`]);
/// 200 when so, 409 with what leaked.
/// `POST /__test/expiring/{partition}`: puts item `k` expiring 1 s from now.
/// `GET /__test/rows/{partition}`: the keys physically present (listed as of
/// time 0, so expired rows not yet purged by the object's alarm still show).
/// `GET /__test/conformance`: the check names (JSON).
/// `POST /__test/conformance/{check}`: 200 when the check passed, 404 for an
/// unknown check. A failing check panics, which workerd answers with a 500.
/// The inline limit is lowered so the suite's large values go through KV.
pub(crate) fn routes(env: &Env) -> worker::Result<Router> {
    let store = crate::store(env)?.with_inline_limit(1024);
    let rows_store = store.clone();
    let expiring_store = store.clone();
    // Inline up to 4 MiB: a 2.5 MB value then reaches the object's SQL, where it is too big.
    let oversize_store = crate::store(env)?.with_inline_limit(4 << 20);
    let blob_routes = blobs::routes(env)?;
    let turn_routes = turns::routes(env)?;
    Ok(Router::new()
        .merge(blob_routes)
        .merge(turn_routes)
        .route(
            "/__test/atomic-batch/{partition}",
            post(move |Path(partition): Path<String>| async move {
                match atomic_batch(&oversize_store, &partition).await {
                    Ok(()) => (StatusCode::OK, String::new()),
                    Err(leak) => (StatusCode::CONFLICT, leak),
                }
            }),
        )
        .route(
            "/__test/expiring/{partition}",
            post(move |Path(partition): Path<String>| async move {
                let expires = WorkerClock.now_ms() + 1_000;
                let put = Write::put("k", Condition::Always, b"v".to_vec(), Some(expires));
                match expiring_store
                    .commit(&partition, vec![put], WorkerClock.now_ms())
                    .await
                {
                    Ok(()) => (StatusCode::OK, String::new()),
                    Err(err) => (StatusCode::SERVICE_UNAVAILABLE, err.to_string()),
                }
            }),
        )
        .route(
            "/__test/rows/{partition}",
            get(move |Path(partition): Path<String>| async move {
                match rows_store.list(&partition, "", 0).await {
                    Ok(keys) => Ok(Json(keys)),
                    Err(err) => Err((StatusCode::SERVICE_UNAVAILABLE, err.to_string())),
                }
            }),
        )
        .route(
            "/__test/conformance",
            get(|| async { Json(handoff_store_conformance::CHECK_NAMES) }),
        )
        .route(
            "/__test/conformance/{check}",
            post(move |Path(check): Path<String>| async move {
                if handoff_store_conformance::run_named(&check, &store).await {
                    (StatusCode::OK, format!("{check}: passed"))
                } else {
                    (StatusCode::NOT_FOUND, format!("{check}: no such check"))
                }
            }),
        ))
}

/// Over the object's SQLite limit for one value (workerd refuses it with
/// `SQLITE_TOOBIG`; Cloudflare documents 2 MB per row).
const OVERSIZED: usize = 2_500_000;

/// The fault: seed `kept` and `doomed`, then commit a batch that replaces
/// `kept`, deletes `doomed`, creates `fresh` and last puts an [`OVERSIZED`]
/// value inline, whose `INSERT` throws after the others have run. The commit
/// must fail and every item must read as before it; the object must then still
/// accept a commit.
async fn atomic_batch(store: &DurableStore, partition: &str) -> Result<(), String> {
    let now = WorkerClock.now_ms();
    let old = || b"old".to_vec();
    let seed = vec![
        Write::put("kept", Condition::Absent, old(), None),
        Write::put("doomed", Condition::Absent, old(), None),
    ];
    store
        .commit(partition, seed, now)
        .await
        .map_err(|e| format!("seed: {e}"))?;
    let batch = vec![
        Write::put("kept", Condition::Version(1), b"new".to_vec(), None),
        Write::delete("doomed", Condition::Version(1)),
        Write::put("fresh", Condition::Absent, b"new".to_vec(), None),
        Write::put("huge", Condition::Absent, vec![0; OVERSIZED], None),
    ];
    if store.commit(partition, batch, now).await.is_ok() {
        return Err("the batch with an oversized value committed".to_owned());
    }
    let keys = ["kept", "doomed", "fresh", "huge"];
    let items = store
        .get(partition, &keys, now)
        .await
        .map_err(|e| format!("read back: {e}"))?;
    let seen: Vec<Option<(u64, Vec<u8>)>> = items
        .into_iter()
        .map(|item| item.map(|i| (i.version, i.value)))
        .collect();
    let before = vec![Some((1, old())), Some((1, old())), None, None];
    if seen != before {
        let shown: Vec<_> = keys
            .iter()
            .zip(&seen)
            .map(|(k, v)| format!("{k}: {:?}", v.as_ref().map(|(ver, val)| (ver, val.len()))))
            .collect();
        return Err(format!("the failed batch left {shown:?}"));
    }
    let again = vec![Write::put(
        "kept",
        Condition::Version(1),
        b"new".to_vec(),
        None,
    )];
    store
        .commit(partition, again, now)
        .await
        .map_err(|e| format!("a commit after the rollback: {e}"))
}
