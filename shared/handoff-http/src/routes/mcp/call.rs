//! `tools/call`: a new turn, the outcome of a thread, or the retry that answers its
//! interrupts, each through the engine's claim.

use std::sync::Arc;

use agui_protocol::{Interrupt, RunAgentInput};
use handoff_core::{CoreError, Principal, RunOptions};
use serde_json::{Map, Value, json};

use super::Speaks;
use super::ask::{self, Asking};
use super::elicit;
use super::error::McpError;
use super::outcome::{self, End, Ran, recorded};
use super::progress::{self, Progress};
use super::state::State;
use crate::AppState;

/// What a query value escapes: everything but RFC 3986's unreserved characters.
const QUERY_VALUE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// One `tools/call`, and what answering it needs.
pub(crate) struct Call {
    pub app: Arc<AppState>,
    pub options: RunOptions,
    pub speaks: Speaks,
    pub tool: String,
    pub arguments: Value,
    /// Where the console is served (the deployment's base URL).
    pub base: String,
    /// Where progress notifications and requests to the client go, when the call is
    /// answered as a stream.
    pub progress: Option<Progress>,
    /// Session revisions: until when (Unix ms) the call may wait for an answer to an
    /// elicitation it sends ([`ask`]).
    pub ask_until: u64,
}

impl Call {
    fn principal(&self) -> &Principal {
        &self.options.principal
    }
}

/// The tool's arguments: `{message?, threadId?}`, nothing else.
fn arguments(arguments: &Value) -> Result<(Option<String>, Option<String>), McpError> {
    let Some(object) = arguments.as_object() else {
        return Err(McpError::InvalidParams(
            "arguments must be an object".into(),
        ));
    };
    let text = |key: &str| match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(_) => Err(McpError::InvalidParams(format!(
            "arguments.{key} must be a non-empty string"
        ))),
    };
    if let Some(other) = object.keys().find(|k| *k != "message" && *k != "threadId") {
        return Err(McpError::InvalidParams(format!(
            "unknown argument {other}: this tool takes message and threadId"
        )));
    }
    Ok((text("message")?, text("threadId")?))
}

/// Answers the call.
pub(crate) async fn call(call: Call, params: &Value) -> Result<Value, McpError> {
    let (message, thread_id) = arguments(&call.arguments)?;
    if let Some(sealed) = params.get("requestState") {
        let sealed = sealed
            .as_str()
            .ok_or_else(|| McpError::InvalidParams("requestState must be a string".into()))?;
        let empty = Map::new();
        let responses = match params.get("inputResponses") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(map)) => map,
            Some(_) => {
                return Err(McpError::InvalidParams(
                    "inputResponses must be an object".into(),
                ));
            }
        };
        return retry(&call, sealed, responses).await;
    }
    match (message, thread_id) {
        (Some(message), thread_id) => new_turn(&call, message, thread_id).await,
        (None, Some(thread_id)) => poll(&call, &thread_id).await,
        (None, None) => Err(McpError::InvalidParams(
            "arguments.message is required (or a threadId, for the outcome of its run)".into(),
        )),
    }
}

async fn new_turn(
    call: &Call,
    message: String,
    thread_id: Option<String>,
) -> Result<Value, McpError> {
    let app = &call.app;
    let ids = &app.engine.runtime().ids;
    let thread_id = thread_id.unwrap_or_else(|| ids.next_id("mcp"));
    let thread = app.engine.thread(call.principal(), &thread_id).await?;
    let (mut messages, state) = thread.map(|t| (t.messages, t.state)).unwrap_or_default();
    messages.push(agui_protocol::Message::user(ids.next_id("msg"), message));
    let mut input = RunAgentInput::new(thread_id.clone(), ids.next_id("mcp-run"), messages);
    input.state = Some(state);
    let events = app.engine.start_shared(input, call.options.clone()).await?;
    let events = progress::collect(events, call.progress.as_ref()).await;
    let ran = outcome::fold(events.iter().map(|e| &**e));
    respond(call, &thread_id, ran, true).await
}

/// The outcome of the thread's last run, without a new turn: its interrupts when it
/// still waits on them.
async fn poll(call: &Call, thread_id: &str) -> Result<Value, McpError> {
    let app = &call.app;
    let principal = call.principal();
    let thread = app
        .engine
        .thread(principal, thread_id)
        .await?
        .ok_or(CoreError::ThreadNotFound)?;
    let Some(last) = thread.last_run else {
        return Err(McpError::InvalidParams(format!(
            "thread {thread_id} has no run yet: send a message"
        )));
    };
    let run_id = last.run_id.as_str();
    let (record, _) = app
        .engine
        .run_events(principal, thread_id, run_id)
        .await?
        .ok_or(CoreError::RunNotFound)?;
    let mut ran = recorded(app, principal, thread_id, run_id)
        .await?
        .unwrap_or_else(|| outcome::fold(&[]));
    if !thread.pending_interrupts.is_empty() {
        ran.end = End::Interrupted(thread.pending_interrupts.clone());
    }
    respond(call, thread_id, ran, record.made_by(principal)).await
}

/// The retry of an `input_required` call: its answers, run once through the engine's
/// claim under a run id derived from the state; every later retry gets that run's result.
async fn retry(
    call: &Call,
    sealed: &str,
    responses: &Map<String, Value>,
) -> Result<Value, McpError> {
    let app = &call.app;
    let principal = call.principal();
    let state = State::open(app, principal, sealed, &call.tool, &call.arguments).await?;
    let run_id = State::run_id(sealed);
    if let Some(ran) = recorded(app, principal, &state.th, &run_id).await? {
        return respond(call, &state.th, ran, true).await;
    }
    let thread = app
        .engine
        .thread(principal, &state.th)
        .await?
        .ok_or(CoreError::ThreadNotFound)?;
    let open: Vec<Interrupt> = thread
        .pending_interrupts
        .iter()
        .filter(|i| state.i.iter().any(|id| id == i.id.as_str()))
        .cloned()
        .collect();
    if open.len() != state.i.len() {
        // Answered elsewhere (the console, AG-UI, A2A): that answer's outcome.
        return poll(call, &state.th).await;
    }
    let Some(entries) = elicit::answers(responses, &open)? else {
        return poll(call, &state.th).await;
    };
    let input =
        RunAgentInput::new(state.th.clone(), run_id.clone(), Vec::new()).with_resume(entries);
    match app.engine.start_shared(input, call.options.clone()).await {
        Ok(events) => {
            let events = progress::collect(events, call.progress.as_ref()).await;
            let ran = outcome::fold(events.iter().map(|e| &**e));
            respond(call, &state.th, ran, true).await
        }
        Err(
            err @ (CoreError::ThreadBusy { .. }
            | CoreError::RunIdConflict(_)
            | CoreError::InterruptNotPending { .. }),
        ) => {
            // A racing retry of the same state claimed first: its run is the answer.
            if let Some(ran) = recorded(app, principal, &state.th, &run_id).await? {
                return respond(call, &state.th, ran, true).await;
            }
            match err {
                CoreError::InterruptNotPending { .. } => poll(call, &state.th).await,
                err => Err(err.into()),
            }
        }
        Err(err) => Err(err.into()),
    }
}

/// The result of `ran` on `thread_id`: complete, or the interrupts it waits on.
/// `requested`: the caller asked for the run (a four-eyes interrupt is then not theirs).
async fn respond(
    call: &Call,
    thread_id: &str,
    ran: Ran,
    requested: bool,
) -> Result<Value, McpError> {
    let app = &call.app;
    let principal = call.principal();
    let state = match app.engine.thread(principal, thread_id).await {
        Ok(thread) => thread.map(|t| t.state),
        Err(CoreError::ThreadNotFound | CoreError::Forbidden(_)) => None,
        Err(err) => return Err(err.into()),
    };
    let mut structured = outcome::structured(thread_id, &ran, state.as_ref());
    let End::Interrupted(interrupts) = &ran.end else {
        let (text, is_error) = outcome::finished_text(&ran);
        return Ok(outcome::complete(text, is_error, structured));
    };
    let thread_enc = percent_encoding::utf8_percent_encode(thread_id, QUERY_VALUE);
    let console = format!("{}/?thread={thread_enc}", call.base.trim_end_matches('/'));
    let answerable = interrupts
        .iter()
        .all(|i| elicit::may_answer(i, principal, requested));
    if call.speaks.stateless {
        let now = app.engine.runtime().now_ms();
        let sealed = State::new(
            principal,
            thread_id,
            interrupts,
            &call.tool,
            &call.arguments,
            now,
        )
        .seal(app, principal)
        .await?;
        let mut result = json!({"resultType": "input_required", "requestState": sealed});
        let (form, url) = (call.speaks.form, call.speaks.url);
        if answerable && interrupts.iter().all(|i| elicit::elicitable(i, form, url)) {
            let requests: Map<String, Value> = interrupts
                .iter()
                .map(|i| (i.id.to_string(), elicit::request(i, &console)))
                .collect();
            result["inputRequests"] = Value::Object(requests);
        }
        return Ok(result);
    }
    let (form, url) = (call.speaks.form, call.speaks.url);
    if answerable && interrupts.iter().all(|i| elicit::elicitable(i, form, url)) {
        let asker = ask::Asker {
            app,
            principal,
            stream: call.progress.as_ref(),
            until: call.ask_until,
        };
        match asker.ask(thread_id, interrupts, &console).await? {
            Asking::Ran(ran) => return Box::pin(respond(call, thread_id, ran, true)).await,
            Asking::Elsewhere => return Box::pin(poll(call, thread_id)).await,
            Asking::Waiting => {}
        }
    }
    structured.insert("consoleUrl".into(), json!(console));
    let listed: Vec<Value> = interrupts
        .iter()
        .map(|i| {
            let mut listed = json!({"id": i.id.as_str(), "reason": i.reason});
            if let Some(message) = &i.message {
                listed["message"] = json!(message);
            }
            listed
        })
        .collect();
    structured.insert("interrupts".into(), json!(listed));
    let text = outcome::waiting_text(&ran, interrupts, &console, &call.tool);
    Ok(outcome::complete(text, false, structured))
}
