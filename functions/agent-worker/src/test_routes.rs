//! Test-only routes (enabled by `HANDOFF_TEST_ROUTES=true`): the store
//! conformance suite, run inside workerd against the real Durable Objects and KV.

use axum::Json;
use axum::Router;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::routing::{get, post};
use worker::Env;

/// `GET /__test/conformance`: the check names (JSON).
/// `POST /__test/conformance/{check}`: 200 when the check passed, 404 for an
/// unknown check. A failing check panics, which workerd answers with a 500.
/// The inline limit is lowered so the suite's large values go through KV.
pub(crate) fn routes(env: &Env) -> worker::Result<Router> {
    let store = crate::store(env)?.with_inline_limit(1024);
    Ok(Router::new()
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
