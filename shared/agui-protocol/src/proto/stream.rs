//! Streaming events (`events.proto`): text messages, tool calls, reasoning.

use super::BaseEvent;
use super::common::{InputContent, content_parts_of};
use super::value::Fields;
use serde_json::Value as Json;

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TextMessageStart {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, tag = "2")]
    pub(crate) message_id: String,
    #[prost(string, optional, tag = "3")]
    pub(crate) role: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub(crate) name: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub(crate) subagent_run_id: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TextMessageContent {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, tag = "2")]
    pub(crate) message_id: String,
    #[prost(string, tag = "3")]
    pub(crate) delta: String,
    #[prost(string, optional, tag = "4")]
    pub(crate) subagent_run_id: Option<String>,
}

/// `TEXT_MESSAGE_END` and `TOOL_CALL_END` alike: an id, then the attribution.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct IdEnd {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, tag = "2")]
    pub(crate) id: String,
    #[prost(string, optional, tag = "3")]
    pub(crate) subagent_run_id: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TextMessageChunk {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, optional, tag = "2")]
    pub(crate) message_id: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub(crate) role: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub(crate) delta: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub(crate) name: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub(crate) subagent_run_id: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ToolCallStart {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, tag = "2")]
    pub(crate) tool_call_id: String,
    #[prost(string, tag = "3")]
    pub(crate) tool_call_name: String,
    #[prost(string, optional, tag = "4")]
    pub(crate) parent_message_id: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub(crate) subagent_run_id: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ToolCallArgs {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, tag = "2")]
    pub(crate) tool_call_id: String,
    #[prost(string, tag = "3")]
    pub(crate) delta: String,
    #[prost(string, optional, tag = "4")]
    pub(crate) subagent_run_id: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ToolCallChunk {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, optional, tag = "2")]
    pub(crate) tool_call_id: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub(crate) tool_call_name: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub(crate) parent_message_id: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub(crate) delta: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub(crate) subagent_run_id: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ToolCallResult {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, optional, tag = "2")]
    pub(crate) subagent_run_id: Option<String>,
    #[prost(string, tag = "3")]
    pub(crate) message_id: String,
    #[prost(string, tag = "4")]
    pub(crate) tool_call_id: String,
    /// String content; content parts go to `content_parts` instead.
    #[prost(string, optional, tag = "5")]
    pub(crate) content: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub(crate) role: Option<String>,
    #[prost(message, repeated, tag = "7")]
    pub(crate) content_parts: Vec<InputContent>,
}

/// The reasoning events without a payload of their own (`REASONING_START`,
/// `REASONING_MESSAGE_END`, `REASONING_END`) share this shape; the
/// attribution comes before the id here, unlike the text events.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ReasoningId {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, optional, tag = "2")]
    pub(crate) subagent_run_id: Option<String>,
    #[prost(string, tag = "3")]
    pub(crate) message_id: String,
}

/// `REASONING_MESSAGE_START` (field 4 is `role`) and
/// `REASONING_MESSAGE_CONTENT` (field 4 is `delta`).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ReasoningMessageField {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, optional, tag = "2")]
    pub(crate) subagent_run_id: Option<String>,
    #[prost(string, tag = "3")]
    pub(crate) message_id: String,
    #[prost(string, tag = "4")]
    pub(crate) field: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ReasoningMessageChunk {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, optional, tag = "2")]
    pub(crate) subagent_run_id: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub(crate) message_id: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub(crate) delta: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ReasoningEncryptedValue {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, optional, tag = "2")]
    pub(crate) subagent_run_id: Option<String>,
    #[prost(string, tag = "3")]
    pub(crate) subtype: String,
    #[prost(string, tag = "4")]
    pub(crate) entity_id: String,
    #[prost(string, tag = "5")]
    pub(crate) encrypted_value: String,
}

pub(crate) fn text_message_start(base: BaseEvent, f: Fields<'_>) -> TextMessageStart {
    TextMessageStart {
        base_event: Some(base),
        message_id: f.string("messageId"),
        role: f.opt("role"),
        name: f.opt("name"),
        subagent_run_id: f.opt("subagentRunId"),
    }
}

pub(crate) fn text_message_content(base: BaseEvent, f: Fields<'_>) -> TextMessageContent {
    TextMessageContent {
        base_event: Some(base),
        message_id: f.string("messageId"),
        delta: f.string("delta"),
        subagent_run_id: f.opt("subagentRunId"),
    }
}

pub(crate) fn id_end(base: BaseEvent, f: Fields<'_>, id_key: &str) -> IdEnd {
    IdEnd {
        base_event: Some(base),
        id: f.string(id_key),
        subagent_run_id: f.opt("subagentRunId"),
    }
}

pub(crate) fn text_message_chunk(base: BaseEvent, f: Fields<'_>) -> TextMessageChunk {
    TextMessageChunk {
        base_event: Some(base),
        message_id: f.opt("messageId"),
        role: f.opt("role"),
        delta: f.opt("delta"),
        name: f.opt("name"),
        subagent_run_id: f.opt("subagentRunId"),
    }
}

pub(crate) fn tool_call_start(base: BaseEvent, f: Fields<'_>) -> ToolCallStart {
    ToolCallStart {
        base_event: Some(base),
        tool_call_id: f.string("toolCallId"),
        tool_call_name: f.string("toolCallName"),
        parent_message_id: f.opt("parentMessageId"),
        subagent_run_id: f.opt("subagentRunId"),
    }
}

pub(crate) fn tool_call_args(base: BaseEvent, f: Fields<'_>) -> ToolCallArgs {
    ToolCallArgs {
        base_event: Some(base),
        tool_call_id: f.string("toolCallId"),
        delta: f.string("delta"),
        subagent_run_id: f.opt("subagentRunId"),
    }
}

pub(crate) fn tool_call_chunk(base: BaseEvent, f: Fields<'_>) -> ToolCallChunk {
    ToolCallChunk {
        base_event: Some(base),
        tool_call_id: f.opt("toolCallId"),
        tool_call_name: f.opt("toolCallName"),
        parent_message_id: f.opt("parentMessageId"),
        delta: f.opt("delta"),
        subagent_run_id: f.opt("subagentRunId"),
    }
}

pub(crate) fn tool_call_result(base: BaseEvent, f: Fields<'_>) -> ToolCallResult {
    let (content, content_parts) = match f.get("content") {
        Some(Json::Array(parts)) => (None, content_parts_of(parts)),
        _ => (f.opt("content"), Vec::new()),
    };
    ToolCallResult {
        base_event: Some(base),
        subagent_run_id: f.opt("subagentRunId"),
        message_id: f.string("messageId"),
        tool_call_id: f.string("toolCallId"),
        content,
        role: f.opt("role"),
        content_parts,
    }
}

pub(crate) fn reasoning_id(base: BaseEvent, f: Fields<'_>) -> ReasoningId {
    ReasoningId {
        base_event: Some(base),
        subagent_run_id: f.opt("subagentRunId"),
        message_id: f.string("messageId"),
    }
}

pub(crate) fn reasoning_message_field(
    base: BaseEvent,
    f: Fields<'_>,
    key: &str,
) -> ReasoningMessageField {
    ReasoningMessageField {
        base_event: Some(base),
        subagent_run_id: f.opt("subagentRunId"),
        message_id: f.string("messageId"),
        field: f.string(key),
    }
}

pub(crate) fn reasoning_message_chunk(base: BaseEvent, f: Fields<'_>) -> ReasoningMessageChunk {
    ReasoningMessageChunk {
        base_event: Some(base),
        subagent_run_id: f.opt("subagentRunId"),
        message_id: f.opt("messageId"),
        delta: f.opt("delta"),
    }
}

pub(crate) fn reasoning_encrypted_value(base: BaseEvent, f: Fields<'_>) -> ReasoningEncryptedValue {
    ReasoningEncryptedValue {
        base_event: Some(base),
        subagent_run_id: f.opt("subagentRunId"),
        subtype: f.string("subtype"),
        entity_id: f.string("entityId"),
        encrypted_value: f.string("encryptedValue"),
    }
}
