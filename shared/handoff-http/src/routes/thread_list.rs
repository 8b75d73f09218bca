//! Threads as a product: `GET /threads`, `PATCH` and `DELETE /threads/{threadId}`,
//! `GET /threads/{threadId}/messages`, the approvals inbox (`GET /approvals`) and what
//! waits for the caller (`GET /approvals/waiting`). The CopilotKit routes answer the same
//! calls in CopilotKit's shapes (`copilotkit::threads`).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, Request, State};
use axum::response::{IntoResponse, Response};
use handoff_core::codes;
use handoff_core::{Principal, ThreadChanges, ThreadPage, ThreadQuery};
use http::{Extensions, Uri};
use serde::Deserialize;
use serde_json::{Value, json};

use super::json_body::read_body;
use super::principal;
use crate::AppState;
use crate::error::ApiError;

/// Page size when none is asked for.
pub(crate) const DEFAULT_LIMIT: usize = 20;

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(codes::INVALID_INPUT, message)
}

/// The query of a list (`limit`, `cursor`, `includeArchived`, `agentId`), as sent.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListParams {
    limit: Option<String>,
    cursor: Option<String>,
    include_archived: Option<String>,
    agent_id: Option<String>,
    before: Option<String>,
}

impl ListParams {
    /// The query string of `uri` (400 when it is not one).
    pub(crate) fn from_uri(uri: &Uri) -> Result<Self, ApiError> {
        Query::<ListParams>::try_from_uri(uri)
            .map(|q| q.0)
            .map_err(|e| invalid(format!("query: {e}")))
    }

    /// The cursor, unless empty.
    pub(crate) fn cursor(&self) -> Option<&str> {
        self.cursor.as_deref().filter(|c| !c.is_empty())
    }

    pub(crate) fn limit(&self) -> Result<usize, ApiError> {
        let Some(text) = self.limit.as_deref() else {
            return Ok(DEFAULT_LIMIT);
        };
        text.trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=handoff_core::MAX_LIMIT).contains(n))
            .ok_or_else(|| {
                invalid(format!(
                    "limit must be a number from 1 to {}",
                    handoff_core::MAX_LIMIT
                ))
            })
    }

    pub(crate) fn thread_query(&self) -> Result<ThreadQuery, ApiError> {
        let include_archived = match self.include_archived.as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(_) => return Err(invalid("includeArchived must be true or false")),
        };
        Ok(ThreadQuery {
            limit: self.limit()?,
            cursor: self.cursor.clone().filter(|c| !c.is_empty()),
            include_archived,
            agent_id: self.agent_id.clone().filter(|a| !a.is_empty()),
        })
    }

    pub(crate) fn before(&self) -> Option<&str> {
        self.before.as_deref().filter(|b| !b.is_empty())
    }
}

/// The caller's threads.
pub(crate) async fn list_page(
    app: &AppState,
    principal: &Principal,
    params: &ListParams,
) -> Result<ThreadPage, ApiError> {
    Ok(app
        .engine
        .list_threads(principal, &params.thread_query()?)
        .await?)
}

/// `GET /threads?limit=&cursor=&includeArchived=&agentId=`.
pub(crate) async fn list_threads(
    State(app): State<Arc<AppState>>,
    extensions: Extensions,
    uri: Uri,
) -> Result<Response, ApiError> {
    let principal = principal(&extensions)?;
    let page = list_page(&app, &principal, &ListParams::from_uri(&uri)?).await?;
    Ok(Json(page).into_response())
}

/// A `PATCH` body: `{"name"?, "archived"?}` (CopilotKit adds `agentId`, ignored).
pub(crate) fn changes(body: &[u8]) -> Result<ThreadChanges, ApiError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
    let Value::Object(fields) = &value else {
        return Err(invalid("the body must be a JSON object"));
    };
    let name = match fields.get("name") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => Some(name.clone()),
        Some(_) => return Err(invalid("name must be a string")),
    };
    let archived = match fields.get("archived") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(archived)) => Some(*archived),
        Some(_) => return Err(invalid("archived must be true or false")),
    };
    Ok(ThreadChanges { name, archived })
}

/// `PATCH /threads/{threadId}` → the updated thread.
pub(crate) async fn update_thread(
    State(app): State<Arc<AppState>>,
    Path(thread_id): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let principal = principal(&parts.extensions)?;
    let body = read_body(&app, &parts.headers, body).await?;
    let changes = changes(&body)?;
    let thread = app
        .engine
        .update_thread(&principal, &thread_id, &changes)
        .await?;
    Ok(Json(thread).into_response())
}

/// `DELETE /threads/{threadId}` → `{"threadId", "deleted": true}`.
pub(crate) async fn delete_thread(
    State(app): State<Arc<AppState>>,
    extensions: Extensions,
    Path(thread_id): Path<String>,
) -> Result<Response, ApiError> {
    let principal = principal(&extensions)?;
    app.engine.delete_thread(&principal, &thread_id).await?;
    Ok(Json(json!({"threadId": thread_id, "deleted": true})).into_response())
}

/// `GET /threads/{threadId}/messages?limit=&before=` → `{"messages", "nextBefore"}`.
pub(crate) async fn thread_messages(
    State(app): State<Arc<AppState>>,
    extensions: Extensions,
    Path(thread_id): Path<String>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let principal = principal(&extensions)?;
    let params = ListParams::from_uri(&uri)?;
    let page = app
        .engine
        .thread_messages(&principal, &thread_id, params.limit()?, params.before())
        .await?;
    Ok(Json(page).into_response())
}

/// `GET /approvals?limit=&cursor=` → `{"approvals", "nextCursor"}`: the pending
/// interrupts the caller may resolve across its tenant's threads.
pub(crate) async fn list_approvals(
    State(app): State<Arc<AppState>>,
    extensions: Extensions,
    uri: Uri,
) -> Result<Response, ApiError> {
    let principal = principal(&extensions)?;
    let params = ListParams::from_uri(&uri)?;
    let cursor = params.cursor.as_deref().filter(|c| !c.is_empty());
    let page = app
        .engine
        .list_approvals(&principal, params.limit()?, cursor)
        .await?;
    Ok(Json(page).into_response())
}

/// `GET /approvals/waiting` → `{"count", "approvals", "more"?}`: the interrupts the caller
/// may resolve now (the console's bell polls it).
pub(crate) async fn waiting_approvals(
    State(app): State<Arc<AppState>>,
    extensions: Extensions,
) -> Result<Response, ApiError> {
    let principal = principal(&extensions)?;
    let waiting = app.engine.waiting_approvals(&principal).await?;
    Ok(Json(waiting).into_response())
}

/// `POST /threads/{threadId}/fork` `{"atMessageId"?, "threadId"?}` → 201 `{"threadId"}`:
/// a new thread of the caller's with the history up to that message.
pub(crate) async fn fork_thread(
    State(app): State<Arc<AppState>>,
    Path(thread_id): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let principal = principal(&parts.extensions)?;
    let body = read_body(&app, &parts.headers, body).await?;
    let fork: handoff_core::ForkRequest = if body.iter().all(u8::is_ascii_whitespace) {
        handoff_core::ForkRequest::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| invalid(e.to_string()))?
    };
    let forked = app
        .engine
        .fork_thread(&principal, &thread_id, &fork)
        .await?;
    Ok((
        http::StatusCode::CREATED,
        Json(json!({ "threadId": forked })),
    )
        .into_response())
}
