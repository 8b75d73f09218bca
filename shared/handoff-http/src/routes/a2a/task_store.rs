//! Where a served A2A task lives: one small record naming its context (thread), its owner
//! and the runs that serve it. Its state is never stored: it is read from those runs'
//! records every time ([`super::fold`]), so a task can never disagree with its thread,
//! whatever instance died where.
//!
//! | partition | key | what |
//! |---|---|---|
//! | `\x1fa2a-task\x1f{tenant}\x1f{taskId}` | `task` | [`TaskRecord`], listed in `\x1fa2a-tasks\x1f{tenant}\x1f{owner}` at its last write's time |
//!
//! A new task's id is a digest of the tenant, the caller and the first message (its
//! `messageId`, context and parts), and its record is created under `Absent`: a retried `SendMessage` finds the
//! task its first attempt made instead of making another. A run's id is a digest of the
//! task and the message that asked for it, so a retried answer names the same run and the
//! engine replays it.

use a2a_types::Message;
use handoff_core::{Condition, IndexEntry, Principal, Store, StoreError, Write};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::A2aError;

const TASK_KEY: &str = "task";
const SEP: char = '\u{1f}';

/// A served task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskRecord {
    /// Its context: the thread its runs ran on.
    pub context_id: String,
    /// Subject of the caller who created it.
    pub owner: String,
    /// Unix ms of its creation.
    pub created_ms: u64,
    /// Unix ms of its last change made here (a run added, a cancel).
    pub updated_ms: u64,
    /// The runs serving it, oldest first.
    pub runs: Vec<String>,
    /// The messages sent to it, oldest first (its history, with the agent's replies).
    #[serde(default)]
    pub messages: Vec<Message>,
    /// `CancelTask` was asked: the task ends canceled whatever its last run did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub canceled: bool,
    /// Where its state changes are pushed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub push_configs: Vec<a2a_types::TaskPushNotificationConfig>,
}

/// A task record with the version it was read at.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    pub record: TaskRecord,
    pub version: u64,
}

/// A short hex digest of `parts`, each ended by a zero byte.
pub(crate) fn digest(parts: &[&str]) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    hex::encode(&hash.finalize()[..16])
}

/// What makes a message the same message sent again: its id and its parts. A client
/// reusing an id for other content sends a new message (the spec makes `messageId`
/// idempotency optional, and the TCK reuses ids).
pub(crate) fn message_key(message: &Message) -> String {
    let parts = serde_json::to_string(&message.parts).unwrap_or_default();
    digest(&[&message.message_id, &parts])
}

/// The id of the task a caller's first message creates (its [`message_key`], and the
/// context it names, if any).
pub(crate) fn new_task_id(principal: &Principal, message: &Message) -> String {
    let context = message.context_id.as_deref().unwrap_or("");
    let key = [
        principal.tenant.as_str(),
        &principal.subject,
        &message_key(message),
        context,
    ];
    format!("task-{}", digest(&key))
}

/// The id of the run a message (its [`message_key`]) asks for on task `task_id`.
pub(crate) fn run_id(task_id: &str, message_key: &str) -> String {
    format!("a2a-{}", digest(&[task_id, message_key]))
}

/// The partition of task `task_id` in `tenant`.
pub(crate) fn partition(tenant: &str, task_id: &str) -> String {
    format!("{SEP}a2a-task{SEP}{tenant}{SEP}{task_id}")
}

/// The listing of `owner`'s tasks in `tenant`.
pub(crate) fn owner_scope(tenant: &str, owner: &str) -> String {
    format!("{SEP}a2a-tasks{SEP}{tenant}{SEP}{owner}")
}

/// The task id of a listing hit's partition.
pub(crate) fn task_id_of(partition: &str) -> Option<&str> {
    partition.rsplit(SEP).next()
}

fn store_error(err: StoreError) -> A2aError {
    A2aError::from(handoff_core::CoreError::from(err))
}

/// Reads task `task_id` of `principal`'s tenant.
pub(crate) async fn load(
    store: &dyn Store,
    principal: &Principal,
    task_id: &str,
    now_ms: u64,
) -> Result<Option<Stored>, A2aError> {
    if task_id.is_empty() || task_id.len() > 256 || task_id.chars().any(char::is_control) {
        return Ok(None);
    }
    let item = store
        .get_one(&partition(&principal.tenant, task_id), TASK_KEY, now_ms)
        .await
        .map_err(store_error)?;
    let Some(item) = item else { return Ok(None) };
    let record = serde_json::from_slice(&item.value).map_err(A2aError::corrupt)?;
    Ok(Some(Stored {
        record,
        version: item.version,
    }))
}

/// Writes `record` as task `task_id`: created when `version` is `None` (false when it
/// already exists), else replaced if still at `version` (false when it moved on).
pub(crate) async fn save(
    store: &dyn Store,
    tenant: &str,
    task_id: &str,
    record: &TaskRecord,
    version: Option<u64>,
    now_ms: u64,
) -> Result<bool, A2aError> {
    save_with(store, tenant, task_id, record, version, now_ms, Vec::new()).await
}

/// [`save`], with `extra` writes of the task's partition in the same commit.
pub(crate) async fn save_with(
    store: &dyn Store,
    tenant: &str,
    task_id: &str,
    record: &TaskRecord,
    version: Option<u64>,
    now_ms: u64,
    extra: Vec<Write>,
) -> Result<bool, A2aError> {
    let value = serde_json::to_vec(record).map_err(A2aError::corrupt)?;
    let condition = version.map_or(Condition::Absent, Condition::Version);
    let write = Write::put(TASK_KEY, condition, value, None).indexed(IndexEntry {
        scope: owner_scope(tenant, &record.owner),
        rank: record.updated_ms,
    });
    commit_all(
        store,
        &partition(tenant, task_id),
        std::iter::once(write).chain(extra).collect(),
        now_ms,
    )
    .await
}

/// Removes task `task_id` if still at `version` (false when it moved on).
pub(crate) async fn delete(
    store: &dyn Store,
    tenant: &str,
    task_id: &str,
    version: u64,
    now_ms: u64,
) -> Result<bool, A2aError> {
    let write = Write::delete(TASK_KEY, Condition::Version(version));
    commit(store, &partition(tenant, task_id), write, now_ms).await
}

/// Commits `write`: false when its condition did not hold.
async fn commit(
    store: &dyn Store,
    partition: &str,
    write: Write,
    now_ms: u64,
) -> Result<bool, A2aError> {
    commit_all(store, partition, vec![write], now_ms).await
}

/// Commits `writes` at once: false when a condition did not hold.
async fn commit_all(
    store: &dyn Store,
    partition: &str,
    writes: Vec<Write>,
    now_ms: u64,
) -> Result<bool, A2aError> {
    match store.commit(partition, writes, now_ms).await {
        Ok(()) => Ok(true),
        Err(StoreError::ConditionFailed { .. }) => Ok(false),
        Err(err) => Err(store_error(err)),
    }
}
