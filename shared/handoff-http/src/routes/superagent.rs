//! Superagent-compatible chat routes (seed 001): legacy framing by default, A2UI on request.
//!
//! - `POST /api/v1/chat/stream` `{agent_id, session_id, message}`: a new run on
//!   thread `session_id` with the stored history plus the message.
//! - `POST /api/v1/chat/resume` `{agent_id, session_id, input}`: answers every
//!   pending interrupt. `input` is the payload; an object keyed by interrupt ids
//!   answers each one separately; `{"cancelled": true}` cancels.

use std::sync::Arc;

use agui_protocol::{Message, ResumeEntry, RunAgentInput};
use axum::extract::{Request, State};
use axum::response::Response;
use handoff_core::codes;
use serde::Deserialize;
use serde_json::Value;

use super::agent::{run_options, start_run};
use super::json_body::read_json_body;
use crate::AppState;
use crate::body::Encoding;
use crate::error::ApiError;

#[derive(Deserialize)]
struct ChatStream {
    #[serde(default)]
    #[allow(dead_code)]
    agent_id: Option<String>,
    session_id: String,
    message: String,
}

#[derive(Deserialize)]
struct ChatResume {
    #[serde(default)]
    #[allow(dead_code)]
    agent_id: Option<String>,
    session_id: String,
    input: Value,
}

fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| ApiError::new(codes::INVALID_INPUT, e.to_string()))
}

pub(crate) async fn chat_stream(
    State(app): State<Arc<AppState>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let body = read_json_body(&app, &parts.headers, body).await?;
    let chat: ChatStream = parse(&body)?;
    if chat.session_id.trim().is_empty() {
        return Err(ApiError::new(
            codes::INVALID_INPUT,
            "session_id is required",
        ));
    }
    let options = run_options(&parts)?;
    let thread = app
        .engine
        .thread(&options.principal, &chat.session_id)
        .await?;
    let (mut messages, state) = thread.map(|t| (t.messages, t.state)).unwrap_or_default();
    let ids = &app.engine.runtime().ids;
    messages.push(Message::user(ids.next_id("msg"), chat.message));
    let mut input = RunAgentInput::new(chat.session_id, ids.next_id("run"), messages);
    input.state = Some(state);
    let encoding = Encoding::negotiate(&parts.headers, parts.uri.query(), Encoding::Legacy);
    start_run(&app, &parts, input, encoding, options).await
}

pub(crate) async fn chat_resume(
    State(app): State<Arc<AppState>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let body = read_json_body(&app, &parts.headers, body).await?;
    let chat: ChatResume = parse(&body)?;
    let options = run_options(&parts)?;
    let pending = app
        .engine
        .thread(&options.principal, &chat.session_id)
        .await?
        .map(|t| t.pending_interrupts)
        .ok_or(handoff_core::CoreError::ThreadNotFound)?;
    if pending.is_empty() {
        return Err(ApiError::new(
            codes::INTERRUPT_NOT_PENDING,
            "this session has nothing to resume",
        ));
    }
    let cancelled = chat.input.get("cancelled") == Some(&Value::Bool(true));
    let entries = pending
        .iter()
        .map(|interrupt| {
            if cancelled {
                return ResumeEntry::cancelled(interrupt.id.clone());
            }
            let payload = chat
                .input
                .get(interrupt.id.as_str())
                .filter(|v| v.is_object())
                .unwrap_or(&chat.input);
            ResumeEntry::resolved(interrupt.id.clone(), payload.clone())
        })
        .collect();
    let run_id = app.engine.runtime().ids.next_id("run");
    let input = RunAgentInput::new(chat.session_id, run_id, Vec::new()).with_resume(entries);
    let encoding = Encoding::negotiate(&parts.headers, parts.uri.query(), Encoding::Legacy);
    start_run(&app, &parts, input, encoding, options).await
}
