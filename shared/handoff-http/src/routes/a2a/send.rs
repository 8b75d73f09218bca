//! `SendMessage` and `SendStreamingMessage`: a new task, a retried message, or the answer
//! to an input-required task, each one run through the engine's claim.

use std::sync::Arc;

use a2a_types::{Message, SendMessageRequest, StreamResponse, TaskState};
use agui_protocol::{ResumeEntry, RunAgentInput};
use futures::stream::{BoxStream, StreamExt};
use handoff_core::{CoreError, Principal, RunOptions};

use super::error::A2aError;
use super::stream::{self, TaskIds};
use super::task_store::{self, Stored, TaskRecord};
use super::view::{self, TaskView};
use super::{input, submitted};
use crate::AppState;

/// What a send answers with.
pub(crate) enum Sent {
    /// `SendMessage`'s result: `{"task"}` or `{"message"}`.
    Result(Box<a2a_types::SendMessageResponse>),
    /// `SendStreamingMessage`'s stream.
    Stream(BoxStream<'static, StreamResponse>),
}

/// Serves one send. `streaming` picks the answer's form.
pub(crate) async fn send(
    app: Arc<AppState>,
    mut options: RunOptions,
    request: SendMessageRequest,
    streaming: bool,
) -> Result<Sent, A2aError> {
    let message = request.message;
    input::check(&message)?;
    let principal = options.principal.clone();
    let now = app.engine.runtime().now_ms();
    let history_length = request
        .configuration
        .as_ref()
        .and_then(|c| c.history_length);
    let return_immediately = request
        .configuration
        .as_ref()
        .is_some_and(|c| c.return_immediately);
    let push = request
        .configuration
        .as_ref()
        .and_then(|c| c.task_push_notification_config.clone());
    let (task_id, stored, start) = match &message.task_id {
        Some(task_id) => answer(&app, &principal, task_id, &message, push, now).await?,
        None => create(&app, &principal, &message, push, now).await?,
    };
    options.watches.push(super::push::task_watch(&task_id));
    let run_id = task_store::run_id(&task_id, &task_store::message_key(&message));
    let ids = TaskIds {
        task_id: task_id.clone(),
        context_id: stored.record.context_id.clone(),
    };
    let events = match start {
        Some(input) => match app.engine.start_shared(input, options).await {
            Ok(events) => events.map(|e| (*e).clone()).boxed(),
            Err(err) => {
                undo(&app, &principal, &task_id, &run_id).await;
                return Err(err.into());
            }
        },
        // A retry of a message whose run already started: follow that run.
        None => follow(&app, &principal, &stored.record.context_id, &run_id).await?,
    };
    if streaming {
        let opening = submitted(&task_id, &stored.record);
        let now = clock(&app);
        return Ok(Sent::Stream(stream::responses(
            ids,
            Some(opening),
            events,
            now,
        )));
    }
    if return_immediately && app.engine.runtime().spawner.is_some() {
        // The run goes on in the background; the task is answered once it exists.
        drop(events);
        let view = view::view_of(&app, &principal, &task_id, &stored, history_length).await?;
        return Ok(Sent::Result(Box::new(
            a2a_types::SendMessageResponse::Task(view.task),
        )));
    }
    events.for_each(|_| async {}).await;
    let stored = task_store::load(app.engine.store().as_ref(), &principal, &task_id, now)
        .await?
        .unwrap_or(stored);
    let TaskView { task, folded, .. } =
        view::view_of(&app, &principal, &task_id, &stored, history_length).await?;
    if let (Some(mut reply), TaskState::Completed) = (folded.reply, task.status.state) {
        reply.context_id = Some(stored.record.context_id.clone());
        return Ok(Sent::Result(Box::new(
            a2a_types::SendMessageResponse::Message(reply),
        )));
    }
    Ok(Sent::Result(Box::new(
        a2a_types::SendMessageResponse::Task(task),
    )))
}

fn clock(app: &AppState) -> Arc<dyn Fn() -> u64 + Send + Sync> {
    let runtime = app.engine.runtime().clone();
    Arc::new(move || runtime.now_ms())
}

/// A message without a task: a new task on its context (a new one when it names none).
/// A retry of the same `messageId` finds the task its first attempt made.
async fn create(
    app: &AppState,
    principal: &Principal,
    message: &Message,
    push: Option<a2a_types::TaskPushNotificationConfig>,
    now: u64,
) -> Result<(String, Stored, Option<RunAgentInput>), A2aError> {
    let task_id = task_store::new_task_id(principal, message);
    let push = push
        .map(|config| super::push_config::admit(app, &task_id, config))
        .transpose()?;
    let store = app.engine.store().as_ref();
    if let Some(stored) = task_store::load(store, principal, &task_id, now).await? {
        return replay(app, principal, task_id, stored, message, push).await;
    }
    let context_id = message
        .context_id
        .clone()
        .unwrap_or_else(|| app.engine.runtime().ids.next_id("ctx"));
    let run_id = task_store::run_id(&task_id, &task_store::message_key(message));
    let mut sent = message.clone();
    sent.task_id = Some(task_id.clone());
    sent.context_id = Some(context_id.clone());
    let record = TaskRecord {
        context_id: context_id.clone(),
        owner: principal.subject.clone(),
        created_ms: now,
        updated_ms: now,
        runs: vec![run_id.clone()],
        messages: vec![sent],
        canceled: false,
        push_configs: push.clone().into_iter().collect(),
    };
    if !task_store::save(store, &principal.tenant, &task_id, &record, None, now).await? {
        // The same message, sent twice at once: the other one made the task.
        let stored = task_store::load(store, principal, &task_id, now)
            .await?
            .ok_or_else(|| A2aError::TaskNotFound(task_id.clone()))?;
        return replay(app, principal, task_id, stored, message, push).await;
    }
    let input = new_turn(app, principal, &context_id, &run_id, message).await?;
    let stored = Stored { record, version: 1 };
    Ok((task_id, stored, Some(input)))
}

/// A retried message: the task it made, whose first run is started again only when it
/// never was (the first attempt died before the engine claimed the thread).
async fn replay(
    app: &AppState,
    principal: &Principal,
    task_id: String,
    stored: Stored,
    message: &Message,
    push: Option<a2a_types::TaskPushNotificationConfig>,
) -> Result<(String, Stored, Option<RunAgentInput>), A2aError> {
    // The retry's push config is registered too (the same config id replaces itself).
    let stored = match push {
        Some(config) => {
            super::push_config::register(app, principal, &task_id, stored, config).await?
        }
        None => stored,
    };
    let record = &stored.record;
    let run_id = task_store::run_id(&task_id, &task_store::message_key(message));
    let started = app
        .engine
        .run_events(principal, &record.context_id, &run_id)
        .await;
    match started {
        Ok(Some(_)) => Ok((task_id, stored, None)),
        Ok(None) | Err(handoff_core::CoreError::ThreadNotFound) => {
            let context_id = record.context_id.clone();
            let input = new_turn(app, principal, &context_id, &run_id, message).await?;
            Ok((task_id, stored, Some(input)))
        }
        Err(err) => Err(err.into()),
    }
}

/// The run input of a new turn: the thread's history and state, plus `message`.
async fn new_turn(
    app: &AppState,
    principal: &Principal,
    context_id: &str,
    run_id: &str,
    message: &Message,
) -> Result<RunAgentInput, A2aError> {
    let thread = app.engine.thread(principal, context_id).await?;
    let (mut messages, state) = thread.map(|t| (t.messages, t.state)).unwrap_or_default();
    messages.push(agui_protocol::Message::user(
        message.message_id.clone(),
        input::user_text(message),
    ));
    let mut input = RunAgentInput::new(context_id.to_owned(), run_id.to_owned(), messages);
    input.state = Some(state);
    Ok(input)
}

/// A message on an existing task: the answer to its interrupts.
async fn answer(
    app: &AppState,
    principal: &Principal,
    task_id: &str,
    message: &Message,
    push: Option<a2a_types::TaskPushNotificationConfig>,
    now: u64,
) -> Result<(String, Stored, Option<RunAgentInput>), A2aError> {
    let push = push
        .map(|config| super::push_config::admit(app, task_id, config))
        .transpose()?;
    let store = app.engine.store().as_ref();
    let run_id = task_store::run_id(task_id, &task_store::message_key(message));
    for _ in 0..3 {
        let (view, stored) = view::read(app, principal, task_id, None).await?;
        let record = &stored.record;
        if message
            .context_id
            .as_ref()
            .is_some_and(|c| *c != record.context_id)
        {
            return Err(A2aError::InvalidParams(format!(
                "task {task_id} belongs to another contextId"
            )));
        }
        let retried = record.runs.contains(&run_id);
        if retried {
            let ran = app
                .engine
                .run_events(principal, &record.context_id, &run_id)
                .await?;
            if ran.is_some() {
                return Ok((task_id.to_owned(), stored, None));
            }
        }
        if !retried && let Some(id) = answered_elsewhere(&view, record, message) {
            return Err(CoreError::InterruptNotPending { id }.into());
        }
        let entries: Vec<ResumeEntry> = match view.task.status.state {
            _ if retried => input::answers(message, &view.folded.interrupts)?,
            TaskState::InputRequired => input::answers(message, &view.folded.interrupts)?,
            state if state.is_terminal() => {
                return Err(A2aError::Unsupported(format!(
                    "task {task_id} is {}: a finished task takes no more messages",
                    state.as_str()
                )));
            }
            _ => {
                return Err(A2aError::Unsupported(format!(
                    "task {task_id} is working: send once it asks for input"
                )));
            }
        };
        let input = RunAgentInput::new(record.context_id.clone(), run_id.clone(), Vec::new())
            .with_resume(entries);
        if retried {
            return Ok((task_id.to_owned(), stored, Some(input)));
        }
        let mut next = record.clone();
        next.runs.push(run_id.clone());
        next.updated_ms = now;
        let mut sent = message.clone();
        sent.task_id = Some(task_id.to_owned());
        sent.context_id = Some(record.context_id.clone());
        next.messages.push(sent);
        if let Some(config) = push.clone() {
            next = super::push_config::with_config(next, config)?;
        }
        let version = Some(stored.version);
        if task_store::save(store, &principal.tenant, task_id, &next, version, now).await? {
            let stored = Stored {
                record: next,
                version: stored.version + 1,
            };
            return Ok((task_id.to_owned(), stored, Some(input)));
        }
    }
    Err(A2aError::from(handoff_core::CoreError::ThreadChanged(
        "the task changed while the answer was recorded; send it again".into(),
    )))
}

/// The interrupt `message` answers, when the task's interrupts were answered on another
/// path (AG-UI, the console) first: that answer lost the race and is told so, as
/// `POST /agent` would tell it (`INTERRUPT_NOT_PENDING`), whatever state the other answer's
/// run has reached.
fn answered_elsewhere(view: &TaskView, record: &TaskRecord, message: &Message) -> Option<String> {
    let last = view.last_run.as_ref()?;
    if record.runs.contains(last) {
        return None;
    }
    let entries = input::answers(message, &[]).ok()?;
    entries.first().map(|e| e.interrupt_id.to_string())
}

/// Takes back what a refused start recorded (its run and message, or the whole task when
/// that was its first run), so the task shows no run that never ran.
async fn undo(app: &AppState, principal: &Principal, task_id: &str, run_id: &str) {
    let store = app.engine.store().as_ref();
    let now = app.engine.runtime().now_ms();
    let Ok(Some(stored)) = task_store::load(store, principal, task_id, now).await else {
        return;
    };
    let mut record = stored.record;
    record.runs.retain(|r| r != run_id);
    record
        .messages
        .retain(|m| task_store::run_id(task_id, &task_store::message_key(m)) != run_id);
    let tenant = &principal.tenant;
    let outcome = if record.runs.is_empty() {
        task_store::delete(store, tenant, task_id, stored.version, now).await
    } else {
        task_store::save(store, tenant, task_id, &record, Some(stored.version), now).await
    };
    if let Err(err) = outcome {
        tracing::warn!(task_id, error = ?err, "a2a: a refused run stays listed on its task");
    }
}

/// The events of run `run_id`, from wherever it runs or ran.
pub(crate) async fn follow(
    app: &AppState,
    principal: &Principal,
    context_id: &str,
    run_id: &str,
) -> Result<BoxStream<'static, agui_protocol::Event>, A2aError> {
    let frames = app
        .engine
        .follow_run(principal, context_id, run_id, 0)
        .await?;
    Ok(match frames {
        Some(frames) => frames.map(|(_, event)| event).boxed(),
        None => futures::stream::empty().boxed(),
    })
}
