//! Conversation messages written without serde (`MESSAGES_SNAPSHOT`, and the history a store
//! keeps), byte-identical to `serde_json`: `role` first, as the derived internally tagged
//! enum writes it, then each variant's fields in declaration order, `None`s skipped.
//! Multimodal content parts, which are rare, go through serde.

use super::json::{Sink, array, object, string};
use crate::ids::SubagentRunId;
use crate::message::{
    ActivityMessage, AssistantMessage, Content, FunctionCall, FunctionKind, Message, Metadata,
    ReasoningMessage, TextOnlyMessage, ToolCall, ToolMessage, UserMessage,
};

/// One message as compact JSON.
pub(super) fn message<S: Sink>(out: &mut S, message: &Message) {
    // Every field named: a new one stops the build until it is written here.
    match message {
        Message::Developer(m) => text_only(out, "developer", m),
        Message::System(m) => text_only(out, "system", m),
        Message::Assistant(AssistantMessage {
            id,
            content,
            tool_calls,
            name,
            encrypted_value,
            metadata,
            subagent_run_id,
        }) => {
            head(out, "assistant", id.as_str());
            optional(out, ",\"content\":", content.as_deref());
            if let Some(calls) = tool_calls {
                out.put(b",\"toolCalls\":");
                array(out, calls, tool_call);
            }
            optional(out, ",\"name\":", name.as_deref());
            common(out, encrypted_value, metadata, subagent_run_id);
        }
        Message::User(UserMessage {
            id,
            content,
            name,
            encrypted_value,
            metadata,
            subagent_run_id,
        }) => {
            head(out, "user", id.as_str());
            out.put(b",\"content\":");
            self::content(out, content);
            optional(out, ",\"name\":", name.as_deref());
            common(out, encrypted_value, metadata, subagent_run_id);
        }
        Message::Tool(ToolMessage {
            id,
            content,
            tool_call_id,
            error,
            encrypted_value,
            metadata,
            subagent_run_id,
        }) => {
            head(out, "tool", id.as_str());
            out.put(b",\"content\":");
            self::content(out, content);
            out.put(b",\"toolCallId\":");
            string(out, tool_call_id.as_str());
            optional(out, ",\"error\":", error.as_deref());
            common(out, encrypted_value, metadata, subagent_run_id);
        }
        Message::Activity(ActivityMessage {
            id,
            activity_type,
            content,
            metadata,
            subagent_run_id,
        }) => {
            head(out, "activity", id.as_str());
            out.put(b",\"activityType\":");
            string(out, activity_type);
            out.put(b",\"content\":");
            object(out, content);
            common(out, &None, metadata, subagent_run_id);
        }
        Message::Reasoning(ReasoningMessage {
            id,
            content,
            encrypted_value,
            metadata,
            subagent_run_id,
        }) => {
            head(out, "reasoning", id.as_str());
            out.put(b",\"content\":");
            string(out, content);
            common(out, encrypted_value, metadata, subagent_run_id);
        }
    }
}

fn text_only<S: Sink>(out: &mut S, role: &str, m: &TextOnlyMessage) {
    let TextOnlyMessage {
        id,
        content,
        name,
        encrypted_value,
        metadata,
        subagent_run_id,
    } = m;
    head(out, role, id.as_str());
    out.put(b",\"content\":");
    string(out, content);
    optional(out, ",\"name\":", name.as_deref());
    common(out, encrypted_value, metadata, subagent_run_id);
}

/// `{"role":…,"id":…`
fn head<S: Sink>(out: &mut S, role: &str, id: &str) {
    out.put(b"{\"role\":\"");
    out.put(role.as_bytes());
    out.put(b"\",\"id\":");
    string(out, id);
}

/// The optional fields every role ends with, and the closing brace.
fn common<S: Sink>(
    out: &mut S,
    encrypted_value: &Option<String>,
    metadata: &Option<Metadata>,
    subagent_run_id: &Option<SubagentRunId>,
) {
    optional(out, ",\"encryptedValue\":", encrypted_value.as_deref());
    if let Some(metadata) = metadata {
        out.put(b",\"metadata\":");
        object(out, metadata);
    }
    optional(
        out,
        ",\"subagentRunId\":",
        subagent_run_id.as_ref().map(SubagentRunId::as_str),
    );
    out.put(b"}");
}

fn optional<S: Sink>(out: &mut S, key: &str, text: Option<&str>) {
    if let Some(text) = text {
        out.put(key.as_bytes());
        string(out, text);
    }
}

fn content<S: Sink>(out: &mut S, content: &Content) {
    match content {
        Content::Text(text) => string(out, text),
        Content::Parts(parts) => out.put_serde(parts),
    }
}

fn tool_call<S: Sink>(out: &mut S, call: &ToolCall) {
    let ToolCall {
        id,
        kind,
        function: FunctionCall { name, arguments },
        encrypted_value,
        metadata,
    } = call;
    out.put(b"{\"id\":");
    string(out, id.as_str());
    out.put(match kind {
        FunctionKind::Function => b",\"type\":\"function\"",
    });
    out.put(b",\"function\":{\"name\":");
    string(out, name);
    out.put(b",\"arguments\":");
    string(out, arguments);
    out.put(b"}");
    optional(out, ",\"encryptedValue\":", encrypted_value.as_deref());
    if let Some(metadata) = metadata {
        out.put(b",\"metadata\":");
        object(out, metadata);
    }
    out.put(b"}");
}
