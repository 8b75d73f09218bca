//! The push-notification-config methods: a task's webhooks, kept in its record.

use a2a_types::TaskPushNotificationConfig;
use handoff_auth::url_guard::check_outbound_url;
use handoff_core::Principal;
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::A2aError;
use super::push::A2A_PUSH_KIND;
use super::task_store::{self, TaskRecord};
use super::view;
use crate::AppState;

/// The most webhooks one task keeps.
const MAX_CONFIGS: usize = 10;

/// Params naming one config (`Get…`, `Delete…`) or a task's (`List…`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ConfigQuery {
    #[serde(alias = "task_id")]
    task_id: String,
    #[serde(default)]
    id: Option<String>,
}

/// Whether this host sends pushes at all (the card's `pushNotifications`).
pub(crate) fn supported(app: &AppState) -> bool {
    app.engine
        .outbox()
        .is_some_and(|o| o.delivers(A2A_PUSH_KIND))
}

fn require(app: &AppState) -> Result<(), A2aError> {
    if supported(app) {
        Ok(())
    } else {
        Err(A2aError::PushNotSupported)
    }
}

/// Checks `config` and gives it an id and its task's: ready to keep in the task's record.
pub(crate) fn admit(
    app: &AppState,
    task_id: &str,
    mut config: TaskPushNotificationConfig,
) -> Result<TaskPushNotificationConfig, A2aError> {
    require(app)?;
    check_outbound_url(&config.url, app.config.a2a_allow_loopback)
        .map_err(|why| A2aError::InvalidParams(format!("push url refused: {why}")))?;
    if config.id.as_deref().is_none_or(str::is_empty) {
        // Named by what it is, so a retried send registers it once.
        config.id = Some(format!(
            "push-{}",
            task_store::digest(&[task_id, &config.url])
        ));
    }
    config.task_id = Some(task_id.to_owned());
    config.tenant = None;
    Ok(config)
}

/// `record` with `config` added (replacing one of the same id).
pub(crate) fn with_config(
    mut record: TaskRecord,
    config: TaskPushNotificationConfig,
) -> Result<TaskRecord, A2aError> {
    record.push_configs.retain(|c| c.id != config.id);
    if record.push_configs.len() >= MAX_CONFIGS {
        return Err(A2aError::InvalidParams(format!(
            "a task keeps at most {MAX_CONFIGS} push configs"
        )));
    }
    record.push_configs.push(config);
    Ok(record)
}

/// Adds `config` to task `task_id` (read as `stored`) and, in the same commit, the notice
/// that sends it the task's current status (every time: a webhook registered after the task
/// last changed still gets a delivery); makes that delivery's first attempt.
pub(crate) async fn register(
    app: &AppState,
    principal: &Principal,
    task_id: &str,
    mut stored: task_store::Stored,
    config: TaskPushNotificationConfig,
) -> Result<task_store::Stored, A2aError> {
    let store = app.engine.store().as_ref();
    let now = app.engine.runtime().now_ms();
    let config_id = config.id.clone().unwrap_or_default();
    for _ in 0..3 {
        // Registered again (a retried send): its current status goes out again too, as a
        // duplicate receivers drop, so a config never goes without a delivery.
        let view = view::view_of(app, principal, task_id, &stored, Some(0)).await?;
        let record = with_config(stored.record.clone(), config.clone())?;
        let item = super::push::current_status(&principal.tenant, &view.task, &config_id, now);
        let extra = vec![item.write(handoff_core::Condition::Absent, now)];
        let version = Some(stored.version);
        let tenant = &principal.tenant;
        if task_store::save_with(store, tenant, task_id, &record, version, now, extra).await? {
            if let Some(outbox) = app.engine.outbox() {
                outbox
                    .deliver_now(&task_store::partition(tenant, task_id), &[item.key()])
                    .await;
            }
            return Ok(task_store::Stored {
                record,
                version: stored.version + 1,
            });
        }
        stored = task_store::load(store, principal, task_id, now)
            .await?
            .ok_or_else(|| A2aError::TaskNotFound(task_id.to_owned()))?;
    }
    Err(A2aError::changed_meanwhile())
}

pub(crate) async fn create(
    app: &AppState,
    principal: &Principal,
    raw: Value,
) -> Result<Value, A2aError> {
    require(app)?;
    let config: TaskPushNotificationConfig =
        serde_json::from_value(raw).map_err(|e| A2aError::InvalidParams(e.to_string()))?;
    let task_id = config
        .task_id
        .clone()
        .ok_or_else(|| A2aError::InvalidParams("taskId is required".into()))?;
    let config = admit(app, &task_id, config)?;
    let (_, stored) = view::read(app, principal, &task_id, Some(0)).await?;
    register(app, principal, &task_id, stored, config.clone()).await?;
    Ok(serde_json::to_value(&config).unwrap_or_default())
}

pub(crate) async fn get(
    app: &AppState,
    principal: &Principal,
    query: ConfigQuery,
) -> Result<Value, A2aError> {
    require(app)?;
    let (_, stored) = view::read(app, principal, &query.task_id, Some(0)).await?;
    let config = stored
        .record
        .push_configs
        .into_iter()
        .find(|c| query.id.is_none() || c.id == query.id)
        .ok_or_else(|| A2aError::TaskNotFound(format!("{} (push config)", query.task_id)))?;
    Ok(serde_json::to_value(config).unwrap_or_default())
}

pub(crate) async fn list(
    app: &AppState,
    principal: &Principal,
    query: ConfigQuery,
) -> Result<Value, A2aError> {
    require(app)?;
    let (_, stored) = view::read(app, principal, &query.task_id, Some(0)).await?;
    Ok(json!({"configs": stored.record.push_configs, "nextPageToken": ""}))
}

pub(crate) async fn delete(
    app: &AppState,
    principal: &Principal,
    query: ConfigQuery,
) -> Result<Value, A2aError> {
    require(app)?;
    let now = app.engine.runtime().now_ms();
    for _ in 0..3 {
        let (_, stored) = view::read(app, principal, &query.task_id, Some(0)).await?;
        let mut record = stored.record;
        let before = record.push_configs.len();
        record
            .push_configs
            .retain(|c| query.id.is_some() && c.id != query.id);
        if record.push_configs.len() == before {
            // Deleting is idempotent: a config already gone is a success.
            return Ok(json!({}));
        }
        let store = app.engine.store().as_ref();
        let version = Some(stored.version);
        if task_store::save(
            store,
            &principal.tenant,
            &query.task_id,
            &record,
            version,
            now,
        )
        .await?
        {
            return Ok(json!({}));
        }
    }
    Err(A2aError::changed_meanwhile())
}
