//! The demo as every host serves it ([`app`]) and `GET /demo/orders/{orderId}`:
//! the ledger's view of an order, so exactly-once is observable.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use handoff_a2a::Receiver;
use handoff_a2a::http::TaskSnapshots;
use handoff_core::{Engine, EngineConfig, Runtime, Store};
use handoff_http::HttpConfig;

use crate::{DemoAgent, DemoConfig, FraudReview, Ledger};

/// The demo agent (with its fraud review when given) behind the engine's
/// routes, `GET /threads/{id}` listing the thread's A2A task snapshots from
/// `receiver`, plus the demo's own routes. Hosts that receive A2A pushes
/// merge `handoff_a2a::http::routes(receiver)` as well.
pub fn app(
    store: Arc<dyn Store>,
    runtime: Runtime,
    receiver: Receiver,
    demo: DemoConfig,
    fraud: Option<FraudReview>,
    http: HttpConfig,
    engine: EngineConfig,
) -> Router {
    let mut agent = DemoAgent::new(store.clone(), demo);
    if let Some(fraud) = fraud {
        agent = agent.with_fraud_review(fraud);
    }
    let ledger = agent.ledger().clone();
    let engine = Engine::with_config(Arc::new(agent), store, runtime.clone(), engine);
    handoff_http::router_with_thread_extras(engine, http, Arc::new(TaskSnapshots(receiver)))
        .merge(routes(ledger, runtime))
}

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
