//! The agent served over A2A 1.0: its card and the JSON-RPC binding at `POST /a2a`.
//!
//! Every answer goes through the engine as `POST /agent` does: the caller is the principal
//! `HANDOFF_AUTH` found, an answer to an interrupt is a resume through the engine's claim
//! (exactly once, under the interrupt's approval policy), and a task is visible to whoever
//! may read its thread. See [`fold`] for the mapping of events to task states.

mod card;
mod error;
mod fold;
mod input;
mod manage;
pub(crate) mod push;
mod push_config;
mod send;
mod stream;
mod task_store;
mod view;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use a2a_types::jsonrpc::{JsonRpcId, methods};
use a2a_types::{SendMessageRequest, StreamResponse, Task, TaskState, TaskStatus};
use axum::Json;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use futures::stream::{BoxStream, StreamExt};
use handoff_core::time_fmt::format_ms;
use http::{HeaderMap, header};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

pub(crate) use card::{agent_card, push_jwks};
use error::A2aError;
use send::Sent;
use task_store::TaskRecord;

use super::agent::run_options;
use super::json_body::read_body;
use crate::AppState;

/// The header naming the A2A version a caller speaks.
const VERSION_HEADER: &str = "a2a-version";

/// `POST /a2a`: one JSON-RPC request. Errors are JSON-RPC error objects with HTTP 200,
/// but an unauthenticated caller is refused (401) before this runs, like every route.
pub(crate) async fn jsonrpc(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = match read_body(&app, &parts.headers, body).await {
        Ok(body) => body,
        Err(err) => return err.into_response(),
    };
    let call: Value = match serde_json::from_slice(&body) {
        Ok(call) => call,
        Err(_) if !declares_json(&parts.headers) => {
            let err = A2aError::ContentType("JSON-RPC requests are application/json".into());
            return reply(JsonRpcId::Null, Err(err));
        }
        Err(e) => return reply(JsonRpcId::Null, Err(A2aError::Parse(e.to_string()))),
    };
    let id = call
        .get("id")
        .and_then(|id| serde_json::from_value(id.clone()).ok())
        .unwrap_or(JsonRpcId::Null);
    let outcome = async {
        let method = envelope(&call)?;
        check_version(&parts.headers)?;
        let params = call.get("params").cloned().unwrap_or(Value::Null);
        dispatch(app, &parts, method, params).await
    }
    .await;
    match outcome {
        Ok(Answer::Json(result)) => reply(id, Ok(result)),
        Ok(Answer::Stream(responses)) => sse(id, responses),
        Err(err) => reply(id, Err(err)),
    }
}

enum Answer {
    Json(Value),
    Stream(BoxStream<'static, StreamResponse>),
}

/// Whether the request says its body is JSON (or says nothing).
fn declares_json(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).is_none() || super::json_body::is_json(headers)
}

/// The method of a well-formed JSON-RPC 2.0 request.
fn envelope(call: &Value) -> Result<&str, A2aError> {
    let invalid = |m: &str| Err(A2aError::InvalidRequest(m.to_owned()));
    if !call.is_object() {
        return invalid("a JSON-RPC request is an object");
    }
    if call.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("jsonrpc must be \"2.0\"");
    }
    if call
        .get("id")
        .is_some_and(|id| !(id.is_string() || id.is_i64() || id.is_null()))
    {
        return invalid("id must be a string or an integer");
    }
    match call.get("method").and_then(Value::as_str) {
        Some(method) => Ok(method),
        None => invalid("method must be a string"),
    }
}

/// `A2A-Version`: 1.x is served; an empty or absent header (0.3 by the spec's rule) is served
/// as 1.0 too, leniently; anything else is refused.
fn check_version(headers: &HeaderMap) -> Result<(), A2aError> {
    let asked = headers
        .get(VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .unwrap_or("");
    let major = asked.split('.').next().unwrap_or("");
    if asked.is_empty() || major == "1" {
        Ok(())
    } else {
        Err(A2aError::Version(asked.to_owned()))
    }
}

fn params<T: DeserializeOwned>(params: Value) -> Result<T, A2aError> {
    serde_json::from_value(params).map_err(|e| A2aError::InvalidParams(e.to_string()))
}

async fn dispatch(
    app: Arc<AppState>,
    parts: &http::request::Parts,
    method: &str,
    raw: Value,
) -> Result<Answer, A2aError> {
    let options = run_options(parts)?;
    let principal = options.principal.clone();
    let json = |value: Result<Value, serde_json::Error>| {
        value.map(Answer::Json).map_err(A2aError::corrupt)
    };
    match method {
        methods::SEND_MESSAGE | methods::SEND_STREAMING_MESSAGE => {
            let streaming = method == methods::SEND_STREAMING_MESSAGE;
            let request: SendMessageRequest = params(raw)?;
            match send::send(app, options, request, streaming).await? {
                Sent::Result(result) => json(serde_json::to_value(result)),
                Sent::Stream(stream) => Ok(Answer::Stream(stream)),
            }
        }
        methods::GET_TASK => json(serde_json::to_value(
            manage::get_task(&app, &principal, params(raw)?).await?,
        )),
        methods::LIST_TASKS => {
            let query = if raw.is_null() {
                Default::default()
            } else {
                params(raw)?
            };
            Ok(Answer::Json(
                manage::list_tasks(&app, &principal, query).await?,
            ))
        }
        methods::CANCEL_TASK => json(serde_json::to_value(
            manage::cancel_task(&app, options, params(raw)?).await?,
        )),
        methods::SUBSCRIBE_TO_TASK => Ok(Answer::Stream(
            manage::subscribe(app, &principal, params(raw)?).await?,
        )),
        methods::CREATE_PUSH_CONFIG => Ok(Answer::Json(
            push_config::create(&app, &principal, raw).await?,
        )),
        methods::GET_PUSH_CONFIG => Ok(Answer::Json(
            push_config::get(&app, &principal, params(raw)?).await?,
        )),
        methods::LIST_PUSH_CONFIGS => Ok(Answer::Json(
            push_config::list(&app, &principal, params(raw)?).await?,
        )),
        methods::DELETE_PUSH_CONFIG => Ok(Answer::Json(
            push_config::delete(&app, &principal, params(raw)?).await?,
        )),
        methods::GET_EXTENDED_AGENT_CARD => Err(A2aError::Unsupported(
            "this agent has no extended card".into(),
        )),
        other => Err(A2aError::MethodNotFound(other.to_owned())),
    }
}

/// A JSON-RPC response with HTTP 200.
fn reply(id: JsonRpcId, outcome: Result<Value, A2aError>) -> Response {
    let body = match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(err) => json!({"jsonrpc": "2.0", "id": id, "error": err.to_jsonrpc()}),
    };
    Json(body).into_response()
}

/// Stream responses as SSE, each one a JSON-RPC response carrying the request's id.
fn sse(id: JsonRpcId, responses: BoxStream<'static, StreamResponse>) -> Response {
    let frames =
        responses.map(move |response| json!({"jsonrpc": "2.0", "id": id, "result": response}));
    super::json_event_stream(frames.boxed())
}

/// The task a stream opens with: just created, nothing run yet.
pub(crate) fn submitted(task_id: &str, record: &TaskRecord) -> Task {
    let mut task = Task::new(
        task_id,
        TaskStatus {
            state: TaskState::Submitted,
            message: None,
            timestamp: Some(format_ms(record.updated_ms)),
        },
    );
    task.context_id = Some(record.context_id.clone());
    task.history = record.messages.clone();
    task
}
