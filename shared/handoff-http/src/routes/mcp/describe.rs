//! What the server says about itself: `initialize`, `server/discover`, and its one tool.

use serde_json::{Value, json};

use super::SERVED;
use crate::AppState;

/// `initialize` (session revisions): the client's version when served, else the newest
/// session revision.
pub(super) fn initialize(app: &AppState, params: &Value) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let version = asked
        .filter(|v| SERVED[1..].contains(v))
        .unwrap_or(SERVED[1]);
    let mut result = json!({
        "protocolVersion": version,
        "capabilities": capabilities(),
        "serverInfo": server_info(app),
    });
    if let Some(instructions) = instructions(app) {
        result["instructions"] = json!(instructions);
    }
    result
}

/// `server/discover` (2026-07-28): the revisions, capabilities and identity served.
pub(super) fn discover(app: &AppState) -> Value {
    let mut result = json!({
        "supportedVersions": SERVED,
        "capabilities": capabilities(),
        "serverInfo": server_info(app),
    });
    if let Some(instructions) = instructions(app) {
        result["instructions"] = json!(instructions);
    }
    result
}

fn capabilities() -> Value {
    json!({"tools": {"listChanged": false}})
}

pub(super) fn server_info(app: &AppState) -> Value {
    json!({"name": app.engine.agent_name(), "version": env!("CARGO_PKG_VERSION")})
}

fn instructions(app: &AppState) -> Option<String> {
    let said = app.engine.agent().description();
    (!said.is_empty())
        .then(|| said.to_owned())
        .or_else(|| app.description.clone())
}

/// The agent's tool name: its name with what MCP tool names refuse replaced by `_`.
pub(super) fn tool_name(app: &AppState) -> String {
    let name: String = app
        .engine
        .agent()
        .name()
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' | '.' => c,
            _ => '_',
        })
        .take(128)
        .collect();
    if name.is_empty() {
        "agent".into()
    } else {
        name
    }
}

pub(super) fn tool(app: &AppState) -> Value {
    let name = tool_name(app);
    let description =
        instructions(app).unwrap_or_else(|| format!("The {name} agent, served by Handoff"));
    json!({
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "What to ask the agent."},
                "threadId": {"type": "string", "description": "The conversation to continue; without message, the outcome of its last run."}
            },
        },
    })
}
