//! `Message`, `Role` and `Part` (member-presence polymorphism, v0.3 `kind` read too).

use std::fmt;

use serde::de::{self, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::Metadata;
use crate::serde_util::null_default;

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Role {
    /// Unspecified.
    #[default]
    Unspecified,
    /// Client to server.
    User,
    /// Server to client.
    Agent,
}

impl Role {
    /// The v1.0 wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Unspecified => "ROLE_UNSPECIFIED",
            Role::User => "ROLE_USER",
            Role::Agent => "ROLE_AGENT",
        }
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RoleVisitor;
        impl Visitor<'_> for RoleVisitor {
            type Value = Role;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a role (ROLE_USER, ROLE_AGENT, user, agent)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Role, E> {
                match v {
                    "ROLE_USER" | "user" => Ok(Role::User),
                    "ROLE_AGENT" | "agent" => Ok(Role::Agent),
                    "ROLE_UNSPECIFIED" => Ok(Role::Unspecified),
                    other => Err(E::custom(format_args!("unknown role `{other}`"))),
                }
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Role, E> {
                match v {
                    0 => Ok(Role::Unspecified),
                    1 => Ok(Role::User),
                    2 => Ok(Role::Agent),
                    other => Err(E::custom(format_args!("unknown role number {other}"))),
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Role, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom(format_args!("unknown role number {v}")))
                    .and_then(|v| self.visit_u64(v))
            }
        }
        deserializer.deserialize_any(RoleVisitor)
    }
}

/// One unit of communication.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Creator-assigned id.
    #[serde(alias = "message_id")]
    pub message_id: String,
    /// Context id.
    #[serde(default, alias = "context_id", skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// Task id.
    #[serde(default, alias = "task_id", skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Sender.
    #[serde(default)]
    pub role: Role,
    /// Content.
    #[serde(default, deserialize_with = "null_default")]
    pub parts: Vec<Part>,
    /// Custom metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Extension URIs.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub extensions: Vec<String>,
    /// Tasks this message refers to.
    #[serde(
        default,
        alias = "reference_task_ids",
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A message with an id, a role and parts.
    pub fn new(message_id: impl Into<String>, role: Role, parts: Vec<Part>) -> Self {
        Message {
            message_id: message_id.into(),
            context_id: None,
            task_id: None,
            role,
            parts,
            metadata: None,
            extensions: Vec::new(),
            reference_task_ids: Vec::new(),
        }
    }
}

/// What a part carries: exactly one of these members is on the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum PartContent {
    /// `text`.
    Text(String),
    /// `raw`: file bytes, base64 as on the wire (v0.3 `file.bytes`).
    Raw(String),
    /// `url`: where the file is (v0.3 `file.uri`).
    Url(String),
    /// `data`: any JSON value (v0.3 `data`, an object).
    Data(Value),
}

/// A piece of a message or artifact.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The content.
    pub content: PartContent,
    /// Custom metadata.
    pub metadata: Option<Metadata>,
    /// File name (v0.3 `file.name`).
    pub filename: Option<String>,
    /// MIME type (v0.3 `file.mimeType`).
    pub media_type: Option<String>,
}

impl Part {
    fn of(content: PartContent) -> Self {
        Part {
            content,
            metadata: None,
            filename: None,
            media_type: None,
        }
    }
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part::of(PartContent::Text(text.into()))
    }
    /// A structured-data part.
    pub fn data(data: Value) -> Self {
        Part::of(PartContent::Data(data))
    }
    /// A file given by URL.
    pub fn url(url: impl Into<String>, media_type: Option<String>) -> Self {
        Part {
            media_type,
            ..Part::of(PartContent::Url(url.into()))
        }
    }
    /// A file given inline (base64).
    pub fn raw(base64: impl Into<String>, media_type: Option<String>) -> Self {
        Part {
            media_type,
            ..Part::of(PartContent::Raw(base64.into()))
        }
    }
    /// The text, if this is a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match &self.content {
            PartContent::Text(v) => map.serialize_entry("text", v)?,
            PartContent::Raw(v) => map.serialize_entry("raw", v)?,
            PartContent::Url(v) => map.serialize_entry("url", v)?,
            PartContent::Data(v) => map.serialize_entry("data", v)?,
        }
        if let Some(metadata) = &self.metadata {
            map.serialize_entry("metadata", metadata)?;
        }
        if let Some(filename) = &self.filename {
            map.serialize_entry("filename", filename)?;
        }
        if let Some(media_type) = &self.media_type {
            map.serialize_entry("mediaType", media_type)?;
        }
        map.end()
    }
}

/// Reads `Some(value)` whenever the member is present, `null` included.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// v0.3 `FilePart.file`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileWire {
    #[serde(default, alias = "fileWithBytes", alias = "file_with_bytes")]
    bytes: Option<String>,
    #[serde(default, alias = "fileWithUri", alias = "file_with_uri")]
    uri: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(
        default,
        alias = "mime_type",
        alias = "mediaType",
        alias = "media_type"
    )]
    mime_type: Option<String>,
}

/// Every member any version puts on a part.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PartWire {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    raw: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default, deserialize_with = "present")]
    data: Option<Value>,
    #[serde(default)]
    file: Option<FileWire>,
    #[serde(default)]
    metadata: Option<Metadata>,
    #[serde(default)]
    filename: Option<String>,
    #[serde(default, alias = "media_type", alias = "mimeType")]
    media_type: Option<String>,
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = PartWire::deserialize(deserializer)?;
        let mut filename = wire.filename;
        let mut media_type = wire.media_type;
        let mut contents = Vec::with_capacity(1);
        if let Some(text) = wire.text {
            contents.push(PartContent::Text(text));
        }
        if let Some(raw) = wire.raw {
            contents.push(PartContent::Raw(raw));
        }
        if let Some(url) = wire.url {
            contents.push(PartContent::Url(url));
        }
        if let Some(data) = wire.data {
            contents.push(PartContent::Data(data));
        }
        if let Some(file) = wire.file {
            filename = filename.or(file.name);
            media_type = media_type.or(file.mime_type);
            match (file.bytes, file.uri) {
                (Some(bytes), None) => contents.push(PartContent::Raw(bytes)),
                (None, Some(uri)) => contents.push(PartContent::Url(uri)),
                _ => {
                    return Err(de::Error::custom(
                        "a file part needs exactly one of `bytes` and `uri`",
                    ));
                }
            }
        }
        if contents.len() != 1 {
            return Err(de::Error::custom(
                "a part needs exactly one of `text`, `raw`, `url`, `data` (or v0.3 `file`)",
            ));
        }
        let content = contents.remove(0);
        let expected = match &content {
            PartContent::Text(_) => "text",
            PartContent::Raw(_) | PartContent::Url(_) => "file",
            PartContent::Data(_) => "data",
        };
        if let Some(kind) = wire.kind.as_deref()
            && kind != expected
        {
            return Err(de::Error::custom(format_args!(
                "part `kind` is `{kind}` but its content is {expected}"
            )));
        }
        Ok(Part {
            content,
            metadata: wire.metadata,
            filename,
            media_type,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parts_read_v1_and_v03() {
        let cases = [
            (json!({"text": "hi"}), Part::text("hi")),
            (json!({"kind": "text", "text": "hi"}), Part::text("hi")),
            (json!({"data": {"a": 1}}), Part::data(json!({"a": 1}))),
            (json!({"data": null}), Part::data(Value::Null)),
            (
                json!({"kind": "data", "data": {"a": 1}}),
                Part::data(json!({"a": 1})),
            ),
            (
                json!({"url": "https://x/y.png", "mediaType": "image/png"}),
                Part::url("https://x/y.png", Some("image/png".into())),
            ),
            (
                json!({"kind": "file", "file": {"uri": "https://x/y.png", "mimeType": "image/png"}}),
                Part::url("https://x/y.png", Some("image/png".into())),
            ),
            (
                json!({"kind": "file", "file": {"fileWithBytes": "AAE=", "name": "a.bin"}}),
                Part {
                    filename: Some("a.bin".into()),
                    ..Part::raw("AAE=", None)
                },
            ),
        ];
        for (input, expected) in cases {
            let part: Part = serde_json::from_value(input.clone()).unwrap();
            assert_eq!(part, expected, "{input}");
        }
    }

    #[test]
    fn parts_reject_ambiguity() {
        for bad in [
            json!({}),
            json!({"text": "a", "data": {}}),
            json!({"kind": "file", "file": {}}),
            json!({"kind": "file", "file": {"bytes": "AA==", "uri": "https://x"}}),
            json!({"kind": "data", "text": "a"}),
        ] {
            assert!(
                serde_json::from_value::<Part>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn roles_read_every_spelling() {
        for (input, role) in [
            (json!("ROLE_USER"), Role::User),
            (json!("agent"), Role::Agent),
            (json!(2), Role::Agent),
            (json!("ROLE_UNSPECIFIED"), Role::Unspecified),
        ] {
            assert_eq!(serde_json::from_value::<Role>(input).unwrap(), role);
        }
        assert!(serde_json::from_value::<Role>(json!("system")).is_err());
    }
}
