//! Special events.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::EventBase;
use crate::ids::{MessageId, SubagentRunId, ToolCallId};
use crate::interrupt::SubagentOutcome;

/// `SUBAGENT_STARTED`: A subagent invocation began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentStarted {
    /// Invocation id.
    pub subagent_run_id: SubagentRunId,
    /// Subagent name.
    pub name: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Enclosing invocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_subagent_run_id: Option<SubagentRunId>,
    /// Tool call that spawned it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tool_call_id: Option<ToolCallId>,
    /// Message that spawned it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_message_id: Option<MessageId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl SubagentStarted {
    /// Builds the event from its required fields.
    pub fn new(subagent_run_id: impl Into<SubagentRunId>, name: impl Into<String>) -> Self {
        SubagentStarted {
            subagent_run_id: subagent_run_id.into(),
            name: name.into(),
            description: None,
            parent_subagent_run_id: None,
            parent_tool_call_id: None,
            parent_message_id: None,
            base: EventBase::default(),
        }
    }
}

/// `SUBAGENT_FINISHED`: A subagent invocation ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentFinished {
    /// Invocation id.
    pub subagent_run_id: SubagentRunId,
    /// Result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Success or suspended; absent means success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<SubagentOutcome>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl SubagentFinished {
    /// Builds the event from its required fields.
    pub fn new(subagent_run_id: impl Into<SubagentRunId>) -> Self {
        SubagentFinished {
            subagent_run_id: subagent_run_id.into(),
            result: None,
            outcome: None,
            base: EventBase::default(),
        }
    }
}

/// `SUBAGENT_ERROR`: A subagent invocation failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentError {
    /// Invocation id.
    pub subagent_run_id: SubagentRunId,
    /// Message.
    pub message: String,
    /// Code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl SubagentError {
    /// Builds the event from its required fields.
    pub fn new(subagent_run_id: impl Into<SubagentRunId>, message: impl Into<String>) -> Self {
        SubagentError {
            subagent_run_id: subagent_run_id.into(),
            message: message.into(),
            code: None,
            base: EventBase::default(),
        }
    }
}

/// `RAW`: An upstream event passed through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Raw {
    /// The upstream event.
    pub event: Value,
    /// Where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl Raw {
    /// Builds the event from its required fields.
    pub fn new(event: Value) -> Self {
        Raw {
            event,
            source: None,
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

/// `CUSTOM`: An application event; names should be vendor-prefixed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Custom {
    /// Event name.
    pub name: String,
    /// Payload (`null` allowed).
    pub value: Value,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl Custom {
    /// Builds the event from its required fields.
    pub fn new(name: impl Into<String>, value: Value) -> Self {
        Custom {
            name: name.into(),
            value,
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
