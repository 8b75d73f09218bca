//! Rehydration and replay: `GET /threads/{threadId}` and `GET /threads/{threadId}/runs/{runId}/events`.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use handoff_core::CoreError;
use handoff_core::records::RunStatus;
use http::{Extensions, HeaderMap, StatusCode, Uri};

use super::{a2ui_history, principal};
use crate::AppState;
use crate::body::{Encoding, sse_response};
use crate::error::ApiError;

pub(crate) async fn get_thread(
    State(app): State<AppState>,
    extensions: Extensions,
    Path(thread_id): Path<String>,
) -> Result<Response, ApiError> {
    let principal = principal(&extensions)?;
    match app.engine.thread(&principal, &thread_id).await? {
        Some(view) => match &app.thread_extras {
            None => Ok(Json(view).into_response()),
            Some(hook) => {
                let mut body = serde_json::to_value(&view).map_err(|e| {
                    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", e.to_string())
                })?;
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
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "THREAD_NOT_FOUND",
            "no such thread",
        )),
    }
}

pub(crate) async fn replay_run(
    State(app): State<AppState>,
    extensions: Extensions,
    Path((thread_id, run_id)): Path<(String, String)>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ApiError> {
    let principal = principal(&extensions)?;
    let Some((record, events)) = app
        .engine
        .run_events(&principal, &thread_id, &run_id)
        .await?
    else {
        return Err(CoreError::RunNotFound.into());
    };
    if record.status == RunStatus::Running {
        let mut error = ApiError::new(
            StatusCode::CONFLICT,
            "RUN_IN_PROGRESS",
            "the run has not finished; its log is written when it does",
        );
        error.retry_after_ms = Some(1_000);
        return Err(error);
    }
    let encoding = Encoding::negotiate(&headers, uri.query(), Encoding::AgUi);
    let history = a2ui_history(&app, &principal, encoding, &thread_id).await?;
    let stream = Box::pin(futures::stream::iter(events));
    Ok(sse_response(
        stream,
        encoding,
        app.engine.agent_name(),
        &history,
        app.engine.runtime().clone(),
        app.config.keep_alive_ms,
    ))
}

pub(crate) async fn health(State(app): State<AppState>) -> Response {
    Json(serde_json::json!({"status": "ok", "agent": app.engine.agent_name(), "protocolVersion": agui_protocol::PROTOCOL_VERSION}))
        .into_response()
}
