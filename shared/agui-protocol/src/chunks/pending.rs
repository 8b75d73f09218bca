//! The pending-item model: what a lane holds open, its kind, and its synthesized `*_END`.

use super::Lane;
use crate::Event;
use crate::event::{EventBase, ReasoningMessageEnd, TextMessageEnd, TextRole, ToolCallEnd};
use crate::ids::{MessageId, ToolCallId};

/// The chunk-assembled item a lane holds open.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Pending {
    Text {
        id: MessageId,
        role: TextRole,
        name: Option<String>,
    },
    Tool {
        id: ToolCallId,
        name: String,
        parent: Option<MessageId>,
    },
    Reasoning {
        id: MessageId,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Text,
    Tool,
    Reasoning,
}

impl Kind {
    pub(super) fn chunk_type(self) -> &'static str {
        match self {
            Kind::Text => "TEXT_MESSAGE_CHUNK",
            Kind::Tool => "TOOL_CALL_CHUNK",
            Kind::Reasoning => "REASONING_MESSAGE_CHUNK",
        }
    }

    pub(super) fn item(self) -> &'static str {
        match self {
            Kind::Text => "text message",
            Kind::Tool => "tool call",
            Kind::Reasoning => "reasoning message",
        }
    }

    pub(super) fn id_field(self) -> &'static str {
        match self {
            Kind::Tool => "toolCallId",
            Kind::Text | Kind::Reasoning => "messageId",
        }
    }
}

impl Pending {
    pub(super) fn kind(&self) -> Kind {
        match self {
            Pending::Text { .. } => Kind::Text,
            Pending::Tool { .. } => Kind::Tool,
            Pending::Reasoning { .. } => Kind::Reasoning,
        }
    }

    pub(super) fn id(&self) -> &str {
        match self {
            Pending::Text { id, .. } | Pending::Reasoning { id } => id.as_str(),
            Pending::Tool { id, .. } => id.as_str(),
        }
    }

    /// The synthesized `*_END` closing this item.
    pub(super) fn end(&self, lane: &Lane) -> Event {
        let sub = lane.clone();
        match self {
            Pending::Text { id, .. } => TextMessageEnd {
                message_id: id.clone(),
                subagent_run_id: sub,
                base: EventBase::default(),
            }
            .into(),
            Pending::Tool { id, .. } => ToolCallEnd {
                tool_call_id: id.clone(),
                subagent_run_id: sub,
                base: EventBase::default(),
            }
            .into(),
            Pending::Reasoning { id } => ReasoningMessageEnd {
                message_id: id.clone(),
                subagent_run_id: sub,
                base: EventBase::default(),
            }
            .into(),
        }
    }
}
