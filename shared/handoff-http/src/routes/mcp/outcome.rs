//! What a run amounts to for an MCP caller: its final text, how it ended, and the result
//! that says so.

use agui_protocol::{Event, Interrupt, RunFinishedOutcome};
use futures::StreamExt;
use handoff_core::Principal;
use serde_json::{Map, Value, json};

use super::error::McpError;
use crate::AppState;

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum End {
    Completed,
    Interrupted(Vec<Interrupt>),
    Cancelled,
    Failed {
        code: Option<String>,
        message: String,
    },
    /// No terminal event (a run followed while another instance still runs it).
    Unfinished,
}

impl End {
    fn status(&self) -> &'static str {
        match self {
            End::Completed => "completed",
            End::Interrupted(_) => "input_required",
            End::Cancelled => "cancelled",
            End::Failed { .. } => "failed",
            End::Unfinished => "working",
        }
    }
}

/// A run, folded.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ran {
    pub run_id: String,
    /// The assistant's text of the run, its messages joined by blank lines.
    pub text: String,
    pub end: End,
}

/// Folds the events of one run (a replay's or a live one's).
pub(crate) fn fold<'a>(events: impl IntoIterator<Item = &'a Event>) -> Ran {
    let mut ran = Ran {
        run_id: String::new(),
        text: String::new(),
        end: End::Unfinished,
    };
    let mut texts: Vec<(String, String)> = Vec::new();
    for event in events {
        match event {
            Event::RunStarted(e) => ran.run_id = e.run_id.to_string(),
            Event::TextMessageStart(e) => texts.push((e.message_id.to_string(), String::new())),
            Event::TextMessageContent(e) => {
                let id = e.message_id.as_str();
                match texts.iter_mut().find(|(m, _)| m == id) {
                    Some((_, text)) => text.push_str(&e.delta),
                    None => texts.push((id.to_owned(), e.delta.clone())),
                }
            }
            Event::RunFinished(e) => {
                ran.end = match &e.outcome {
                    Some(RunFinishedOutcome::Interrupt { interrupts }) => {
                        End::Interrupted(interrupts.clone())
                    }
                    Some(RunFinishedOutcome::Cancelled) => End::Cancelled,
                    _ => End::Completed,
                };
            }
            Event::RunError(e) => {
                ran.end = End::Failed {
                    code: e.code.clone(),
                    message: e.message.clone(),
                }
            }
            _ => {}
        }
    }
    ran.text = texts
        .into_iter()
        .map(|(_, t)| t)
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    ran
}

/// Run `run_id` of the thread, followed to its end wherever it runs; `None` if there is
/// no such run.
pub(crate) async fn recorded(
    app: &AppState,
    principal: &Principal,
    thread_id: &str,
    run_id: &str,
) -> Result<Option<Ran>, McpError> {
    let frames = match app.engine.follow_run(principal, thread_id, run_id, 0).await {
        Ok(Some(frames)) => frames,
        Ok(None) => return Ok(None),
        Err(err) => return Err(err.into()),
    };
    let events: Vec<Event> = frames.map(|(_, event)| event).collect().await;
    Ok(Some(fold(&events)))
}

/// `structuredContent`: the thread, the run, where it stands and the thread's state.
pub(crate) fn structured(thread_id: &str, ran: &Ran, state: Option<&Value>) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("threadId".into(), json!(thread_id));
    if !ran.run_id.is_empty() {
        out.insert("runId".into(), json!(ran.run_id));
    }
    out.insert("status".into(), json!(ran.end.status()));
    if let Some(state) = state.filter(|s| !s.is_null()) {
        out.insert("state".into(), state.clone());
    }
    out
}

/// A complete `CallToolResult`.
pub(crate) fn complete(text: String, is_error: bool, structured: Map<String, Value>) -> Value {
    let mut result = json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured,
        "resultType": "complete",
    });
    if is_error {
        result["isError"] = json!(true);
    }
    result
}

/// The text of a run that did not end waiting for an answer.
pub(crate) fn finished_text(ran: &Ran) -> (String, bool) {
    match &ran.end {
        End::Completed => (ran.text.clone(), false),
        End::Cancelled => (join(&ran.text, "The run was cancelled."), false),
        End::Failed { code, message } => {
            let code = code.as_deref().unwrap_or("AGENT_ERROR");
            (
                join(&ran.text, &format!("The run failed ({code}): {message}")),
                true,
            )
        }
        End::Unfinished => (join(&ran.text, "The run is still working."), false),
        End::Interrupted(_) => (ran.text.clone(), false),
    }
}

/// The text telling a caller the run waits for someone else's answer.
pub(crate) fn waiting_text(
    ran: &Ran,
    interrupts: &[Interrupt],
    console: &str,
    tool: &str,
) -> String {
    let asked: Vec<String> = interrupts
        .iter()
        .map(|i| i.message.clone().unwrap_or_else(|| i.reason.clone()))
        .collect();
    let note = format!(
        "The run waits for an approver: {}. Answer it in the console at {console}, then call \
         {tool} again with this threadId and no message to get the outcome.",
        asked.join("; ")
    );
    join(&ran.text, &note)
}

fn join(text: &str, note: &str) -> String {
    if text.is_empty() {
        note.to_owned()
    } else {
        format!("{text}\n\n{note}")
    }
}
