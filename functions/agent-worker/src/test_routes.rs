//! Test-only routes (enabled by `HANDOFF_TEST_ROUTES=true`): the store
//! conformance suite, run inside workerd against the real Durable Objects and KV.

use axum::Json;
use axum::Router;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::routing::{get, post};
use handoff_core::{Clock, Condition, Store, Write};
use worker::Env;

use crate::WorkerClock;

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
    Ok(Router::new()
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
