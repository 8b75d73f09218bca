//! The approval audit trail: `GET /audit` (a page of the tenant's entries, or one
//! thread's, newest first; NDJSON with `Accept: application/x-ndjson`) and
//! `GET /audit/verify` (whether the hash chains are whole). Role `auditor` only.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use handoff_core::codes;
use handoff_core::records::audit::AuditEntry;
use handoff_core::time_fmt::{format_ms, parse_ms};
use handoff_core::{AuditPage, AuditQuery};
use http::{Extensions, HeaderMap, HeaderValue, Uri, header};
use serde::Deserialize;
use serde_json::{Value, json};

use super::principal;
use super::thread_list::ListParams;
use crate::AppState;
use crate::error::ApiError;

/// The media type of one entry per line.
const NDJSON: &str = "application/x-ndjson";

/// The next page's cursor when entries go out as NDJSON (the body holds entries only).
const NEXT_CURSOR_HEADER: &str = "x-handoff-next-cursor";

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AuditParams {
    thread_id: Option<String>,
    since: Option<String>,
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(codes::INVALID_INPUT, message)
}

/// `since`: an ISO-8601 time or Unix milliseconds.
fn since_ms(text: &str) -> Result<u64, ApiError> {
    parse_ms(text)
        .or_else(|| text.trim().parse().ok())
        .ok_or_else(|| invalid("since must be an ISO-8601 time or Unix milliseconds"))
}

/// An entry as served: `time` as ISO-8601.
fn wire(entry: AuditEntry) -> Value {
    let time = format_ms(entry.time_ms);
    let mut value = serde_json::to_value(entry).unwrap_or(Value::Null);
    if let Some(object) = value.as_object_mut() {
        object.remove("timeMs");
        object.insert("time".into(), Value::String(time));
    }
    value
}

/// `GET /audit?threadId=&since=&limit=&cursor=`.
pub(crate) async fn list_audit(
    State(app): State<Arc<AppState>>,
    extensions: Extensions,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ApiError> {
    let principal = principal(&extensions)?;
    let list = ListParams::from_uri(&uri)?;
    let params = Query::<AuditParams>::try_from_uri(&uri)
        .map(|q| q.0)
        .map_err(|e| invalid(format!("query: {e}")))?;
    let query = AuditQuery {
        thread_id: params.thread_id.filter(|t| !t.is_empty()),
        since_ms: params.since.as_deref().map(since_ms).transpose()?,
        limit: list.limit()?,
        cursor: list.cursor().map(str::to_owned),
    };
    let AuditPage {
        entries,
        next_cursor,
    } = app.engine.list_audit(&principal, &query).await?;
    let wants_lines = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains(NDJSON));
    if !wants_lines {
        let entries: Vec<Value> = entries.into_iter().map(wire).collect();
        return Ok(Json(json!({ "entries": entries, "nextCursor": next_cursor })).into_response());
    }
    let mut body = String::new();
    for entry in entries {
        body.push_str(&wire(entry).to_string());
        body.push('\n');
    }
    let mut response = ([(header::CONTENT_TYPE, NDJSON)], body).into_response();
    if let Some(value) = next_cursor.and_then(|c| HeaderValue::from_str(&c).ok()) {
        response.headers_mut().insert(NEXT_CURSOR_HEADER, value);
    }
    Ok(response)
}

/// `GET /audit/verify?threadId=` → `{"intact", "entries", "firstBroken"?}`.
pub(crate) async fn verify_audit(
    State(app): State<Arc<AppState>>,
    extensions: Extensions,
    uri: Uri,
) -> Result<Response, ApiError> {
    let principal = principal(&extensions)?;
    let params = Query::<AuditParams>::try_from_uri(&uri)
        .map(|q| q.0)
        .map_err(|e| invalid(format!("query: {e}")))?;
    let thread_id = params.thread_id.filter(|t| !t.is_empty());
    let verdict = app
        .engine
        .verify_audit(&principal, thread_id.as_deref())
        .await?;
    Ok(Json(verdict).into_response())
}
