//! The demo's own route, `GET /demo/orders/{orderId}` (the ledger's view of an
//! order, so exactly-once is observable), and how to try the demo with curl.
//!
//! Hosts serve it behind the authenticator (`protected_routes`), like every Handoff
//! route; it shows only the idempotency keys of the caller's tenant.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Json, Router};
use handoff_core::codes::ErrorCode;
use handoff_core::principal::idempotency_key_tenant;
use handoff_core::{Principal, Runtime};

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
    caller: Option<Extension<Principal>>,
) -> Response {
    let tenant = caller.map_or_else(|| Principal::anonymous().tenant, |c| c.0.tenant);
    match ledger.account(&order_id, runtime.now_ms()).await {
        Ok(mut account) => {
            account
                .idempotency_keys
                .retain(|key| idempotency_key_tenant(key).as_deref() == Some(tenant.as_str()));
            Json(account).into_response()
        }
        Err(err) => (
            StatusCode::from_u16(err.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            Json(serde_json::json!({"code": err.code(), "message": err.public_message()})),
        )
            .into_response(),
    }
}

/// How to try the demo against `url`: a refund, then its approval (for a host's banner).
pub fn curl_example(url: &str) -> String {
    let refund = r#"{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"Refund order A1024"}]}"#;
    let approve = r#"{"threadId":"t1","runId":"r2","messages":[],"resume":[{"interruptId":"<id>","status":"resolved","payload":{"approved":true}}]}"#;
    format!(
        "\n1. Ask for a refund (the run ends with an approval interrupt):\n   \
         curl -N {url}/agent -H 'content-type: application/json' -d '{refund}'\n\
         2. Approve it with the interrupt id from step 1 (also in `curl {url}/threads/t1`):\n   \
         curl -N {url}/agent -H 'content-type: application/json' -d '{approve}'\n   \
         then: curl {url}/demo/orders/A1024\n"
    )
}
