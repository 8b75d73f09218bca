//! Text events.

use super::EventBase;
use crate::ids::{MessageId, SubagentRunId};
use serde::{Deserialize, Serialize};

/// `TEXT_MESSAGE_START`: A text message opens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextMessageStart {
    /// Message id.
    pub message_id: MessageId,
    /// Role; absent means assistant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<TextRole>,
    /// Author name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl TextMessageStart {
    /// Builds the event from its required fields.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        TextMessageStart {
            message_id: message_id.into(),
            role: None,
            name: None,
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

/// `TEXT_MESSAGE_CONTENT`: A text fragment (may be empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextMessageContent {
    /// Message id.
    pub message_id: MessageId,
    /// Fragment.
    pub delta: String,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl TextMessageContent {
    /// Builds the event from its required fields.
    pub fn new(message_id: impl Into<MessageId>, delta: impl Into<String>) -> Self {
        TextMessageContent {
            message_id: message_id.into(),
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

/// `TEXT_MESSAGE_END`: A text message closes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextMessageEnd {
    /// Message id.
    pub message_id: MessageId,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl TextMessageEnd {
    /// Builds the event from its required fields.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        TextMessageEnd {
            message_id: message_id.into(),
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

/// `TEXT_MESSAGE_CHUNK`: Shorthand expanded by consumers into START/CONTENT/END.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextMessageChunk {
    /// Message id (required on the first chunk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<MessageId>,
    /// Role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<TextRole>,
    /// Fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<String>,
    /// Author name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl TextMessageChunk {
    /// Builds the event from its required fields.
    pub fn new() -> Self {
        TextMessageChunk {
            message_id: None,
            role: None,
            delta: None,
            name: None,
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

/// `REASONING_START`: A reasoning span opens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningStart {
    /// Span id.
    pub message_id: MessageId,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl ReasoningStart {
    /// Builds the event from its required fields.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        ReasoningStart {
            message_id: message_id.into(),
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

/// `REASONING_MESSAGE_START`: A reasoning message opens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessageStart {
    /// Message id.
    pub message_id: MessageId,
    /// Always `reasoning`.
    pub role: ReasoningRole,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl ReasoningMessageStart {
    /// Builds the event from its required fields.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        ReasoningMessageStart {
            message_id: message_id.into(),
            role: ReasoningRole::Reasoning,
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

/// `REASONING_MESSAGE_CONTENT`: A reasoning fragment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessageContent {
    /// Message id.
    pub message_id: MessageId,
    /// Fragment.
    pub delta: String,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl ReasoningMessageContent {
    /// Builds the event from its required fields.
    pub fn new(message_id: impl Into<MessageId>, delta: impl Into<String>) -> Self {
        ReasoningMessageContent {
            message_id: message_id.into(),
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

/// `REASONING_MESSAGE_END`: A reasoning message closes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessageEnd {
    /// Message id.
    pub message_id: MessageId,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl ReasoningMessageEnd {
    /// Builds the event from its required fields.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        ReasoningMessageEnd {
            message_id: message_id.into(),
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

/// `REASONING_MESSAGE_CHUNK`: Shorthand expanded into reasoning START/CONTENT/END.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessageChunk {
    /// Message id (required on the first chunk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<MessageId>,
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

impl ReasoningMessageChunk {
    /// Builds the event from its required fields.
    pub fn new() -> Self {
        ReasoningMessageChunk {
            message_id: None,
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

/// `REASONING_END`: A reasoning span closes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningEnd {
    /// Span id.
    pub message_id: MessageId,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl ReasoningEnd {
    /// Builds the event from its required fields.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        ReasoningEnd {
            message_id: message_id.into(),
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

/// `REASONING_ENCRYPTED_VALUE`: An opaque encrypted reasoning value for a message or tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningEncryptedValue {
    /// What the value belongs to.
    pub subtype: EncryptedSubtype,
    /// The message or tool-call id.
    pub entity_id: String,
    /// Opaque value.
    pub encrypted_value: String,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl ReasoningEncryptedValue {
    /// Builds the event from its required fields.
    pub fn new(
        subtype: EncryptedSubtype,
        entity_id: impl Into<String>,
        encrypted_value: impl Into<String>,
    ) -> Self {
        ReasoningEncryptedValue {
            subtype,
            entity_id: entity_id.into(),
            encrypted_value: encrypted_value.into(),
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

/// Role of a text message (`TEXT_MESSAGE_START.role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextRole {
    /// Developer.
    Developer,
    /// System.
    System,
    /// Assistant (the default).
    Assistant,
    /// User.
    User,
}

/// The only reasoning role, `"reasoning"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningRole {
    /// `"reasoning"`.
    #[default]
    Reasoning,
}

/// What a `REASONING_ENCRYPTED_VALUE` belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EncryptedSubtype {
    /// A tool call.
    ToolCall,
    /// A message.
    Message,
}
