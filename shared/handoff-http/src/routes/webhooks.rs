//! `GET /webhooks/deliveries?limit=`: the tenant's recent webhook events, newest first,
//! with their delivery status and attempts. Role `admin` only.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use handoff_core::CoreError;
use handoff_core::outbox::{ListedItem, listed};
use http::{Extensions, Uri};
use serde_json::{Value, json};

use super::principal;
use super::thread_list::ListParams;
use crate::AppState;
use crate::error::ApiError;
use crate::webhooks::{ADMIN_ROLE, deliveries_scope};

/// One event as listed.
fn wire(listed: ListedItem) -> Value {
    let item = listed.item;
    let status = item.outcome.as_deref().unwrap_or("pending");
    let mut entry = json!({
        "id": item.id,
        "type": item.body["type"],
        "threadId": item.body["data"]["threadId"],
        "runId": item.body["data"]["runId"],
        "status": status,
        "attempts": item.attempts,
        "createdAt": item.created_ms,
    });
    if item.outcome.is_none() {
        entry["nextAttemptAt"] = json!(item.due_ms);
    }
    if !item.done.is_empty() {
        entry["servedEndpoints"] = json!(item.done);
    }
    if let Some(error) = item.last_error {
        entry["lastError"] = json!(error);
    }
    entry
}

/// `GET /webhooks/deliveries?limit=` → `{"deliveries": [...]}`.
pub(crate) async fn list_deliveries(
    State(app): State<Arc<AppState>>,
    extensions: Extensions,
    uri: Uri,
) -> Result<Json<Value>, ApiError> {
    let principal = principal(&extensions)?;
    if !principal.has_role(ADMIN_ROLE) {
        return Err(
            CoreError::Forbidden(format!("the webhook deliveries need role {ADMIN_ROLE}")).into(),
        );
    }
    let limit = ListParams::from_uri(&uri)?.limit()?;
    let now = app.engine.runtime().now_ms();
    let scope = deliveries_scope(&principal.tenant);
    let (items, _) = listed(app.engine.store().as_ref(), &scope, None, limit, now)
        .await
        .map_err(CoreError::from)?;
    let deliveries: Vec<Value> = items.into_iter().map(wire).collect();
    Ok(Json(json!({ "deliveries": deliveries })))
}
