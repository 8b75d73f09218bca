//! `GET /threads/{threadId}/runs/{runId}`: where a run stands; and
//! `POST /threads/{threadId}/runs/{runId}/stop`: end a running run on purpose.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use handoff_core::StopOutcome;
use http::{Extensions, StatusCode};
use serde_json::json;

use super::principal;
use crate::AppState;
use crate::error::ApiError;

/// 202 `{"status":"stopping"}` while the run is being stopped (it ends
/// `RUN_FINISHED{outcome: cancelled}` on whichever instance runs it); 200 with the final
/// status of a run that had already ended. Idempotent: a repeated stop answers the same.
pub(crate) async fn stop_run(
    State(app): State<Arc<AppState>>,
    extensions: Extensions,
    Path((thread_id, run_id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let principal = principal(&extensions)?;
    let outcome = app.engine.stop(&principal, &thread_id, &run_id).await?;
    let (status, body) = match outcome {
        StopOutcome::Finished(status) => (StatusCode::OK, json!(status)),
        _ => (StatusCode::ACCEPTED, json!("stopping")),
    };
    let body = json!({ "threadId": thread_id, "runId": run_id, "status": body });
    Ok((status, Json(body)).into_response())
}

/// `GET /threads/{threadId}/runs/{runId}`: the run's [`RunStatusView`](handoff_core::RunStatusView),
/// for any run, streamed or background; 404 `RUN_NOT_FOUND` for a run the thread never had.
pub(crate) async fn run_status(
    State(app): State<Arc<AppState>>,
    extensions: Extensions,
    Path((thread_id, run_id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let principal = principal(&extensions)?;
    let view = app
        .engine
        .run_status(&principal, &thread_id, &run_id)
        .await?;
    Ok(Json(view).into_response())
}
