//! Tool events.

use super::EventBase;
use crate::ids::{MessageId, SubagentRunId, ToolCallId};
use crate::message::Content;
use serde::{Deserialize, Serialize};

/// `TOOL_CALL_START`: A tool call opens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallStart {
    /// Call id.
    pub tool_call_id: ToolCallId,
    /// Tool name.
    pub tool_call_name: String,
    /// Assistant message the call belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_message_id: Option<MessageId>,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl ToolCallStart {
    /// Builds the event from its required fields.
    pub fn new(tool_call_id: impl Into<ToolCallId>, tool_call_name: impl Into<String>) -> Self {
        ToolCallStart {
            tool_call_id: tool_call_id.into(),
            tool_call_name: tool_call_name.into(),
            parent_message_id: None,
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

/// `TOOL_CALL_ARGS`: A fragment of the argument text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallArgs {
    /// Call id.
    pub tool_call_id: ToolCallId,
    /// Fragment.
    pub delta: String,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl ToolCallArgs {
    /// Builds the event from its required fields.
    pub fn new(tool_call_id: impl Into<ToolCallId>, delta: impl Into<String>) -> Self {
        ToolCallArgs {
            tool_call_id: tool_call_id.into(),
            delta: delta.into(),
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

/// `TOOL_CALL_END`: A tool call closes (arguments complete; not executed yet).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallEnd {
    /// Call id.
    pub tool_call_id: ToolCallId,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl ToolCallEnd {
    /// Builds the event from its required fields.
    pub fn new(tool_call_id: impl Into<ToolCallId>) -> Self {
        ToolCallEnd {
            tool_call_id: tool_call_id.into(),
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

/// `TOOL_CALL_CHUNK`: Shorthand expanded into tool-call START/ARGS/END.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallChunk {
    /// Call id (required on the first chunk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<ToolCallId>,
    /// Tool name (required on the first chunk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_name: Option<String>,
    /// Parent message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_message_id: Option<MessageId>,
    /// Fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<String>,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl ToolCallChunk {
    /// Builds the event from its required fields.
    pub fn new() -> Self {
        ToolCallChunk {
            tool_call_id: None,
            tool_call_name: None,
            parent_message_id: None,
            delta: None,
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

/// `TOOL_CALL_RESULT`: The result of a backend-executed call; mints a tool message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallResult {
    /// The tool message minted.
    pub message_id: MessageId,
    /// The call answered (may be from an earlier run).
    pub tool_call_id: ToolCallId,
    /// Result text or parts.
    pub content: Content,
    /// Always `tool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<ToolRole>,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl ToolCallResult {
    /// Builds the event from its required fields.
    pub fn new(
        message_id: impl Into<MessageId>,
        tool_call_id: impl Into<ToolCallId>,
        content: impl Into<Content>,
    ) -> Self {
        ToolCallResult {
            message_id: message_id.into(),
            tool_call_id: tool_call_id.into(),
            content: content.into(),
            role: None,
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

/// The only tool-result role, `"tool"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolRole {
    /// `"tool"`.
    #[default]
    Tool,
}
