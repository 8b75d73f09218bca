//! `Task`, `TaskStatus`, `TaskState` and `Artifact`.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::Metadata;
use crate::message::{Message, Part};
use crate::serde_util::null_default;

/// Lifecycle state of a task.
///
/// Written as the v1.0 ProtoJSON name (`TASK_STATE_WORKING`); read from that,
/// from the v0.3 spelling (`working`, `input-required`, `unknown`) and from the
/// ProtoJSON integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TaskState {
    /// Unknown or indeterminate (v0.3 `unknown`).
    #[default]
    Unspecified,
    /// Submitted and acknowledged.
    Submitted,
    /// Being processed.
    Working,
    /// Finished successfully. Terminal.
    Completed,
    /// Finished with an error. Terminal.
    Failed,
    /// Canceled before completion. Terminal.
    Canceled,
    /// The agent needs more input. Interrupted.
    InputRequired,
    /// The agent will not perform the task. Terminal.
    Rejected,
    /// The agent needs authentication. Interrupted.
    AuthRequired,
}

impl TaskState {
    /// Every state, in ProtoJSON number order.
    pub const ALL: [TaskState; 9] = [
        TaskState::Unspecified,
        TaskState::Submitted,
        TaskState::Working,
        TaskState::Completed,
        TaskState::Failed,
        TaskState::Canceled,
        TaskState::InputRequired,
        TaskState::Rejected,
        TaskState::AuthRequired,
    ];

    /// Completed, failed, canceled or rejected: nothing follows.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        )
    }

    /// Input required or auth required: the task waits for the client.
    pub fn is_interrupted(self) -> bool {
        matches!(self, TaskState::InputRequired | TaskState::AuthRequired)
    }

    /// The v1.0 wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Unspecified => "TASK_STATE_UNSPECIFIED",
            TaskState::Submitted => "TASK_STATE_SUBMITTED",
            TaskState::Working => "TASK_STATE_WORKING",
            TaskState::Completed => "TASK_STATE_COMPLETED",
            TaskState::Failed => "TASK_STATE_FAILED",
            TaskState::Canceled => "TASK_STATE_CANCELED",
            TaskState::InputRequired => "TASK_STATE_INPUT_REQUIRED",
            TaskState::Rejected => "TASK_STATE_REJECTED",
            TaskState::AuthRequired => "TASK_STATE_AUTH_REQUIRED",
        }
    }

    /// The v0.3 wire name.
    pub fn as_v03_str(self) -> &'static str {
        match self {
            TaskState::Unspecified => "unknown",
            TaskState::Submitted => "submitted",
            TaskState::Working => "working",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Canceled => "canceled",
            TaskState::InputRequired => "input-required",
            TaskState::Rejected => "rejected",
            TaskState::AuthRequired => "auth-required",
        }
    }

    /// Reads any accepted spelling (v1.0 name, v0.3 name).
    pub fn parse(text: &str) -> Option<TaskState> {
        TaskState::ALL
            .into_iter()
            .find(|s| s.as_str() == text || s.as_v03_str() == text)
    }

    /// The ProtoJSON number.
    pub fn number(self) -> u8 {
        match self {
            TaskState::Unspecified => 0,
            TaskState::Submitted => 1,
            TaskState::Working => 2,
            TaskState::Completed => 3,
            TaskState::Failed => 4,
            TaskState::Canceled => 5,
            TaskState::InputRequired => 6,
            TaskState::Rejected => 7,
            TaskState::AuthRequired => 8,
        }
    }

    /// From a ProtoJSON number.
    pub fn from_number(number: u64) -> Option<TaskState> {
        TaskState::ALL
            .into_iter()
            .find(|s| u64::from(s.number()) == number)
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for TaskState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TaskState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StateVisitor;
        impl Visitor<'_> for StateVisitor {
            type Value = TaskState;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a task state (TASK_STATE_* or a v0.3 name)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TaskState, E> {
                TaskState::parse(v)
                    .ok_or_else(|| E::custom(format_args!("unknown task state `{v}`")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<TaskState, E> {
                TaskState::from_number(v)
                    .ok_or_else(|| E::custom(format_args!("unknown task state number {v}")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<TaskState, E> {
                u64::try_from(v)
                    .ok()
                    .and_then(TaskState::from_number)
                    .ok_or_else(|| E::custom(format_args!("unknown task state number {v}")))
            }
        }
        deserializer.deserialize_any(StateVisitor)
    }
}

/// Where a task stands, with an optional message and time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// A message about the status (e.g. the question of an input-required task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// RFC 3339 time the status was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

impl TaskStatus {
    /// A status with only a state.
    pub fn new(state: TaskState) -> Self {
        TaskStatus {
            state,
            message: None,
            timestamp: None,
        }
    }
}

/// The unit of work: a status, its outputs and its conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Server-generated id.
    pub id: String,
    /// Context (conversation) id.
    #[serde(default, alias = "context_id", skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// Current status.
    pub status: TaskStatus,
    /// Outputs.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub artifacts: Vec<Artifact>,
    /// Conversation.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub history: Vec<Message>,
    /// Custom metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl Task {
    /// A task with an id and a status, nothing else.
    pub fn new(id: impl Into<String>, status: TaskStatus) -> Self {
        Task {
            id: id.into(),
            context_id: None,
            status,
            artifacts: Vec::new(),
            history: Vec::new(),
            metadata: None,
        }
    }
}

/// An output of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Unique within the task.
    #[serde(alias = "artifact_id")]
    pub artifact_id: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Content (at least one part on the wire).
    #[serde(default, deserialize_with = "null_default")]
    pub parts: Vec<Part>,
    /// Custom metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Extension URIs.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub extensions: Vec<String>,
}

impl Artifact {
    /// An artifact with an id and parts.
    pub fn new(artifact_id: impl Into<String>, parts: Vec<Part>) -> Self {
        Artifact {
            artifact_id: artifact_id.into(),
            name: None,
            description: None,
            parts,
            metadata: None,
            extensions: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_classify() {
        let terminal: Vec<_> = TaskState::ALL
            .into_iter()
            .filter(|s| s.is_terminal())
            .collect();
        assert_eq!(
            terminal,
            [
                TaskState::Completed,
                TaskState::Failed,
                TaskState::Canceled,
                TaskState::Rejected
            ]
        );
        let interrupted: Vec<_> = TaskState::ALL
            .into_iter()
            .filter(|s| s.is_interrupted())
            .collect();
        assert_eq!(
            interrupted,
            [TaskState::InputRequired, TaskState::AuthRequired]
        );
    }

    #[test]
    fn states_read_every_spelling_and_write_v1() {
        for state in TaskState::ALL {
            for input in [
                serde_json::json!(state.as_str()),
                serde_json::json!(state.as_v03_str()),
                serde_json::json!(state.number()),
            ] {
                let read: TaskState = serde_json::from_value(input).unwrap();
                assert_eq!(read, state);
            }
            assert_eq!(
                serde_json::to_value(state).unwrap(),
                serde_json::json!(state.as_str())
            );
        }
        assert!(serde_json::from_str::<TaskState>("\"done\"").is_err());
        assert!(serde_json::from_str::<TaskState>("9").is_err());
        assert!(serde_json::from_str::<TaskState>("-1").is_err());
    }
}
