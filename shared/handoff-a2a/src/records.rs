//! What the receiver stores, and where.
//!
//! | partition | key | record | written |
//! |---|---|---|---|
//! | `a2a-push#{configId}` | `config` | [`PushConfigRecord`]: thread, task, credential digests, expiry | at registration (`Absent`), when the task is bound (`Version`), deleted on revoke |
//! | `{threadId}` | `a2a#task#{taskId}` | [`TaskSnapshot`]: the merged A2A task | every applied notification, compare-and-set on its version |
//! | `{threadId}` | `a2a#seen#{configId}#{sha256(body)}` | the [`Ack`] given | with the snapshot (`Absent`), for `dedupe_ttl_ms` |
//! | `{threadId}` | `a2a#jti#{sha256(iss, jti)}` | the body digest the JWT carried | with the snapshot (`Absent`), while the JWT could still pass the `iat` check |
//! | `{threadId}` | `a2a#wake#{taskId}` | [`TaskWake`]: the latest terminal / interrupted status | with the snapshot, when the task reaches one |
//!
//! Everything a notification changes lives in the thread's own partition, so
//! one all-or-nothing commit applies the snapshot, consumes the JWT and records
//! the delivery: a duplicate can never be half-applied, and the engine can read
//! the thread record and its tasks in one consistent `get`.

use std::collections::BTreeMap;

use a2a_types::{Task, TaskState, TaskStatus};
use handoff_core::Item;
use serde::{Deserialize, Serialize};

use crate::config::JwtAuth;
use crate::error::ReceiverError;

/// Key of the subscription record in its own partition.
pub const CONFIG_KEY: &str = "config";
/// Prefix of task snapshot keys in a thread partition.
pub const TASK_PREFIX: &str = "a2a#task#";
/// Prefix of wake record keys in a thread partition.
pub const WAKE_PREFIX: &str = "a2a#wake#";

/// Partition of a subscription record.
pub fn config_partition(config_id: &str) -> String {
    format!("a2a-push#{config_id}")
}
/// Key of a task snapshot.
pub fn task_key(task_id: &str) -> String {
    format!("{TASK_PREFIX}{task_id}")
}
/// Key of a wake record.
pub fn wake_key(task_id: &str) -> String {
    format!("{WAKE_PREFIX}{task_id}")
}
/// Key of a delivery record.
pub(crate) fn seen_key(config_id: &str, body_sha256: &str) -> String {
    format!("a2a#seen#{config_id}#{body_sha256}")
}
/// Key of a consumed JWT.
pub(crate) fn jti_key(single_use_digest: &str) -> String {
    format!("a2a#jti#{single_use_digest}")
}

/// Expected `Authorization` header, credentials digested.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredAuthorization {
    /// Scheme, compared case-insensitively.
    pub scheme: String,
    /// SHA-256 (hex) of the credentials.
    pub credentials_sha256: String,
}

/// A registered push subscription.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushConfigRecord {
    /// Id in the webhook URL.
    pub config_id: String,
    /// The waiting thread.
    pub thread_id: String,
    /// The watched task (bound by the first notification when registered without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// SHA-256 (hex) of the notification token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_sha256: Option<String>,
    /// Expected `Authorization` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization: Option<StoredAuthorization>,
    /// Expected JWT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwt: Option<JwtAuth>,
    /// Every configured method must verify.
    #[serde(default)]
    pub require_all: bool,
    /// Creation time.
    pub created_at_ms: u64,
    /// Expiry.
    pub expires_at_ms: u64,
}

/// Progress of one artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactProgress {
    /// A `lastChunk` arrived (or a full snapshot of a terminal task carried it).
    pub complete: bool,
    /// Updates applied since the artifact was last replaced.
    pub chunks: u32,
}

/// The receiver's view of a remote task: the A2A task as merged from notifications.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSnapshot {
    /// The task (v1.0 shape). `TASK_STATE_UNSPECIFIED` until a status arrives.
    pub task: Task,
    /// The thread waiting on it.
    pub thread_id: String,
    /// The subscription that delivered the latest update.
    pub config_id: String,
    /// Per-artifact progress, by `artifactId`.
    #[serde(default)]
    pub artifact_progress: BTreeMap<String, ArtifactProgress>,
    /// Notifications that changed the snapshot.
    pub applied: u64,
    /// Wake records written for this task (the latest one's `seq`).
    pub wake_seq: u64,
    /// First notification.
    pub created_at_ms: u64,
    /// Latest change.
    pub updated_at_ms: u64,
}

impl TaskSnapshot {
    pub(crate) fn empty(task_id: &str, thread_id: &str, config_id: &str, now_ms: u64) -> Self {
        TaskSnapshot {
            task: Task::new(task_id, TaskStatus::new(TaskState::Unspecified)),
            thread_id: thread_id.to_owned(),
            config_id: config_id.to_owned(),
            artifact_progress: BTreeMap::new(),
            applied: 0,
            wake_seq: 0,
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
        }
    }

    /// Whether every artifact received its last chunk.
    pub fn artifacts_complete(&self) -> bool {
        self.task.artifacts.iter().all(|a| {
            self.artifact_progress
                .get(&a.artifact_id)
                .is_some_and(|p| p.complete)
        })
    }
}

/// A task reached a terminal or interrupted state: the thread waiting on it can
/// go on. One record per task, overwritten by later wakes (`seq` grows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskWake {
    /// The waiting thread.
    pub thread_id: String,
    /// The task.
    pub task_id: String,
    /// The subscription that delivered it.
    pub config_id: String,
    /// 1 for the task's first wake, then +1.
    pub seq: u64,
    /// The state reached.
    pub state: TaskState,
    /// The status that woke it.
    pub status: TaskStatus,
    /// When it was recorded.
    pub recorded_at_ms: u64,
}

/// What a notification did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// The snapshot changed.
    Applied,
    /// Nothing new (the same status, a known message...).
    Unchanged,
    /// A status after a terminal one: ignored.
    IgnoredTerminal,
    /// A status older than the stored one: ignored.
    IgnoredStale,
}

/// The acknowledgement (HTTP 200 body). A duplicate delivery gets the ack of the
/// first one again, with `duplicate: true`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ack {
    /// The task.
    pub task_id: String,
    /// What the notification did.
    pub outcome: Outcome,
    /// The task's stored state afterwards.
    pub state: TaskState,
    /// This body was delivered before; nothing was applied again.
    pub duplicate: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SeenRecord {
    pub(crate) ack: Ack,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JtiRecord {
    pub(crate) body_sha256: String,
}

pub(crate) fn encode<T: Serialize>(record: &T) -> Vec<u8> {
    serde_json::to_vec(record).expect("records always serialize")
}

pub(crate) fn decode<T: serde::de::DeserializeOwned>(item: &Item) -> Result<T, ReceiverError> {
    serde_json::from_slice(&item.value)
        .map_err(|e| ReceiverError::Store(format!("corrupt record {}: {e}", item.key)))
}
