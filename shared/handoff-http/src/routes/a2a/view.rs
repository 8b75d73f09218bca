//! A served task as A2A shows it, read from its runs' records.

use a2a_types::{Message, Task, TaskState, TaskStatus};
use handoff_core::time_fmt::format_ms;
use handoff_core::{CoreError, Principal};

use super::error::A2aError;
use super::fold::{Folded, agent_message};
use super::task_store::{self, Stored};
use crate::AppState;

/// A task and what its runs amount to.
pub(crate) struct TaskView {
    pub task: Task,
    pub folded: Folded,
    /// The run serving it now (its last).
    pub last_run: Option<String>,
}

/// Reads task `task_id` as `principal` may see it: [`A2aError::TaskNotFound`] when it does
/// not exist in the caller's tenant or the caller may not read its thread.
pub(crate) async fn read(
    app: &AppState,
    principal: &Principal,
    task_id: &str,
    history_length: Option<i32>,
) -> Result<(TaskView, Stored), A2aError> {
    let now = app.engine.runtime().now_ms();
    let stored = task_store::load(app.engine.store().as_ref(), principal, task_id, now)
        .await?
        .ok_or_else(|| A2aError::TaskNotFound(task_id.to_owned()))?;
    let view = view_of(app, principal, task_id, &stored, history_length).await?;
    Ok((view, stored))
}

/// The view of a task record already read.
pub(crate) async fn view_of(
    app: &AppState,
    principal: &Principal,
    task_id: &str,
    stored: &Stored,
    history_length: Option<i32>,
) -> Result<TaskView, A2aError> {
    let record = &stored.record;
    let mut folded = Folded::default();
    let mut last_run = None;
    let mut finished_ms = record.updated_ms;
    let mut hidden = false;
    for run_id in &record.runs {
        let events = match app
            .engine
            .run_events(principal, &record.context_id, run_id)
            .await
        {
            Ok(Some((run, events))) => {
                finished_ms = finished_ms.max(run.started_at_ms);
                events
            }
            Ok(None) => continue,
            // Another's run on a thread this caller may no longer read (an approver once
            // the question is answered): shown without it, as `POST /agent` would.
            Err(CoreError::ThreadNotFound | CoreError::Forbidden(_)) => {
                hidden = true;
                continue;
            }
            Err(err) => return Err(err.into()),
        };
        last_run = Some(run_id.clone());
        for event in &events {
            folded.push(event);
        }
    }
    if hidden && last_run.is_none() {
        return Err(A2aError::TaskNotFound(task_id.to_owned()));
    }
    if folded.task_state() == TaskState::InputRequired
        && let Some((run_id, events)) = answered_elsewhere(app, principal, record, &folded).await?
    {
        last_run = Some(run_id);
        for event in &events {
            folded.push(event);
        }
    }
    let mut state = folded.task_state();
    if record.canceled && state != TaskState::Working {
        state = TaskState::Canceled;
    }
    let status_message =
        (!folded.status_parts.is_empty() && state != TaskState::Canceled).then(|| {
            agent_message(
                format!("status-{}", last_run.as_deref().unwrap_or(task_id)),
                task_id,
                &record.context_id,
                folded.status_parts.clone(),
            )
        });
    let mut history: Vec<Message> = record.messages.clone();
    if let Some(limit) = history_length.filter(|n| *n >= 0) {
        let keep = usize::try_from(limit).unwrap_or(0);
        history.drain(..history.len().saturating_sub(keep));
    }
    let task = Task {
        id: task_id.to_owned(),
        context_id: Some(record.context_id.clone()),
        status: TaskStatus {
            state,
            message: status_message,
            timestamp: Some(format_ms(finished_ms)),
        },
        artifacts: folded.all_artifacts(),
        history,
        metadata: None,
    };
    Ok(TaskView {
        task,
        folded,
        last_run,
    })
}

/// The run that answered the task's interrupts on another path (the console, AG-UI), when
/// one did: the thread's latest run, if it is a resume this task does not know yet and the
/// task's interrupts are no longer pending.
async fn answered_elsewhere(
    app: &AppState,
    principal: &Principal,
    record: &super::task_store::TaskRecord,
    folded: &Folded,
) -> Result<Option<(String, Vec<agui_protocol::Event>)>, A2aError> {
    let thread = match app.engine.thread(principal, &record.context_id).await {
        Ok(Some(thread)) => thread,
        Ok(None) | Err(CoreError::ThreadNotFound | CoreError::Forbidden(_)) => return Ok(None),
        Err(err) => return Err(err.into()),
    };
    let still_pending = thread
        .pending_interrupts
        .iter()
        .any(|p| folded.interrupts.iter().any(|i| i.id == p.id));
    let Some(last) = thread.last_run.filter(|_| !still_pending) else {
        return Ok(None);
    };
    let run_id = last.run_id.as_str().to_owned();
    if record.runs.contains(&run_id) {
        return Ok(None);
    }
    match app
        .engine
        .run_events(principal, &record.context_id, &run_id)
        .await?
    {
        Some((run, events)) if run.resume_key.is_some() => Ok(Some((run_id, events))),
        _ => Ok(None),
    }
}
