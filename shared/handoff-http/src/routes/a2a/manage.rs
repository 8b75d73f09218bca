//! `GetTask`, `ListTasks`, `CancelTask` and `SubscribeToTask`.

use std::sync::Arc;

use a2a_types::{StreamResponse, Task, TaskState};
use agui_protocol::ResumeEntry;
use futures::stream::{BoxStream, StreamExt};
use handoff_core::{IndexHit, Principal, RunOptions};
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::A2aError;
use super::stream::{self, TaskIds};
use super::task_store;
use super::view;
use crate::AppState;

/// Params naming one task (`GetTask`, `CancelTask`, `SubscribeToTask`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskQuery {
    #[serde(alias = "task_id")]
    id: String,
    #[serde(default, alias = "history_length")]
    history_length: Option<i32>,
}

/// Params of `ListTasks`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListQuery {
    #[serde(default, alias = "context_id")]
    context_id: Option<String>,
    #[serde(default)]
    status: Option<Value>,
    #[serde(default, alias = "page_size")]
    page_size: Option<i64>,
    #[serde(default, alias = "page_token")]
    page_token: Option<String>,
    #[serde(default, alias = "history_length")]
    history_length: Option<i32>,
    #[serde(default, alias = "include_artifacts")]
    include_artifacts: bool,
}

/// The most tasks one listing looks through (newest first).
const LIST_SCAN: usize = 1_000;

fn check_history(history_length: Option<i32>) -> Result<(), A2aError> {
    match history_length {
        Some(n) if n < 0 => Err(A2aError::InvalidParams(format!(
            "historyLength must be 0 or more, got {n}"
        ))),
        _ => Ok(()),
    }
}

/// The `status` filter of a listing: none for an unset, unspecified or unrecognized state
/// (what the official JS client sends for "any"), else a state by name or number.
fn status_filter(status: Option<&Value>) -> Result<Option<TaskState>, A2aError> {
    match status {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s))
            if ["", "TASK_STATE_UNSPECIFIED", "UNRECOGNIZED"].contains(&s.as_str()) =>
        {
            Ok(None)
        }
        Some(Value::Number(n)) if n.as_i64() == Some(0) => Ok(None),
        Some(value) => serde_json::from_value(value.clone())
            .map(Some)
            .map_err(|_| A2aError::InvalidParams(format!("status {value} is not a task state"))),
    }
}

pub(crate) async fn get_task(
    app: &AppState,
    principal: &Principal,
    query: TaskQuery,
) -> Result<Task, A2aError> {
    check_history(query.history_length)?;
    Ok(view::read(app, principal, &query.id, query.history_length)
        .await?
        .0
        .task)
}

pub(crate) async fn list_tasks(
    app: &AppState,
    principal: &Principal,
    query: ListQuery,
) -> Result<Value, A2aError> {
    check_history(query.history_length)?;
    let status = status_filter(query.status.as_ref())?;
    let page_size = match query.page_size {
        None => 50,
        Some(n @ 1..=100) => n as usize,
        Some(n) => {
            return Err(A2aError::InvalidParams(format!(
                "pageSize must be between 1 and 100, got {n}"
            )));
        }
    };
    let skip = match query.page_token.as_deref().filter(|t| !t.is_empty()) {
        None => 0,
        Some(token) => token
            .strip_prefix("o")
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| {
                A2aError::InvalidParams("pageToken is not one this agent gave".into())
            })?,
    };
    let store = app.engine.store().as_ref();
    let now = app.engine.runtime().now_ms();
    let scope = task_store::owner_scope(&principal.tenant, &principal.subject);
    let hits: Vec<IndexHit> = store
        .list_index(&scope, None, LIST_SCAN, now)
        .await
        .map_err(|e| A2aError::from(handoff_core::CoreError::from(e)))?;
    let mut tasks = Vec::new();
    for hit in &hits {
        let Some(task_id) = task_store::task_id_of(&hit.partition) else {
            continue;
        };
        let Some(stored) = task_store::load(store, principal, task_id, now).await? else {
            continue;
        };
        if query
            .context_id
            .as_ref()
            .is_some_and(|c| *c != stored.record.context_id)
        {
            continue;
        }
        let view = match view::view_of(app, principal, task_id, &stored, query.history_length).await
        {
            Ok(view) => view,
            Err(A2aError::TaskNotFound(_)) => continue,
            Err(err) => return Err(err),
        };
        if status.is_some_and(|s| s != view.task.status.state) {
            continue;
        }
        tasks.push(view.task);
    }
    // Newest status first; the listing's rank is the last write, a status may be newer.
    tasks.sort_by(|a, b| b.status.timestamp.cmp(&a.status.timestamp));
    let total = tasks.len();
    let page: Vec<Value> = tasks
        .into_iter()
        .skip(skip)
        .take(page_size)
        .map(|task| {
            let artifacts = task.artifacts.clone();
            let mut value = serde_json::to_value(task).unwrap_or_default();
            if let Some(object) = value.as_object_mut() {
                if query.include_artifacts {
                    object.insert("artifacts".into(), json!(artifacts));
                } else {
                    object.remove("artifacts");
                }
            }
            value
        })
        .collect();
    let next = skip + page.len();
    let next_token = if next < total {
        format!("o{next}")
    } else {
        String::new()
    };
    Ok(json!({
        "tasks": page,
        "nextPageToken": next_token,
        "pageSize": page_size,
        "totalSize": total,
    }))
}

pub(crate) async fn cancel_task(
    app: &AppState,
    options: RunOptions,
    query: TaskQuery,
) -> Result<Task, A2aError> {
    let principal = options.principal.clone();
    let (view, stored) = view::read(app, &principal, &query.id, None).await?;
    let state = view.task.status.state;
    if state.is_terminal() {
        return Err(A2aError::TaskNotCancelable(format!(
            "task {} is already {}",
            query.id,
            state.as_str()
        )));
    }
    let now = app.engine.runtime().now_ms();
    let mut record = stored.record.clone();
    record.canceled = true;
    record.updated_ms = now;
    let store = app.engine.store().as_ref();
    let saved = task_store::save(
        store,
        &principal.tenant,
        &query.id,
        &record,
        Some(stored.version),
        now,
    )
    .await?;
    if !saved {
        return Err(A2aError::from(handoff_core::CoreError::ThreadChanged(
            "the task changed while it was being canceled; ask again".into(),
        )));
    }
    let context = &record.context_id;
    match (state, view.last_run.as_deref()) {
        (TaskState::InputRequired, _) => {
            // Its questions are withdrawn: a resume that cancels each, through the claim.
            let entries = view
                .folded
                .interrupts
                .iter()
                .map(|i| ResumeEntry::cancelled(i.id.clone()))
                .collect();
            let run_id = app.engine.runtime().ids.next_id("run");
            let input = agui_protocol::RunAgentInput::new(context.clone(), run_id, Vec::new())
                .with_resume(entries);
            let mut options = options;
            options.watches = vec![
                super::push::task_watch(&query.id),
                handoff_core::outbox::Watch::new(super::push::CANCEL_WATCH, &query.id),
            ];
            let events = app.engine.start_shared(input, options).await?;
            events.for_each(|_| async {}).await;
        }
        (_, Some(run_id)) => {
            app.engine.stop(&principal, context, run_id).await?;
        }
        _ => {}
    }
    Ok(view::read(app, &principal, &query.id, None).await?.0.task)
}

pub(crate) async fn subscribe(
    app: Arc<AppState>,
    principal: &Principal,
    query: TaskQuery,
) -> Result<BoxStream<'static, StreamResponse>, A2aError> {
    let (view, stored) = view::read(&app, principal, &query.id, query.history_length).await?;
    let state = view.task.status.state;
    if state.is_terminal() {
        return Err(A2aError::Unsupported(format!(
            "task {} is {}: there is nothing left to subscribe to",
            query.id,
            state.as_str()
        )));
    }
    let first = futures::stream::once(futures::future::ready(StreamResponse::Task(view.task)));
    let ids = TaskIds {
        task_id: query.id.clone(),
        context_id: stored.record.context_id.clone(),
    };
    let runtime = app.engine.runtime().clone();
    let now: Arc<dyn Fn() -> u64 + Send + Sync> = Arc::new(move || runtime.now_ms());
    let current = match (view.last_run.clone(), state) {
        (Some(run_id), TaskState::Working) => {
            let events = super::send::follow(&app, principal, &ids.context_id, &run_id).await?;
            stream::responses(ids.clone(), None, events, now.clone())
        }
        _ => futures::stream::empty().boxed(),
    };
    let later = watch(app, principal.clone(), ids, view.last_run, now);
    Ok(first.chain(current).chain(later).boxed())
}

/// How often a subscription to a task that waits (for input, say) looks for its next run.
const WATCH_POLL_MS: u64 = 500;
/// How long a subscription waits for a task that does not move before it closes.
const WATCH_IDLE_MS: u64 = 10 * 60_000;

/// The runs a task goes on with after `seen`, whoever starts them, until it ends (or
/// idles for [`WATCH_IDLE_MS`]): the stream stays open while the task is not terminal.
fn watch(
    app: Arc<AppState>,
    principal: Principal,
    ids: TaskIds,
    seen: Option<String>,
    now: Arc<dyn Fn() -> u64 + Send + Sync>,
) -> BoxStream<'static, StreamResponse> {
    let since = now();
    futures::stream::unfold(Some((seen, since)), move |state| {
        let (app, principal, ids, now) = (app.clone(), principal.clone(), ids.clone(), now.clone());
        async move {
            let (seen, since) = state?;
            loop {
                if now().saturating_sub(since) > WATCH_IDLE_MS {
                    return None;
                }
                app.engine.runtime().sleep.sleep(WATCH_POLL_MS).await;
                let (view, _) = view::read(&app, &principal, &ids.task_id, None)
                    .await
                    .ok()?;
                if view.last_run != seen {
                    let run = view.last_run.clone()?;
                    let events = super::send::follow(&app, &principal, &ids.context_id, &run)
                        .await
                        .ok()?;
                    let responses = stream::responses(ids.clone(), None, events, now.clone());
                    return Some((responses, Some((Some(run), now()))));
                }
                if view.task.status.state.is_terminal() {
                    return None;
                }
            }
        }
    })
    .flatten()
    .boxed()
}
