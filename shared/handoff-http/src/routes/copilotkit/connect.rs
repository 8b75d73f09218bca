//! `connect` (rehydrate a thread, join its live run) and `stop` on the CopilotKit routes.

use agui_protocol::event::{MessagesSnapshot, RunFinished, RunStarted, StateSnapshot};
use agui_protocol::{Event, RunFinishedOutcome};
use axum::Json;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use futures::stream::{self, BoxStream};
use handoff_core::records::RunStatus;
use handoff_core::{CoreError, StopOutcome, ThreadView};
use http::request::Parts;
use serde_json::{Map, Value, json};

use super::invalid;
use crate::AppState;
use crate::body::{Encoding, sse_response_numbered};
use crate::error::ApiError;
use crate::routes::principal;
use crate::routes::threads::last_event_id;

/// `connect`: the thread as one rehydration run (`RUN_STARTED`, `STATE_SNAPSHOT`,
/// `MESSAGES_SNAPSHOT`, `RUN_FINISHED` whose outcome re-presents the pending interrupts),
/// then, while a run is in progress, that run followed live to its end. With
/// `Last-Event-ID: n` while the run is live, only the run's frames after `n` (with the
/// join prelude). A thread that never ran answers an empty stream. `body` is the client's `RunAgentInput`; only its
/// `threadId` (and `runId`, the rehydration run's id when no run is on record) count.
pub(super) async fn connect(
    app: &AppState,
    parts: &Parts,
    body: &[u8],
) -> Result<Response, ApiError> {
    let input: Value = serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
    let text = |key: &str| {
        input
            .get(key)
            .and_then(Value::as_str)
            .filter(|v| !v.trim().is_empty() && v.len() <= 256)
            .map(str::to_owned)
    };
    let thread_id =
        text("threadId").ok_or_else(|| invalid("threadId must be 1 to 256 characters"))?;
    let principal = principal(&parts.extensions)?;
    let last_id = last_event_id(&parts.headers)?;
    let engine = &app.engine;
    // Frames of the live run carry that run's ids, so a client that drops mid-run
    // reconnects with `Last-Event-ID` and gets the rest; the rehydration frames, which a
    // reconnecting client already has, carry id 0.
    let frames: BoxStream<'static, (u64, Event)> = match engine
        .thread(&principal, &thread_id)
        .await?
    {
        None => stream::empty().boxed(),
        Some(view) => {
            let live = view
                .last_run
                .as_ref()
                .filter(|run| run.status == RunStatus::Running)
                .map(|run| run.run_id.as_str().to_owned());
            let joined = match &live {
                Some(run) => {
                    engine
                        .follow_run(&principal, &thread_id, run, last_id)
                        .await?
                }
                None => None,
            };
            match joined {
                Some(joined) if last_id > 0 => joined,
                joined => {
                    // The rehydration run speaks for the last finished run (so a resume
                    // can name it); beside a live run it takes the client's id.
                    let run_id = match (&live, &view.last_run) {
                        (None, Some(last)) => last.run_id.as_str().to_owned(),
                        _ => text("runId").unwrap_or_else(|| engine.runtime().ids.next_id("run")),
                    };
                    let now = engine.runtime().now_ms();
                    let prefix =
                        stream::iter(rehydration(view, &run_id, now).into_iter().map(|e| (0, e)));
                    match joined {
                        Some(joined) => prefix.chain(joined).boxed(),
                        None => prefix.boxed(),
                    }
                }
            }
        }
    };
    Ok(sse_response_numbered(
        frames,
        Encoding::AgUi,
        engine.agent_name(),
        &[],
        engine.runtime().clone(),
        app.config.keep_alive_ms,
    ))
}

/// The stored thread as one run's events.
pub(super) fn rehydration(view: ThreadView, run_id: &str, now: u64) -> Vec<Event> {
    let thread_id = view.thread_id.clone();
    let mut started = RunStarted::new(thread_id.clone(), run_id.to_owned());
    started.protocol_version = Some(agui_protocol::PROTOCOL_VERSION.to_owned());
    let mut finished = RunFinished::new(thread_id, run_id.to_owned());
    finished.outcome = Some(if view.pending_interrupts.is_empty() {
        RunFinishedOutcome::success()
    } else {
        RunFinishedOutcome::Interrupt {
            interrupts: view.pending_interrupts,
        }
    });
    [
        Event::from(started),
        Event::from(StateSnapshot::new(view.state)),
        Event::from(MessagesSnapshot::new(view.messages)),
        Event::from(finished),
    ]
    .into_iter()
    .map(|event| event.with_timestamp(now))
    .collect()
}

/// The `runId` a stop body names, if any: the body is absent, `{}` or `{runId}`.
pub(super) fn stop_scope(body: &Value) -> Result<Option<String>, ApiError> {
    let scope = match body {
        Value::Null => return Ok(None),
        Value::Object(scope) => scope,
        _ => return Err(invalid("a stop body is an object {runId?}")),
    };
    match scope.get("runId") {
        None => Ok(None),
        Some(Value::String(id)) if !id.trim().is_empty() => Ok(Some(id.clone())),
        Some(_) => Err(invalid("runId must be a non-empty string")),
    }
}

/// `stop`: asks run `run_id` (default: the thread's running run) to stop. 200
/// `{stopped: true, threadId, runId}` once asked (the run ends `RUN_FINISHED{outcome:
/// cancelled}`), 200 `{stopped: false, threadId, message}` when nothing is running.
pub(super) async fn stop(
    app: &AppState,
    parts: &Parts,
    thread_id: &str,
    run_id: Option<String>,
) -> Result<Response, ApiError> {
    let principal = principal(&parts.extensions)?;
    let run_id = match run_id {
        Some(run_id) => Some(run_id),
        None => app
            .engine
            .thread(&principal, thread_id)
            .await?
            .and_then(|view| view.last_run)
            .filter(|run| run.status == RunStatus::Running)
            .map(|run| run.run_id.as_str().to_owned()),
    };
    let mut body = Map::new();
    body.insert("threadId".into(), json!(thread_id));
    let stopped = match &run_id {
        None => false,
        Some(run_id) => {
            body.insert("runId".into(), json!(run_id));
            match app.engine.stop(&principal, thread_id, run_id).await {
                Ok(StopOutcome::Finished(_)) | Err(CoreError::RunNotFound) => false,
                Ok(_) => true,
                Err(e) => return Err(e.into()),
            }
        }
    };
    body.insert("stopped".into(), json!(stopped));
    if !stopped {
        let message = match &run_id {
            None => format!("No active run for thread '{thread_id}'."),
            Some(run_id) => {
                format!("Run '{run_id}' is not the active run for thread '{thread_id}'.")
            }
        };
        body.insert("message".into(), json!(message));
    }
    Ok(Json(Value::Object(body)).into_response())
}
