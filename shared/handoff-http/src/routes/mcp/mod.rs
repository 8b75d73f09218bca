//! The agent served as an MCP server at `POST /mcp` (Streamable HTTP, JSON responses).
//!
//! Revisions: 2026-07-28 (stateless: `server/discover`, `_meta` carrying the protocol
//! version and client capabilities, `input_required` results) and the session-based
//! 2025-11-25 and 2025-06-18 (`initialize`, `notifications/initialized`, `ping`). The
//! session id issued on `initialize` (`Mcp-Session-Id`) is kept nowhere: it is the
//! client's declared elicitation modes, sealed ([`session`]); none is refused for lacking
//! it or for an unknown one, so any instance answers any request. Every result carries
//! `resultType` (but a session revision's `ping`, whose empty result clients check
//! strictly); lists carry `ttlMs` and `cacheScope`.
//!
//! The agent is one tool: its name ([`handoff_core::Agent::name`], characters MCP tool
//! names refuse replaced by `_`), its description, and the input schema
//! `{message: string, threadId?: string}`. A call runs a turn (on `threadId`, else a new
//! thread) through the engine as `POST /agent` does, under the principal
//! `HANDOFF_AUTH` found; see [`call`] for interrupts and their answers, [`elicit`] for how
//! an interrupt is asked and how an answer resumes it, [`ask`] for the session revisions'
//! server-initiated elicitation (answered on any instance, [`pending`]), and [`progress`]
//! for the SSE answer of a call that asks for progress or may ask its client.

mod ask;
mod call;
mod describe;
mod elicit;
mod error;
mod outcome;
mod pending;
mod progress;
pub(crate) mod resource;
mod session;
mod state;

use std::sync::Arc;

use axum::Json;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::{Value, json};

use super::agent::run_options;
use super::json_body::read_body;
use crate::AppState;
use error::McpError;
use session::Modes;

/// The revision without sessions.
pub(crate) const STATELESS: &str = "2026-07-28";
/// Every revision served, newest first.
pub(crate) const SERVED: [&str; 3] = [STATELESS, "2025-11-25", "2025-06-18"];
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
const SESSION_HEADER: &str = "mcp-session-id";
/// How long a client may cache the tool list.
const LIST_TTL_MS: u64 = 5 * 60 * 1000;
/// A call waiting for an elicitation's answer answers this long before the host deadline.
const DEADLINE_MARGIN_MS: u64 = 5_000;

/// What a request says about its client.
#[derive(Debug, Clone, Default)]
pub(crate) struct Speaks {
    /// 2026-07-28: interrupts are `input_required` results.
    pub stateless: bool,
    /// The client declared form-mode / URL-mode elicitation (in `_meta`).
    pub form: bool,
    pub url: bool,
}

/// `POST /mcp`: one JSON-RPC message. Errors are JSON-RPC error objects with HTTP 200;
/// notifications and responses are accepted with 202. An unauthenticated caller is
/// refused (401) before this runs, like every route.
pub(crate) async fn jsonrpc(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = match read_body(&app, &parts.headers, body).await {
        Ok(body) => body,
        Err(err) => return err.into_response(),
    };
    let message: Value = match serde_json::from_slice(&body) {
        Ok(message) => message,
        Err(e) => return reply(Value::Null, Err(McpError::Parse(e.to_string())), None),
    };
    let is_request = message.get("method").is_some() && message.get("id").is_some();
    if !is_request && message.is_object() && message.get("jsonrpc") == Some(&json!("2.0")) {
        // A notification (`notifications/initialized`, a cancel): nothing to say. A
        // response may answer an elicitation a call sent (from any instance).
        if message.get("method").is_none() {
            ask::response(&app, &parts, &message).await;
        }
        return StatusCode::ACCEPTED.into_response();
    }
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let params = message.get("params").cloned().unwrap_or(json!({}));
    let call = message.get("method") == Some(&json!("tools/call")) && envelope(&message).is_ok();
    let modes = match call {
        true => session::of_request(&app, &parts, &params).await,
        false => Modes::default(),
    };
    let token = progress::token(&parts.headers, &params);
    if call && progress::streams(&parts.headers) && (token.is_some() || modes.any()) {
        let (progress, messages) = progress::channel(token);
        let work = async move {
            let sink = Some(progress.clone());
            let outcome = dispatch(&app, &parts, "tools/call", params, sink, modes);
            progress.finish(message_of(id, outcome.await));
        };
        return progress::sse(messages, work);
    }
    let outcome = async {
        let method = envelope(&message)?;
        dispatch(&app, &parts, method, params.clone(), None, modes).await
    }
    .await;
    let session = match message.get("method") == Some(&json!("initialize")) && outcome.is_ok() {
        true => Some(session::answer_initialize(&app, &parts, &params).await),
        false => None,
    };
    reply(id, outcome, session)
}

/// `GET /mcp` and `DELETE /mcp`: 405. There is no standalone stream (nothing is sent
/// outside a call's answer) and no session to end (none is kept).
pub(crate) async fn not_served() -> Response {
    let err = crate::error::ApiError::new(
        handoff_core::codes::METHOD_NOT_ALLOWED,
        "/mcp takes POST: this server opens no GET stream and keeps no session to delete",
    );
    let mut response = err.into_response();
    response
        .headers_mut()
        .insert(http::header::ALLOW, HeaderValue::from_static("POST"));
    response
}

/// The method of a well-formed JSON-RPC 2.0 request.
fn envelope(message: &Value) -> Result<&str, McpError> {
    let invalid = |m: &str| Err(McpError::InvalidRequest(m.to_owned()));
    if !message.is_object() {
        return invalid("a JSON-RPC request is an object (batches are not served)");
    }
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("jsonrpc must be \"2.0\"");
    }
    let id = &message["id"];
    if !(id.is_string() || id.is_i64()) {
        return invalid("id must be a string or an integer");
    }
    match message.get("method").and_then(Value::as_str) {
        Some(method) => Ok(method),
        None => invalid("method must be a string"),
    }
}

/// What the request's `_meta` (2026-07-28) or `MCP-Protocol-Version` header says it speaks.
fn speaks(headers: &HeaderMap, params: &Value) -> Result<Speaks, McpError> {
    let meta = &params["_meta"];
    if let Some(version) = meta.get(META_VERSION).and_then(Value::as_str) {
        if !SERVED.contains(&version) {
            return Err(McpError::Version(version.to_owned()));
        }
        let modes = Modes::of(&meta[META_CAPABILITIES]["elicitation"]);
        return Ok(Speaks {
            stateless: version == STATELESS,
            form: modes.form,
            url: modes.url,
        });
    }
    let header = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok());
    match header {
        Some(version) if !SERVED.contains(&version.trim()) => {
            Err(McpError::Version(version.to_owned()))
        }
        Some(version) => Ok(Speaks {
            stateless: version.trim() == STATELESS,
            ..Speaks::default()
        }),
        None => Ok(Speaks::default()),
    }
}

/// 2026-07-28's `Mcp-Method` / `Mcp-Name` headers, when sent, must match the body.
fn check_headers(headers: &HeaderMap, method: &str, params: &Value) -> Result<(), McpError> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(said) = header("mcp-method").filter(|said| *said != method) {
        return Err(McpError::HeaderMismatch(format!(
            "Mcp-Method says {said}, the body {method}"
        )));
    }
    let name = params.get("name").and_then(Value::as_str);
    if let (Some(said), Some(name)) = (header("mcp-name"), name)
        && said != name
    {
        return Err(McpError::HeaderMismatch(format!(
            "Mcp-Name says {said}, the body {name}"
        )));
    }
    Ok(())
}

async fn dispatch(
    app: &Arc<AppState>,
    parts: &http::request::Parts,
    method: &str,
    params: Value,
    progress: Option<progress::Progress>,
    session: Modes,
) -> Result<Value, McpError> {
    if method == "initialize" {
        return Ok(describe::initialize(app, &params));
    }
    let mut speaks = speaks(&parts.headers, &params)?;
    if !speaks.stateless {
        (speaks.form, speaks.url) = (session.form, session.url);
    }
    check_headers(&parts.headers, method, &params)?;
    let mut result = match method {
        "ping" => json!({}),
        "server/discover" => describe::discover(app),
        "tools/list" => json!({
            "tools": [describe::tool(app)],
            "ttlMs": LIST_TTL_MS,
            "cacheScope": "private",
        }),
        "tools/call" => {
            let name = params.get("name").and_then(Value::as_str).unwrap_or("");
            let tool = describe::tool_name(app);
            if name != tool {
                return Err(McpError::InvalidParams(format!(
                    "unknown tool {name:?}: this server offers {tool:?}"
                )));
            }
            let call = call::Call {
                app: app.clone(),
                options: run_options(parts)?,
                speaks: speaks.clone(),
                tool,
                arguments: params.get("arguments").cloned().unwrap_or(json!({})),
                base: super::origin::origin_of(app, &parts.headers),
                progress,
                ask_until: ask_until(app, crate::HostDeadline::of(&parts.extensions)),
            };
            call::call(call, &params).await?
        }
        other => return Err(McpError::MethodNotFound(other.to_owned())),
    };
    if speaks.stateless {
        result["_meta"] = json!({META_SERVER_INFO: describe::server_info(app)});
    }
    Ok(result)
}

/// Until when a call may wait for an elicitation's answer: the configured wait, and
/// [`DEADLINE_MARGIN_MS`] before the host deadline.
fn ask_until(app: &AppState, deadline: Option<u64>) -> u64 {
    let waited = app.engine.runtime().now_ms() + app.config.mcp_elicit_wait_ms;
    let before_deadline = deadline.map_or(u64::MAX, |d| d.saturating_sub(DEADLINE_MARGIN_MS));
    waited.min(before_deadline)
}

/// A JSON-RPC response; every result says its `resultType` but the empty one (a session
/// revision's `ping`, whose schema is closed).
fn message_of(id: Value, outcome: Result<Value, McpError>) -> Value {
    match outcome {
        Ok(mut result) => {
            let empty = result.as_object().is_some_and(|r| r.is_empty());
            if !empty && result.get("resultType").is_none() {
                result["resultType"] = json!("complete");
            }
            json!({"jsonrpc": "2.0", "id": id, "result": result})
        }
        Err(err) => json!({"jsonrpc": "2.0", "id": id, "error": err.to_jsonrpc()}),
    }
}

/// [`message_of`] with HTTP 200, and the session id `initialize` issues.
fn reply(id: Value, outcome: Result<Value, McpError>, session: Option<String>) -> Response {
    let mut response = Json(message_of(id, outcome)).into_response();
    if let Some(session) = session.and_then(|s| HeaderValue::from_str(&s).ok()) {
        response.headers_mut().insert(SESSION_HEADER, session);
    }
    response
}
