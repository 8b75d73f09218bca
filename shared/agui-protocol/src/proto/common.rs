//! Messages shared by several events (`types.proto`, `patch.proto`): chat
//! messages and their content parts, run input, interrupts, usage, patches.

use serde_json::Value as Json;

use super::value::{Fields, Struct, Value};

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct JsonPatchOperation {
    /// ADD 0, REMOVE 1, REPLACE 2, MOVE 3, COPY 4, TEST 5.
    #[prost(int32, tag = "1")]
    pub(crate) op: i32,
    #[prost(string, tag = "2")]
    pub(crate) path: String,
    #[prost(string, optional, tag = "3")]
    pub(crate) from: Option<String>,
    #[prost(message, optional, tag = "4")]
    pub(crate) value: Option<Value>,
}

impl JsonPatchOperation {
    pub(crate) fn from_json(json: &Json) -> Self {
        let f = Fields::of(json);
        let op = match f.string("op").as_str() {
            "remove" => 1,
            "replace" => 2,
            "move" => 3,
            "copy" => 4,
            "test" => 5,
            _ => 0,
        };
        JsonPatchOperation {
            op,
            path: f.string("path"),
            from: f.opt("from"),
            value: f.payload("value"),
        }
    }
}

/// The wire's one Message carries every role's fields; `content` goes to
/// `content` (a string), `content_parts` (user/tool parts) or
/// `activity_content` (an activity's object) by its shape and role.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Message {
    #[prost(string, tag = "1")]
    pub(crate) id: String,
    #[prost(string, tag = "2")]
    pub(crate) role: String,
    #[prost(string, optional, tag = "3")]
    pub(crate) content: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub(crate) name: Option<String>,
    #[prost(message, repeated, tag = "5")]
    pub(crate) tool_calls: Vec<ToolCall>,
    #[prost(string, optional, tag = "6")]
    pub(crate) tool_call_id: Option<String>,
    #[prost(string, optional, tag = "7")]
    pub(crate) error: Option<String>,
    #[prost(message, repeated, tag = "8")]
    pub(crate) content_parts: Vec<InputContent>,
    #[prost(message, optional, tag = "9")]
    pub(crate) metadata: Option<Struct>,
    #[prost(string, optional, tag = "10")]
    pub(crate) subagent_run_id: Option<String>,
    #[prost(string, optional, tag = "11")]
    pub(crate) encrypted_value: Option<String>,
    #[prost(string, optional, tag = "12")]
    pub(crate) activity_type: Option<String>,
    #[prost(message, optional, tag = "13")]
    pub(crate) activity_content: Option<Struct>,
}

impl Message {
    pub(crate) fn from_json(json: &Json) -> Self {
        let f = Fields::of(json);
        let role = f.string("role");
        let (mut content, mut content_parts, mut activity_content) = (None, Vec::new(), None);
        match f.get("content") {
            Some(Json::Array(parts)) => content_parts = content_parts_of(parts),
            Some(c) if role == "activity" => activity_content = Some(Struct::from_json(c)),
            Some(Json::String(s)) => content = Some(s.clone()),
            _ if role == "activity" => activity_content = Some(Struct::default()),
            _ => {}
        }
        Message {
            id: f.string("id"),
            role,
            content,
            name: f.opt("name"),
            tool_calls: f
                .list("toolCalls")
                .iter()
                .map(ToolCall::from_json)
                .collect(),
            tool_call_id: f.opt("toolCallId"),
            error: f.opt("error"),
            content_parts,
            metadata: f.object("metadata"),
            subagent_run_id: f.opt("subagentRunId"),
            encrypted_value: f.opt("encryptedValue"),
            activity_type: f.opt("activityType"),
            activity_content,
        }
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ToolCall {
    #[prost(string, tag = "1")]
    pub(crate) id: String,
    #[prost(string, tag = "2")]
    pub(crate) r#type: String,
    #[prost(message, optional, tag = "3")]
    pub(crate) function: Option<ToolCallFunction>,
    #[prost(message, optional, tag = "4")]
    pub(crate) metadata: Option<Struct>,
    #[prost(string, optional, tag = "5")]
    pub(crate) encrypted_value: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ToolCallFunction {
    #[prost(string, tag = "1")]
    pub(crate) name: String,
    #[prost(string, tag = "2")]
    pub(crate) arguments: String,
}

impl ToolCall {
    fn from_json(json: &Json) -> Self {
        let f = Fields::of(json);
        let function = f.get("function").map(|func| {
            let func = Fields::of(func);
            ToolCallFunction {
                name: func.string("name"),
                arguments: func.string("arguments"),
            }
        });
        ToolCall {
            id: f.string("id"),
            r#type: f.string("type"),
            function,
            metadata: f.object("metadata"),
            encrypted_value: f.opt("encryptedValue"),
        }
    }
}

/// A content part: exactly one arm set.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct InputContent {
    #[prost(oneof = "Part", tags = "1, 2, 3, 4, 5")]
    pub(crate) part: Option<Part>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum Part {
    #[prost(message, tag = "1")]
    Text(TextPart),
    #[prost(message, tag = "2")]
    Image(MediaPart),
    #[prost(message, tag = "3")]
    Audio(MediaPart),
    #[prost(message, tag = "4")]
    Video(MediaPart),
    #[prost(message, tag = "5")]
    Document(MediaPart),
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TextPart {
    #[prost(string, tag = "1")]
    pub(crate) text: String,
    #[prost(string, optional, tag = "2")]
    pub(crate) id: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub(crate) metadata: Option<Value>,
}

/// Image, audio, video and document parts share one shape.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct MediaPart {
    #[prost(message, optional, tag = "1")]
    pub(crate) source: Option<Source>,
    #[prost(message, optional, tag = "2")]
    pub(crate) metadata: Option<Value>,
    #[prost(string, optional, tag = "3")]
    pub(crate) id: Option<String>,
}

/// `InputContentSource`: data (1), url (2) or file (3).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Source {
    #[prost(message, optional, tag = "1")]
    pub(crate) data: Option<SourceData>,
    #[prost(message, optional, tag = "2")]
    pub(crate) url: Option<SourceUrl>,
    #[prost(message, optional, tag = "3")]
    pub(crate) file: Option<SourceFile>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SourceData {
    #[prost(string, tag = "1")]
    pub(crate) value: String,
    #[prost(string, tag = "2")]
    pub(crate) mime_type: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SourceUrl {
    #[prost(string, tag = "1")]
    pub(crate) value: String,
    #[prost(string, optional, tag = "2")]
    pub(crate) mime_type: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SourceFile {
    #[prost(string, tag = "1")]
    pub(crate) value: String,
    #[prost(string, optional, tag = "2")]
    pub(crate) provider: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub(crate) mime_type: Option<String>,
}

impl Source {
    fn from_json(json: &Json) -> Option<Source> {
        let f = Fields::of(json);
        let mut source = Source::default();
        match f.string("type").as_str() {
            "data" => {
                source.data = Some(SourceData {
                    value: f.string("value"),
                    mime_type: f.string("mimeType"),
                })
            }
            "url" => {
                source.url = Some(SourceUrl {
                    value: f.string("value"),
                    mime_type: f.opt("mimeType"),
                })
            }
            "file" => {
                source.file = Some(SourceFile {
                    value: f.string("value"),
                    provider: f.opt("provider"),
                    mime_type: f.opt("mimeType"),
                })
            }
            _ => return None,
        }
        Some(source)
    }
}

/// Content parts of a message or tool result. A part with no wire form is
/// left out, as the official encoder does (after a warning).
pub(crate) fn content_parts_of(parts: &[Json]) -> Vec<InputContent> {
    parts.iter().filter_map(content_part).collect()
}

fn content_part(json: &Json) -> Option<InputContent> {
    let f = Fields::of(json);
    let media = || MediaPart {
        source: f.get("source").and_then(Source::from_json),
        metadata: f.value("metadata"),
        id: f.opt("id"),
    };
    let part = match f.string("type").as_str() {
        "text" => Part::Text(TextPart {
            text: f.string("text"),
            id: f.opt("id"),
            metadata: f.value("metadata"),
        }),
        "image" => Part::Image(media()),
        "audio" => Part::Audio(media()),
        "video" => Part::Video(media()),
        "document" => Part::Document(media()),
        _ => return None,
    };
    Some(InputContent { part: Some(part) })
}
