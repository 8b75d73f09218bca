//! The CopilotKit runtime protocol (CopilotKit v1.50+ "core" clients, `@copilotkit/core`)
//! over the same engines, under [`HttpConfig::copilotkit_base`](crate::HttpConfig):
//!
//! | route | what |
//! |---|---|
//! | `GET {base}/info` | `{version, agents: {id: {name, description?, capabilities}}, mode: "sse", …}` |
//! | `POST {base}/agent/{agentId}/run` | body `RunAgentInput`: the run as AG-UI SSE (as `POST /agent`) |
//! | `POST {base}/agent/{agentId}/connect` | body `RunAgentInput` (its `threadId`): the thread rehydrated, a live run joined |
//! | `POST {base}/agent/{agentId}/stop/{threadId}` | body `{runId?}`: `{stopped, threadId, runId?, message?}` |
//! | `GET {base}/threads`, `PATCH`/`DELETE {base}/threads/{id}`, `POST {base}/threads/{id}/archive`, `GET {base}/threads/{id}/messages\|state\|events` | the caller's threads in CopilotKit's shapes (`threads`) |
//! | `POST {base}` | single-route envelope `{method: "info" \| "agent/run" \| "agent/connect" \| "agent/stop" \| "resource/request", params?, body?}` |
//!
//! The primary engine is agent `agent_name()`; [`Routes::agent`](crate::Routes::agent)
//! adds more. An unknown agent is a 404 `{code: "AGENT_NOT_FOUND"}`.

mod connect;
mod threads;

use std::sync::Arc;

use agui_protocol::lenient::parse_input;
use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use handoff_core::codes;
use http::HeaderMap;
use http::request::Parts;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::agent::{run_options, start_run};
use super::json_body::{read_body, read_json_body};
use crate::AppState;
use crate::body::Encoding;
use crate::config::normalize_base;
use crate::error::ApiError;
use crate::routes::principal;

/// Adds the CopilotKit routes under `base` to `router`.
pub(crate) fn register(router: Router<Arc<AppState>>, base: &str) -> Router<Arc<AppState>> {
    let base = normalize_base(base);
    let root = if base.is_empty() { "/" } else { base.as_str() };
    let router = router
        .route(&format!("{base}/info"), get(info))
        .route(&format!("{base}/agent/{{agent_id}}/run"), post(run))
        .route(&format!("{base}/agent/{{agent_id}}/connect"), post(connect))
        .route(
            &format!("{base}/agent/{{agent_id}}/stop/{{thread_id}}"),
            post(stop),
        )
        .route(root, post(envelope));
    if base.is_empty() {
        // `/threads…` are the engine's own thread routes; the envelope still bridges them.
        router
    } else {
        router
            .route(&format!("{base}/"), post(envelope))
            .route(&format!("{base}/threads"), any(thread_resource))
            .route(&format!("{base}/threads/{{*rest}}"), any(thread_resource))
    }
}

/// A thread resource under the base, in CopilotKit's shapes.
async fn thread_resource(
    State(app): State<Arc<AppState>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let principal = principal(&parts.extensions)?;
    let body = read_body(&app, &parts.headers, body).await?;
    let base = normalize_base(&app.config.copilotkit_base);
    let path = parts
        .uri
        .path_and_query()
        .map_or("", |p| p.as_str())
        .strip_prefix(base.as_str())
        .unwrap_or_default();
    threads::resource(&app, &principal, &parts.method, path, &body).await
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(codes::INVALID_INPUT, message)
}

/// The state serving agent `id`: the primary engine under its name, else an added agent.
fn agent_state(app: &AppState, id: &str) -> Result<AppState, ApiError> {
    if id == app.engine.agent_name() {
        return Ok(app.clone());
    }
    match app.agents.get(id) {
        Some(entry) => Ok(AppState {
            engine: entry.engine.clone(),
            description: entry.description.clone(),
            ..app.clone()
        }),
        None => Err(ApiError::new(
            codes::AGENT_NOT_FOUND,
            format!("agent '{id}' does not exist"),
        )),
    }
}

fn describe(name: &str, description: Option<&String>) -> Value {
    let mut agent = Map::new();
    agent.insert("name".into(), json!(name));
    if let Some(description) = description {
        agent.insert("description".into(), json!(description));
    }
    agent.insert(
        "capabilities".into(),
        json!({
            "identity": {"name": name, "provider": "handoff"},
            "transport": {"streaming": true, "resumable": true},
            "state": {"snapshots": true, "deltas": true, "persistentState": true},
            "humanInTheLoop": {"supported": true, "approvals": true},
        }),
    );
    Value::Object(agent)
}

/// The runtime info: what `@copilotkit/core` reads to list the agents and pick SSE mode.
fn info_body(app: &AppState) -> Value {
    let mut agents = Map::new();
    let primary = app.engine.agent_name();
    agents.insert(
        primary.to_owned(),
        describe(primary, app.description.as_ref()),
    );
    for (id, entry) in app.agents.iter() {
        agents
            .entry(id.clone())
            .or_insert_with(|| describe(id, entry.description.as_ref()));
    }
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "agents": agents,
        "mode": "sse",
        "audioFileTranscriptionEnabled": false,
        "suggestions": false,
        "a2uiEnabled": false,
        "openGenerativeUIEnabled": false,
        "telemetryDisabled": true,
        // REST clients read the first, single-route clients the second (which also makes
        // them send thread calls as `resource/request` envelopes).
        "threadEndpoints": threads::thread_endpoints(),
        "singleRoute": {"resourceOperations": true, "threadEndpoints": threads::thread_endpoints()},
    })
}

async fn info(State(app): State<Arc<AppState>>) -> Response {
    Json(info_body(&app)).into_response()
}

async fn run(
    State(app): State<Arc<AppState>>,
    Path(agent_id): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let app = agent_state(&app, &agent_id)?;
    let (parts, body) = request.into_parts();
    let body = read_json_body(&app, &parts.headers, body).await?;
    run_agent(&app, &parts, &body).await
}

/// A run of `app`'s engine: the same contract as `POST /agent`, AG-UI framing.
async fn run_agent(app: &AppState, parts: &Parts, body: &[u8]) -> Result<Response, ApiError> {
    let input = parse_input(body).map_err(|e| invalid(e.to_string()))?;
    start_run(app, parts, input, Encoding::AgUi, run_options(parts)?).await
}

async fn connect(
    State(app): State<Arc<AppState>>,
    Path(agent_id): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let app = agent_state(&app, &agent_id)?;
    let (parts, body) = request.into_parts();
    let body = read_json_body(&app, &parts.headers, body).await?;
    connect::connect(&app, &parts, &body).await
}

async fn stop(
    State(app): State<Arc<AppState>>,
    Path((agent_id, thread_id)): Path<(String, String)>,
    request: Request,
) -> Result<Response, ApiError> {
    let app = agent_state(&app, &agent_id)?;
    let (parts, body) = request.into_parts();
    let body = read_optional_body(&app, &parts.headers, body).await?;
    let run_id = connect::stop_scope(&body)?;
    connect::stop(&app, &parts, &thread_id, run_id).await
}

/// A body that may be absent (a stop without a run id).
async fn read_optional_body(
    app: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<Value, ApiError> {
    let bytes = read_body(app, headers, body).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))
}

#[derive(Deserialize)]
struct Envelope {
    method: String,
    #[serde(default)]
    params: Map<String, Value>,
    #[serde(default)]
    body: Value,
}

impl Envelope {
    fn param(&self, key: &str) -> Result<&str, ApiError> {
        self.params
            .get(key)
            .and_then(Value::as_str)
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| invalid(format!("params.{key} is required")))
    }

    fn body_bytes(&self) -> Result<Vec<u8>, ApiError> {
        if self.body.is_null() {
            return Err(invalid("body is required"));
        }
        serde_json::to_vec(&self.body).map_err(|e| invalid(e.to_string()))
    }
}

/// `POST {base}`: the single-route transport, `{method, params, body}`.
async fn envelope(
    State(app): State<Arc<AppState>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let body = read_json_body(&app, &parts.headers, body).await?;
    let call: Envelope = serde_json::from_slice(&body).map_err(|e| invalid(e.to_string()))?;
    match call.method.as_str() {
        "info" => Ok(Json(info_body(&app)).into_response()),
        "agent/run" => {
            let app = agent_state(&app, call.param("agentId")?)?;
            run_agent(&app, &parts, &call.body_bytes()?).await
        }
        "agent/connect" => {
            let app = agent_state(&app, call.param("agentId")?)?;
            connect::connect(&app, &parts, &call.body_bytes()?).await
        }
        "agent/stop" => {
            let app = agent_state(&app, call.param("agentId")?)?;
            let thread_id = call.param("threadId")?;
            let run_id = connect::stop_scope(&call.body)?;
            connect::stop(&app, &parts, thread_id, run_id).await
        }
        "resource/request" => {
            let principal = principal(&parts.extensions)?;
            let (method, path) = threads::envelope_target(&call.params)?;
            let body = match &call.body {
                Value::Null => Vec::new(),
                body => serde_json::to_vec(body).map_err(|e| invalid(e.to_string()))?,
            };
            threads::resource(&app, &principal, &method, &path, &body).await
        }
        other => Err(ApiError::new(
            codes::METHOD_NOT_FOUND,
            format!("method '{other}' is not served here"),
        )),
    }
}
