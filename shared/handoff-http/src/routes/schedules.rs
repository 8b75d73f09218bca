//! `POST /schedules`, `GET /schedules`, `DELETE /schedules/{id}`: the tenant's schedules
//! (`handoff_core::schedule`), managed by their owner or role `admin`.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Request, State};
use handoff_core::codes;
use handoff_core::schedule::{self, Cadence, Schedule};
use handoff_core::{CoreError, Principal};
use http::{Extensions, StatusCode};
use serde_json::{Map, Value, json};

use super::json_body::read_json_body;
use super::principal;
use crate::ADMIN_ROLE;
use crate::AppState;
use crate::error::ApiError;

/// A schedule as the routes answer it.
pub(crate) fn wire(schedule: &Schedule) -> Value {
    let mut view = json!({
        "id": schedule.id,
        "agentId": schedule.agent_id,
        "messages": schedule.messages,
        "thread": schedule.thread_id.as_deref().unwrap_or("new"),
        "createdBy": schedule.owner.subject,
        "createdAt": schedule.created_ms,
        "nextDueAt": schedule.next_due_ms,
        "ticks": schedule.ticks,
    });
    match &schedule.cadence {
        Cadence::Cron(pattern) => view["cron"] = json!(pattern),
        Cadence::EverySeconds(seconds) => view["everySeconds"] = json!(seconds),
    }
    if let Some(run) = &schedule.last_run {
        view["lastRun"] = json!({
            "tickAt": run.tick_ms,
            "claimedAt": run.claimed_ms,
            "threadId": run.thread_id,
            "runId": run.run_id,
        });
    }
    view
}

/// Whether `principal` manages `schedule`: its owner, or an admin of its tenant.
fn manages(principal: &Principal, schedule: &Schedule) -> bool {
    principal.has_role(ADMIN_ROLE) || schedule.owner.subject == principal.subject
}

fn field<'a>(body: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    body.get(name).filter(|v| !v.is_null())
}

/// The schedule a `POST /schedules` body defines, for `owner`, created now.
fn parse(
    app: &AppState,
    body: &[u8],
    owner: Principal,
    id: String,
    now_ms: u64,
) -> Result<Schedule, ApiError> {
    let invalid = |message: &str| ApiError::from(schedule::invalid(message));
    let body: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::new(codes::INVALID_INPUT, format!("malformed JSON: {e}")))?;
    let Value::Object(body) = body else {
        return Err(invalid("the body must be a JSON object"));
    };
    let cron = match field(&body, "cron") {
        None => None,
        Some(Value::String(cron)) => Some(cron.as_str()),
        Some(_) => return Err(invalid("cron must be a string of 5 fields")),
    };
    let every = match field(&body, "everySeconds") {
        None => None,
        Some(value) => Some(
            value
                .as_u64()
                .ok_or_else(|| invalid("everySeconds must be a whole number of seconds"))?,
        ),
    };
    let cadence = Cadence::parse(cron, every)?;
    let agent_id = field(&body, "agentId")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("agentId (a string) is required"))?;
    if agent_id != app.engine.agent_name() && !app.agents.contains_key(agent_id) {
        return Err(ApiError::new(
            codes::AGENT_NOT_FOUND,
            format!("no agent {agent_id:?} is served here"),
        ));
    }
    let messages = match field(&body, "messages") {
        Some(Value::Array(messages)) => messages.clone(),
        _ => return Err(invalid("messages (an array of AG-UI messages) is required")),
    };
    schedule::check_messages(&messages)?;
    let thread_id = match field(&body, "thread").and_then(Value::as_str) {
        Some("new") => None,
        Some(thread_id) => {
            schedule::check_thread_id(thread_id)?;
            Some(thread_id.to_owned())
        }
        None => return Err(invalid(r#"thread must be "new" or a thread id"#)),
    };
    Ok(Schedule {
        id,
        owner,
        agent_id: agent_id.to_owned(),
        next_due_ms: cadence.first_due(now_ms)?,
        cadence,
        messages,
        thread_id,
        created_ms: now_ms,
        ticks: 0,
        last_run: None,
    })
}

/// `POST /schedules` → 201 with the schedule.
pub(crate) async fn create_schedule(
    State(app): State<Arc<AppState>>,
    request: Request,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let (parts, body) = request.into_parts();
    let owner = principal(&parts.extensions)?;
    let body = read_json_body(&app, &parts.headers, body).await?;
    let runtime = app.engine.runtime();
    let now = runtime.now_ms();
    let schedule = parse(&app, &body, owner, runtime.ids.next_id("sched"), now)?;
    schedule::create(app.engine.store().as_ref(), &schedule, now).await?;
    tracing::info!(
        schedule = %schedule.id,
        tenant = %schedule.owner.tenant,
        subject = %schedule.owner.subject,
        next_due_ms = schedule.next_due_ms,
        "schedule created"
    );
    Ok((StatusCode::CREATED, Json(wire(&schedule))))
}

/// `GET /schedules` → `{"schedules": [...]}`: the caller's own, every one of the tenant's
/// for role `admin`.
pub(crate) async fn list_schedules(
    State(app): State<Arc<AppState>>,
    extensions: Extensions,
) -> Result<Json<Value>, ApiError> {
    let principal = principal(&extensions)?;
    let now = app.engine.runtime().now_ms();
    let all = schedule::list(app.engine.store().as_ref(), &principal.tenant, now).await?;
    let schedules: Vec<Value> = all
        .iter()
        .filter(|s| manages(&principal, s))
        .map(wire)
        .collect();
    Ok(Json(json!({ "schedules": schedules })))
}

/// `DELETE /schedules/{id}` → `{"id", "deleted": true}`; 404 `SCHEDULE_NOT_FOUND` for
/// one that does not exist or that the caller does not manage.
pub(crate) async fn delete_schedule(
    State(app): State<Arc<AppState>>,
    extensions: Extensions,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let principal = principal(&extensions)?;
    let store = app.engine.store().as_ref();
    let now = app.engine.runtime().now_ms();
    let found = schedule::get(store, &principal.tenant, &id, now).await?;
    if !found.as_ref().is_some_and(|s| manages(&principal, s)) {
        return Err(ApiError::from(CoreError::Reported {
            code: codes::SCHEDULE_NOT_FOUND,
            message: format!("no schedule {id:?}"),
            retryable: false,
        }));
    }
    schedule::delete(store, &principal.tenant, &id, now).await?;
    tracing::info!(schedule = %id, tenant = %principal.tenant, "schedule deleted");
    Ok(Json(json!({ "id": id, "deleted": true })))
}
