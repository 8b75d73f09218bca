//! Session revisions: an interrupt asked as a server-initiated `elicitation/create` on the
//! call's stream, when the client declared elicitation at `initialize`.
//!
//! - The call records the ask ([`pending`]) and sends one request per interrupt, then
//!   watches the store for the run that answers it, bounded by
//!   `HANDOFF_MCP_ELICIT_WAIT_MS` and the host deadline: a call is never held open waiting
//!   for a human past that. The answer's run ended: the call answers with its result.
//!   Answered elsewhere (the console, AG-UI, A2A): that answer's outcome. Otherwise, or
//!   when the client answered with an error: the result saying the run waits for an
//!   approver, polled later with the `threadId`.
//! - The client's response is a POST that may reach any instance ([`response`]): it
//!   records the answer and, once every interrupt of the ask is answered, resumes the
//!   thread through the engine's claim under the ask's run id (exactly once: a replayed or
//!   racing response finds the run claimed, or the interrupts no longer pending).

use std::future::Future;

use agui_protocol::{Interrupt, RunAgentInput};
use futures::StreamExt;
use futures::future::{Either, select};
use handoff_core::{CoreError, Principal, Runtime};
use serde_json::{Value, json};

use super::elicit;
use super::error::McpError;
use super::outcome::{End, Ran, recorded};
use super::pending;
use super::progress::Progress;
use crate::AppState;
use crate::routes::agent::run_options;

/// How often a waiting call reads the store (three reads: the answer's run, the ask, the
/// thread).
const POLL_MS: u64 = 500;
/// Less time than this left: the call does not ask at all.
const MIN_WAIT_MS: u64 = 1_000;

/// What came of an ask.
pub(crate) enum Asking {
    /// The answer's run, ended.
    Ran(Ran),
    /// The interrupts were answered by someone else.
    Elsewhere,
    /// No answer in time (or the client could not answer).
    Waiting,
}

/// Who asks, where, and until when.
pub(crate) struct Asker<'a> {
    pub app: &'a AppState,
    /// The caller (asked, and whose answer's run it is).
    pub principal: &'a Principal,
    /// The call's stream; none: nobody can be asked.
    pub stream: Option<&'a Progress>,
    /// Unix ms by which the call answers.
    pub until: u64,
}

impl Asker<'_> {
    /// Asks the call's client about `interrupts` of `thread_id` and waits for the outcome.
    pub(crate) async fn ask(
        &self,
        thread_id: &str,
        interrupts: &[Interrupt],
        console: &str,
    ) -> Result<Asking, McpError> {
        let Some(stream) = self.stream else {
            return Ok(Asking::Waiting);
        };
        let (app, principal) = (self.app, self.principal);
        let runtime = app.engine.runtime();
        if runtime.now_ms() + MIN_WAIT_MS > self.until {
            return Ok(Asking::Waiting);
        }
        let ask_id = runtime.ids.next_id("mcp-ask");
        pending::create(app, principal, &ask_id, thread_id, interrupts).await?;
        for (index, interrupt) in interrupts.iter().enumerate() {
            let mut request = elicit::request(interrupt, console);
            request["jsonrpc"] = json!("2.0");
            request["id"] = json!(pending::request_id(&ask_id, index));
            stream.send(request);
        }
        self.wait(thread_id, interrupts, &pending::run_id(&ask_id), &ask_id)
            .await
    }

    /// Watches the store for the answer's run `run_id` until [`Asker::until`].
    async fn wait(
        &self,
        thread_id: &str,
        interrupts: &[Interrupt],
        run_id: &str,
        ask_id: &str,
    ) -> Result<Asking, McpError> {
        let (app, principal) = (self.app, self.principal);
        let runtime = app.engine.runtime();
        loop {
            let left = self.until.saturating_sub(runtime.now_ms());
            if left == 0 {
                return Ok(Asking::Waiting);
            }
            match bounded(runtime, left, recorded(app, principal, thread_id, run_id)).await {
                None => return Ok(Asking::Waiting),
                Some(Some(ran)) if ran.end != End::Unfinished => return Ok(Asking::Ran(ran)),
                Some(_) => {}
            }
            let asked = pending::load(app, principal, ask_id).await?;
            if asked.is_none_or(|a| a.refused) {
                return Ok(Asking::Waiting);
            }
            let still_open = match app.engine.thread(principal, thread_id).await? {
                Some(thread) => interrupts
                    .iter()
                    .all(|i| thread.pending_interrupts.iter().any(|p| p.id == i.id)),
                None => false,
            };
            if !still_open {
                // Our run may have claimed them since the first look: it is the answer then.
                let left = self.until.saturating_sub(runtime.now_ms());
                let ours = recorded(app, principal, thread_id, run_id);
                return Ok(match bounded(runtime, left, ours).await {
                    Some(Some(ran)) => Asking::Ran(ran),
                    Some(None) => Asking::Elsewhere,
                    None => Asking::Waiting,
                });
            }
            runtime.sleep.sleep(POLL_MS.min(left)).await;
        }
    }
}

/// `work`'s output, unless `millis` pass first; its error, if it failed.
async fn bounded<T>(
    runtime: &Runtime,
    millis: u64,
    work: impl Future<Output = Result<T, McpError>>,
) -> Option<T> {
    let work = Box::pin(work);
    match select(work, runtime.sleep.sleep(millis)).await {
        Either::Left((Ok(value), _)) => Some(value),
        Either::Left((Err(err), _)) => {
            tracing::warn!(error = ?err, "mcp: could not follow an elicitation's answer");
            None
        }
        Either::Right(_) => None,
    }
}

/// A JSON-RPC response POSTed by a client: if it answers one of the caller's asks, it is
/// recorded, and the last missing answer resumes the thread (run to its end here).
pub(crate) async fn response(app: &AppState, parts: &http::request::Parts, message: &Value) {
    let Some(id) = message.get("id").and_then(Value::as_str) else {
        return;
    };
    if let Err(err) = answer(app, parts, id, message.get("result")).await {
        tracing::warn!(request_id = id, error = ?err, "mcp: an elicitation answer was not applied");
    }
}

async fn answer(
    app: &AppState,
    parts: &http::request::Parts,
    request_id: &str,
    result: Option<&Value>,
) -> Result<(), McpError> {
    let options = run_options(parts)?;
    let principal = &options.principal;
    let Some((ask_id, asked)) = pending::record(app, principal, request_id, result).await? else {
        return Ok(());
    };
    if asked.refused || asked.answers.len() < asked.interrupts.len() {
        return Ok(());
    }
    let Some(thread) = app.engine.thread(principal, &asked.thread).await? else {
        return Ok(());
    };
    let open: Vec<Interrupt> = asked
        .interrupts
        .iter()
        .filter_map(|id| {
            let pending = thread.pending_interrupts.iter();
            pending.clone().find(|i| i.id.as_str() == id).cloned()
        })
        .collect();
    if open.len() != asked.interrupts.len() {
        // Answered already: by this ask's run (a replayed response) or elsewhere.
        return Ok(());
    }
    let Some(entries) = elicit::answers(&asked.answers, &open)? else {
        return Ok(());
    };
    let run_id = pending::run_id(&ask_id);
    let input = RunAgentInput::new(asked.thread.clone(), run_id, Vec::new()).with_resume(entries);
    match app.engine.start_shared(input, options).await {
        Ok(events) => {
            events.for_each(|_| async {}).await;
            Ok(())
        }
        // A racing twin of this response claimed first: its run is the answer.
        Err(
            CoreError::ThreadBusy { .. }
            | CoreError::RunIdConflict(_)
            | CoreError::InterruptNotPending { .. },
        ) => Ok(()),
        Err(err) => Err(err.into()),
    }
}
