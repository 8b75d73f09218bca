//! Conversation messages, discriminated by `role`, and their content parts.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ids::{MessageId, SubagentRunId, ToolCallId};

mod de;

/// Free-form metadata object. Never `null` on the wire; the `"ag-ui"` key is reserved.
pub type Metadata = Map<String, Value>;

/// Every `role` on the wire, in declaration order.
pub(crate) const ROLES: [&str; 7] = [
    "developer",
    "system",
    "assistant",
    "user",
    "tool",
    "activity",
    "reasoning",
];

/// One message of the conversation history (`MESSAGES_SNAPSHOT`, `RunAgentInput.messages`).
///
/// Read without buffering the object when `role` comes first, as in everything Handoff
/// writes (see `de.rs`); the members before a later `role` are the only ones held aside.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
#[non_exhaustive]
pub enum Message {
    /// Developer instructions.
    Developer(TextOnlyMessage),
    /// System prompt.
    System(TextOnlyMessage),
    /// An assistant turn, possibly with tool calls.
    Assistant(AssistantMessage),
    /// A user turn, text or multimodal.
    User(UserMessage),
    /// A tool's answer to a call.
    Tool(ToolMessage),
    /// A structured activity (progress, background task); stripped by clients before sending.
    Activity(ActivityMessage),
    /// A reasoning transcript.
    Reasoning(ReasoningMessage),
}

impl Message {
    /// The message id, whatever the role.
    pub fn id(&self) -> &MessageId {
        match self {
            Message::Developer(m) | Message::System(m) => &m.id,
            Message::Assistant(m) => &m.id,
            Message::User(m) => &m.id,
            Message::Tool(m) => &m.id,
            Message::Activity(m) => &m.id,
            Message::Reasoning(m) => &m.id,
        }
    }

    /// The role as it appears on the wire.
    pub fn role(&self) -> &'static str {
        match self {
            Message::Developer(_) => "developer",
            Message::System(_) => "system",
            Message::Assistant(_) => "assistant",
            Message::User(_) => "user",
            Message::Tool(_) => "tool",
            Message::Activity(_) => "activity",
            Message::Reasoning(_) => "reasoning",
        }
    }

    /// A plain-text user message.
    pub fn user(id: impl Into<MessageId>, text: impl Into<String>) -> Self {
        Message::User(UserMessage {
            id: id.into(),
            content: Content::Text(text.into()),
            name: None,
            encrypted_value: None,
            metadata: None,
            subagent_run_id: None,
        })
    }

    /// A plain-text assistant message.
    pub fn assistant(id: impl Into<MessageId>, text: impl Into<String>) -> Self {
        Message::Assistant(AssistantMessage {
            id: id.into(),
            content: Some(text.into()),
            ..AssistantMessage::default()
        })
    }

    /// The text of a user, assistant, system, developer, tool or reasoning message
    /// (text parts concatenated); `None` for activity messages.
    pub fn text(&self) -> Option<String> {
        match self {
            Message::Developer(m) | Message::System(m) => Some(m.content.clone()),
            Message::Assistant(m) => m.content.clone(),
            Message::User(m) => Some(m.content.text()),
            Message::Tool(m) => Some(m.content.text()),
            Message::Reasoning(m) => Some(m.content.clone()),
            Message::Activity(_) => None,
        }
    }
}

/// `developer` and `system` messages.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextOnlyMessage {
    /// Message id.
    pub id: MessageId,
    /// Text.
    pub content: String,
    /// Optional author name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Opaque provider-encrypted value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_value: Option<String>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Attribution to a subagent invocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
}

/// An assistant message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Message id.
    pub id: MessageId,
    /// Text, when the turn has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Tool calls made in this turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// Optional author name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Opaque provider-encrypted value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_value: Option<String>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Attribution to a subagent invocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
}

/// A user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// Message id.
    pub id: MessageId,
    /// Text or multimodal parts.
    pub content: Content,
    /// Optional author name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Opaque provider-encrypted value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_value: Option<String>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Attribution to a subagent invocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
}

/// A tool message: the answer to one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolMessage {
    /// Message id.
    pub id: MessageId,
    /// Result text or parts.
    pub content: Content,
    /// The call this answers.
    pub tool_call_id: ToolCallId,
    /// Error text when the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Opaque provider-encrypted value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_value: Option<String>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Attribution to a subagent invocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
}

/// An activity message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivityMessage {
    /// Message id.
    pub id: MessageId,
    /// Open activity type, e.g. `"progress"`.
    pub activity_type: String,
    /// Structured content.
    pub content: Map<String, Value>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Attribution to a subagent invocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
}

/// A reasoning message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessage {
    /// Message id.
    pub id: MessageId,
    /// Reasoning text.
    pub content: String,
    /// Opaque provider-encrypted value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_value: Option<String>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Attribution to a subagent invocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
}

/// A tool call inside an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Call id.
    pub id: ToolCallId,
    /// Always `"function"`.
    #[serde(rename = "type")]
    pub kind: FunctionKind,
    /// The function and its JSON argument text.
    pub function: FunctionCall,
    /// Opaque provider-encrypted value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_value: Option<String>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl ToolCall {
    /// A function call with its argument text.
    pub fn function(
        id: impl Into<ToolCallId>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            kind: FunctionKind::Function,
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
            encrypted_value: None,
            metadata: None,
        }
    }
}

/// The only tool-call kind, `"function"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FunctionKind {
    /// `"function"`.
    #[default]
    Function,
}

/// Function name and argument text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// Function name.
    pub name: String,
    /// Argument text (JSON by convention; not validated by the protocol).
    pub arguments: String,
}

/// Message content: a string or a list of parts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Multimodal parts.
    Parts(Vec<ContentPart>),
}

impl Content {
    /// The text parts concatenated.
    pub fn text(&self) -> String {
        match self {
            Content::Text(s) => s.clone(),
            Content::Parts(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    ContentPart::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect(),
        }
    }
}

impl From<String> for Content {
    fn from(s: String) -> Self {
        Content::Text(s)
    }
}
impl From<&str> for Content {
    fn from(s: &str) -> Self {
        Content::Text(s.to_owned())
    }
}

/// One part of multimodal content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[non_exhaustive]
pub enum ContentPart {
    /// Text.
    Text(TextPart),
    /// Image.
    Image(MediaPart),
    /// Audio.
    Audio(MediaPart),
    /// Video.
    Video(MediaPart),
    /// Document.
    Document(MediaPart),
}

/// A text part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextPart {
    /// Optional part id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The text.
    pub text: String,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// An image, audio, video or document part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MediaPart {
    /// Optional part id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Where the bytes are.
    pub source: PartSource,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Where a media part's bytes are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[non_exhaustive]
pub enum PartSource {
    /// Inline base64 data.
    Data {
        /// Base64 bytes.
        value: String,
        /// MIME type (required).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A URL. Treat as untrusted (SSRF).
    Url {
        /// The URL.
        value: String,
        /// MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    /// An opaque provider file handle.
    File {
        /// The handle.
        value: String,
        /// Provider name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
        /// MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
}
