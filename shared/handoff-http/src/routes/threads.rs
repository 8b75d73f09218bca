//! Rehydration and replay: `GET /threads/{threadId}` and `GET /threads/{threadId}/runs/{runId}/events`.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use handoff_core::CoreError;
use handoff_core::codes;
use http::{Extensions, HeaderMap, Uri};

use super::{a2ui_history, principal};
use crate::AppState;
use crate::body::{Encoding, sse_response_numbered};
use crate::error::ApiError;

pub(crate) async fn get_thread(
    State(app): State<Arc<AppState>>,
    extensions: Extensions,
    Path(thread_id): Path<String>,
) -> Result<Response, ApiError> {
    let principal = principal(&extensions)?;
    match app.engine.thread(&principal, &thread_id).await? {
        Some(view) => match &app.thread_extras {
            None => Ok(Json(view).into_response()),
            Some(hook) => {
                let mut body = serde_json::to_value(&view)
                    .map_err(|e| ApiError::new(codes::INTERNAL, e.to_string()))?;
                let partition = principal.partition(&thread_id)?;
                let extra = hook.0.fields(&partition).await?;
                if let Some(object) = body.as_object_mut() {
                    for (key, value) in extra {
                        object.entry(key).or_insert(value);
                    }
                }
                Ok(Json(body).into_response())
            }
        },
        None => Err(ApiError::new(codes::THREAD_NOT_FOUND, "no such thread")),
    }
}

/// `GET /threads/{threadId}/runs/{runId}/events`: the run's frames, rejoined after the
/// `Last-Event-ID` the client sends (0 without one). A finished run is answered from its
/// record; a running one is followed on whichever instance runs it, to its end.
pub(crate) async fn replay_run(
    State(app): State<Arc<AppState>>,
    extensions: Extensions,
    Path((thread_id, run_id)): Path<(String, String)>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ApiError> {
    let principal = principal(&extensions)?;
    let last_id = last_event_id(&headers)?;
    let Some(frames) = app
        .engine
        .follow_run(&principal, &thread_id, &run_id, last_id)
        .await?
    else {
        return Err(CoreError::RunNotFound.into());
    };
    let encoding = Encoding::negotiate(&headers, uri.query(), Encoding::AgUi);
    let history = a2ui_history(&app, &principal, encoding, &thread_id).await?;
    Ok(sse_response_numbered(
        frames,
        encoding,
        app.engine.agent_name(),
        &history,
        app.engine.runtime().clone(),
        app.config.keep_alive_ms,
    ))
}

/// The `Last-Event-ID` header: the id of the last frame the client has (0 without one).
pub(crate) fn last_event_id(headers: &HeaderMap) -> Result<u64, ApiError> {
    let Some(value) = headers.get("last-event-id") else {
        return Ok(0);
    };
    let value = value.to_str().unwrap_or_default().trim();
    if value.is_empty() {
        return Ok(0);
    }
    value.parse().map_err(|_| {
        ApiError::new(
            codes::INVALID_LAST_EVENT_ID,
            "Last-Event-ID must be the id of a frame of this run (a non-negative integer)",
        )
    })
}

pub(crate) async fn health(State(app): State<Arc<AppState>>) -> Response {
    Json(serde_json::json!({"status": "ok", "agent": app.engine.agent_name(), "protocolVersion": agui_protocol::PROTOCOL_VERSION}))
        .into_response()
}
