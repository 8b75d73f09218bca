//! `GET /demo/orders/{orderId}`: the ledger's view of an order, so exactly-once is observable.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use handoff_core::Runtime;

use crate::Ledger;

/// Routes of the demo, to merge into the host's router.
pub fn routes(ledger: Ledger, runtime: Runtime) -> Router {
    Router::new()
        .route("/demo/orders/{order_id}", get(order))
        .with_state((ledger, runtime))
}

async fn order(
    State((ledger, runtime)): State<(Ledger, Runtime)>,
    Path(order_id): Path<String>,
) -> Response {
    match ledger.account(&order_id, runtime.now_ms()).await {
        Ok(account) => Json(account).into_response(),
        Err(err) => (
            StatusCode::from_u16(err.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            Json(serde_json::json!({"code": err.code(), "message": err.public_message()})),
        )
            .into_response(),
    }
}
