//! CopilotKit's thread endpoints (1.75 `@copilotkit/core` thread store) over the engine's
//! threads: `GET {base}/threads`, `PATCH` / `DELETE {base}/threads/{id}`,
//! `POST {base}/threads/{id}/archive`, `GET {base}/threads/{id}/messages|state|events`,
//! and the same through the single-route envelope (`resource/request`). One dispatcher
//! serves both transports.

use agui_protocol::Event;
use axum::Json;
use axum::response::{IntoResponse, Response};
use handoff_core::codes;
use handoff_core::{Principal, ThreadChanges, ThreadSummary};
use http::{HeaderValue, Method, Uri, header};
use percent_encoding::percent_decode_str;
use serde_json::{Map, Value, json};

use super::connect::rehydration;
use crate::AppState;
use crate::error::ApiError;
use crate::routes::thread_list::{ListParams, changes, list_page};

/// `/info`'s thread flags: every endpoint but realtime metadata.
pub(super) fn thread_endpoints() -> Value {
    json!({"list": true, "inspect": true, "mutations": true, "realtimeMetadata": false})
}

/// A thread as CopilotKit's `ThreadRecord` (with Handoff's `status` and
/// `pendingInterrupts` beside it).
fn record(principal: &Principal, thread: ThreadSummary) -> Value {
    let mut value = serde_json::to_value(&thread).unwrap_or_default();
    if let Value::Object(fields) = &mut value {
        fields.insert("organizationId".into(), json!(principal.tenant));
        fields
            .entry("agentId")
            .or_insert_with(|| Value::String(String::new()));
        fields
            .entry("createdById")
            .or_insert_with(|| Value::String(String::new()));
        if fields.get("lastRunAt").is_some_and(Value::is_null) {
            fields.remove("lastRunAt");
        }
    }
    value
}

/// A message as CopilotKit's thread store shows it: tool calls flattened to
/// `{id, name, args}`.
fn message(message: &agui_protocol::Message) -> Value {
    let mut value = serde_json::to_value(message).unwrap_or_default();
    if let Some(Value::Array(calls)) = value.get_mut("toolCalls") {
        for call in calls.iter_mut() {
            let function = call.get("function").cloned().unwrap_or_default();
            *call = json!({
                "id": call.get("id").cloned().unwrap_or_default(),
                "name": function.get("name").cloned().unwrap_or_default(),
                "args": function.get("arguments").cloned().unwrap_or_default(),
            });
        }
    }
    value
}

fn not_allowed(allow: &'static str) -> Response {
    let mut response = ApiError::new(
        codes::METHOD_NOT_ALLOWED,
        format!("this resource answers {allow}"),
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

fn thread_id(segment: &str) -> Result<String, ApiError> {
    percent_decode_str(segment)
        .decode_utf8()
        .map(|id| id.into_owned())
        .map_err(|_| ApiError::new(codes::INVALID_INPUT, "the thread id is not UTF-8"))
}

/// Answers one thread resource call: `path_and_query` relative to the CopilotKit base
/// (`/threads…`), `body` the JSON body of a mutation.
pub(super) async fn resource(
    app: &AppState,
    principal: &Principal,
    method: &Method,
    path_and_query: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let uri: Uri = path_and_query
        .parse()
        .map_err(|_| ApiError::new(codes::INVALID_INPUT, "params.path is not a path"))?;
    let rest = uri.path().strip_prefix("/threads").unwrap_or("/");
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    let engine = &app.engine;
    match segments.as_slice() {
        [] => {
            if method != Method::GET {
                return Ok(not_allowed("GET"));
            }
            let page = list_page(app, principal, &ListParams::from_uri(&uri)?).await?;
            let threads: Vec<Value> = page
                .threads
                .into_iter()
                .map(|t| record(principal, t))
                .collect();
            Ok(Json(json!({"threads": threads, "nextCursor": page.next_cursor})).into_response())
        }
        [id] => {
            let id = thread_id(id)?;
            match *method {
                Method::PATCH => {
                    let thread = engine
                        .update_thread(principal, &id, &changes(body)?)
                        .await?;
                    Ok(Json(record(principal, thread)).into_response())
                }
                Method::DELETE => {
                    engine.delete_thread(principal, &id).await?;
                    Ok(Json(json!({"threadId": id, "deleted": true})).into_response())
                }
                _ => Ok(not_allowed("PATCH, DELETE")),
            }
        }
        [id, "archive"] => {
            if method != Method::POST {
                return Ok(not_allowed("POST"));
            }
            let id = thread_id(id)?;
            let archive = ThreadChanges {
                name: None,
                archived: Some(true),
            };
            engine.update_thread(principal, &id, &archive).await?;
            Ok(Json(json!({"threadId": id, "archived": true})).into_response())
        }
        [id, part @ ("messages" | "state" | "events")] => {
            if method != Method::GET {
                return Ok(not_allowed("GET"));
            }
            let id = thread_id(id)?;
            let Some(view) = engine.thread(principal, &id).await? else {
                return Err(ApiError::new(codes::THREAD_NOT_FOUND, "no such thread"));
            };
            let body = match *part {
                "messages" => {
                    let messages: Vec<Value> = view.messages.iter().map(message).collect();
                    json!({ "messages": messages })
                }
                "state" => json!({ "state": view.state }),
                _ => {
                    let run_id = view
                        .last_run
                        .as_ref()
                        .map(|r| r.run_id.as_str().to_owned())
                        .unwrap_or_else(|| engine.runtime().ids.next_id("run"));
                    let now = engine.runtime().now_ms();
                    let events: Vec<Event> = rehydration(view, &run_id, now);
                    json!({ "events": events })
                }
            };
            Ok(Json(body).into_response())
        }
        _ => Err(ApiError::new(
            codes::METHOD_NOT_FOUND,
            format!("no thread resource at {}", uri.path()),
        )),
    }
}

/// The `resource/request` envelope's `params`: `{path, httpMethod}`.
pub(super) fn envelope_target(params: &Map<String, Value>) -> Result<(Method, String), ApiError> {
    let invalid = |m: &str| ApiError::new(codes::INVALID_INPUT, m.to_owned());
    let path = params
        .get("path")
        .and_then(Value::as_str)
        .filter(|p| p.starts_with("/threads") && !p.starts_with("//"))
        .ok_or_else(|| invalid("params.path must be a /threads resource"))?;
    let method = params
        .get("httpMethod")
        .and_then(Value::as_str)
        .unwrap_or("GET");
    let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes())
        .map_err(|_| invalid("params.httpMethod is not an HTTP method"))?;
    Ok((method, path.to_owned()))
}
