//! State events.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::EventBase;
use crate::ids::{MessageId, SubagentRunId};
use crate::message::Message;
use crate::patch::PatchOp;

/// `STATE_SNAPSHOT`: Replaces the shared state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateSnapshot {
    /// The whole state (`null` is legal).
    pub snapshot: Value,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl StateSnapshot {
    /// Builds the event from its required fields.
    pub fn new(snapshot: Value) -> Self {
        StateSnapshot {
            snapshot,
            subagent_run_id: None,
            base: EventBase::default(),
        }
    }
    /// Attributes the event to a subagent invocation.
    pub fn in_subagent(mut self, id: impl Into<SubagentRunId>) -> Self {
        self.subagent_run_id = Some(id.into());
        self
    }
}

/// `STATE_DELTA`: RFC 6902 patch against the shared state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateDelta {
    /// Operations.
    pub delta: Vec<PatchOp>,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl StateDelta {
    /// Builds the event from its required fields.
    pub fn new(delta: Vec<PatchOp>) -> Self {
        StateDelta {
            delta,
            subagent_run_id: None,
            base: EventBase::default(),
        }
    }
    /// Attributes the event to a subagent invocation.
    pub fn in_subagent(mut self, id: impl Into<SubagentRunId>) -> Self {
        self.subagent_run_id = Some(id.into());
        self
    }
}

/// `MESSAGES_SNAPSHOT`: Authoritative conversation history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessagesSnapshot {
    /// All messages.
    pub messages: Vec<Message>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl MessagesSnapshot {
    /// Builds the event from its required fields.
    pub fn new(messages: Vec<Message>) -> Self {
        MessagesSnapshot {
            messages,
            base: EventBase::default(),
        }
    }
}

/// `ACTIVITY_SNAPSHOT`: Creates or replaces an activity message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivitySnapshot {
    /// Activity message id.
    pub message_id: MessageId,
    /// Open activity type.
    pub activity_type: String,
    /// Structured content.
    pub content: Map<String, Value>,
    /// Replace (default) or merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace: Option<bool>,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl ActivitySnapshot {
    /// Builds the event from its required fields.
    pub fn new(
        message_id: impl Into<MessageId>,
        activity_type: impl Into<String>,
        content: Map<String, Value>,
    ) -> Self {
        ActivitySnapshot {
            message_id: message_id.into(),
            activity_type: activity_type.into(),
            content,
            replace: None,
            subagent_run_id: None,
            base: EventBase::default(),
        }
    }
    /// Attributes the event to a subagent invocation.
    pub fn in_subagent(mut self, id: impl Into<SubagentRunId>) -> Self {
        self.subagent_run_id = Some(id.into());
        self
    }
}

/// `ACTIVITY_DELTA`: Patches an activity message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivityDelta {
    /// Activity message id.
    pub message_id: MessageId,
    /// Activity type (repeat it if unchanged).
    pub activity_type: String,
    /// Operations.
    pub patch: Vec<PatchOp>,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl ActivityDelta {
    /// Builds the event from its required fields.
    pub fn new(
        message_id: impl Into<MessageId>,
        activity_type: impl Into<String>,
        patch: Vec<PatchOp>,
    ) -> Self {
        ActivityDelta {
            message_id: message_id.into(),
            activity_type: activity_type.into(),
            patch,
            subagent_run_id: None,
            base: EventBase::default(),
        }
    }
    /// Attributes the event to a subagent invocation.
    pub fn in_subagent(mut self, id: impl Into<SubagentRunId>) -> Self {
        self.subagent_run_id = Some(id.into());
        self
    }
}
