//! Conversation messages written without serde (`MESSAGES_SNAPSHOT`, and the history a store
//! keeps), byte-identical to `serde_json`: `role` first, as the derived internally tagged
//! enum writes it, then each variant's fields in declaration order, `None`s skipped.
//! Multimodal content parts, which are rare, go through serde.

use super::json::{Sink, array, object, optional_object, optional_string, string};
use crate::ids::SubagentRunId;
use crate::message::{
    ActivityMessage, AssistantMessage, Content, FunctionCall, FunctionKind, Message, Metadata,
    ReasoningMessage, TextOnlyMessage, ToolCall, ToolMessage, UserMessage,
};

/// One message as compact JSON.
pub(super) fn message<S: Sink>(out: &mut S, message: &Message) {
    // Every field named: a new one stops the build until it is written here.
    match message {
        Message::Developer(m) | Message::System(m) => text_only(out, message.role(), m),
        Message::Assistant(AssistantMessage {
            id,
            content,
            tool_calls,
            name,
            encrypted_value,
            metadata,
            subagent_run_id,
        }) => {
            head(out, message.role(), id.as_str());
            optional_string(out, b",\"content\":", content.as_deref());
            if let Some(calls) = tool_calls {
                out.put(b",\"toolCalls\":");
                array(out, calls, tool_call);
            }
            optional_string(out, b",\"name\":", name.as_deref());
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
            head(out, message.role(), id.as_str());
            out.put(b",\"content\":");
            self::content(out, content);
            optional_string(out, b",\"name\":", name.as_deref());
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
            head(out, message.role(), id.as_str());
            out.put(b",\"content\":");
            self::content(out, content);
            out.put(b",\"toolCallId\":");
            string(out, tool_call_id.as_str());
            optional_string(out, b",\"error\":", error.as_deref());
            common(out, encrypted_value, metadata, subagent_run_id);
        }
        Message::Activity(ActivityMessage {
            id,
            activity_type,
            content,
            metadata,
            subagent_run_id,
        }) => {
            head(out, message.role(), id.as_str());
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
            head(out, message.role(), id.as_str());
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
    optional_string(out, b",\"name\":", name.as_deref());
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
    optional_string(out, b",\"encryptedValue\":", encrypted_value.as_deref());
    optional_object(out, b",\"metadata\":", metadata.as_ref());
    optional_string(
        out,
        b",\"subagentRunId\":",
        subagent_run_id.as_ref().map(SubagentRunId::as_str),
    );
    out.put(b"}");
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
    optional_string(out, b",\"encryptedValue\":", encrypted_value.as_deref());
    optional_object(out, b",\"metadata\":", metadata.as_ref());
    out.put(b"}");
}
