//! `StreamResponse` (the streaming and push-notification payload) and its two events.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::Metadata;
use crate::message::Message;
use crate::serde_util::is_false;
use crate::task::{Artifact, Task, TaskStatus};

/// A change in a task's status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The task.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Its context (required in v1.0; ProtoJSON omits it when empty).
    #[serde(default, alias = "context_id")]
    pub context_id: String,
    /// The new status.
    pub status: TaskStatus,
    /// Custom metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A new or grown artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Its context.
    #[serde(default, alias = "context_id")]
    pub context_id: String,
    /// The artifact (or the chunk of it).
    pub artifact: Artifact,
    /// Append these parts to the artifact with the same id (else replace it).
    #[serde(
        default,
        skip_serializing_if = "is_false",
        deserialize_with = "bool_or_null"
    )]
    pub append: bool,
    /// This is the artifact's final chunk.
    #[serde(
        default,
        alias = "last_chunk",
        skip_serializing_if = "is_false",
        deserialize_with = "bool_or_null"
    )]
    pub last_chunk: bool,
    /// Custom metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

fn bool_or_null<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(deserializer)?.unwrap_or(false))
}

/// One streamed item or push notification: exactly one of four members.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// A full task snapshot.
    Task(Task),
    /// A message from the agent.
    Message(Message),
    /// A status change.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact change.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// How a [`StreamResponse`] was spelled on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    /// v1.0: `{"task"|"message"|"statusUpdate"|"artifactUpdate": {...}}`.
    Wrapped,
    /// v0.3: the bare object with its `kind` discriminator.
    Kind,
    /// A bare object without `kind`, recognised by its members.
    Bare,
}

const MEMBERS: [(&str, &str); 4] = [
    ("task", "task"),
    ("message", "message"),
    ("statusUpdate", "status_update"),
    ("artifactUpdate", "artifact_update"),
];

impl StreamResponse {
    /// The task this item is about (`None` for a message without `taskId`).
    pub fn task_id(&self) -> Option<&str> {
        match self {
            StreamResponse::Task(t) => Some(&t.id),
            StreamResponse::Message(m) => m.task_id.as_deref(),
            StreamResponse::StatusUpdate(e) => Some(&e.task_id),
            StreamResponse::ArtifactUpdate(e) => Some(&e.task_id),
        }
    }

    /// The context this item belongs to, if it names one.
    pub fn context_id(&self) -> Option<&str> {
        let id = match self {
            StreamResponse::Task(t) => t.context_id.as_deref(),
            StreamResponse::Message(m) => m.context_id.as_deref(),
            StreamResponse::StatusUpdate(e) => Some(e.context_id.as_str()),
            StreamResponse::ArtifactUpdate(e) => Some(e.context_id.as_str()),
        };
        id.filter(|id| !id.is_empty())
    }

    /// Reads a body in any accepted spelling and says which one it was.
    pub fn from_slice(body: &[u8]) -> Result<(StreamResponse, WireFormat), serde_json::Error> {
        let value: Value = serde_json::from_slice(body)?;
        Self::from_value(value)
    }

    /// Reads a JSON value in any accepted spelling and says which one it was.
    pub fn from_value(value: Value) -> Result<(StreamResponse, WireFormat), serde_json::Error> {
        use serde::de::Error;
        let Value::Object(mut object) = value else {
            return Err(serde_json::Error::custom(
                "a stream response must be a JSON object",
            ));
        };
        let present: Vec<(&str, &str)> = MEMBERS
            .into_iter()
            .filter(|(camel, snake)| object.contains_key(*camel) || object.contains_key(*snake))
            .collect();
        match present.as_slice() {
            [(camel, snake)] => {
                let inner = object
                    .remove(*camel)
                    .or_else(|| object.remove(*snake))
                    .unwrap_or(Value::Null);
                Ok((Self::member(camel, inner)?, WireFormat::Wrapped))
            }
            [] => Self::bare(object),
            _ => Err(serde_json::Error::custom(
                "a stream response has exactly one of `task`, `message`, `statusUpdate`, `artifactUpdate`",
            )),
        }
    }

    fn member(name: &str, inner: Value) -> Result<StreamResponse, serde_json::Error> {
        Ok(match name {
            "task" => StreamResponse::Task(serde_json::from_value(inner)?),
            "message" => StreamResponse::Message(serde_json::from_value(inner)?),
            "statusUpdate" => StreamResponse::StatusUpdate(serde_json::from_value(inner)?),
            _ => StreamResponse::ArtifactUpdate(serde_json::from_value(inner)?),
        })
    }

    fn bare(object: Map<String, Value>) -> Result<(StreamResponse, WireFormat), serde_json::Error> {
        use serde::de::Error;
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let has = |a: &str, b: &str| object.contains_key(a) || object.contains_key(b);
        let (name, format) = match kind.as_deref() {
            Some("task") => ("task", WireFormat::Kind),
            Some("message") => ("message", WireFormat::Kind),
            Some("status-update") => ("statusUpdate", WireFormat::Kind),
            Some("artifact-update") => ("artifactUpdate", WireFormat::Kind),
            Some(other) => {
                return Err(serde_json::Error::custom(format_args!(
                    "unknown stream response kind `{other}`"
                )));
            }
            None if has("messageId", "message_id") => ("message", WireFormat::Bare),
            None if object.contains_key("artifact") => ("artifactUpdate", WireFormat::Bare),
            None if has("taskId", "task_id") && object.contains_key("status") => {
                ("statusUpdate", WireFormat::Bare)
            }
            None if object.contains_key("id") && object.contains_key("status") => {
                ("task", WireFormat::Bare)
            }
            None => {
                return Err(serde_json::Error::custom(
                    "not a stream response: expected one of `task`, `message`, `statusUpdate`, `artifactUpdate`",
                ));
            }
        };
        Ok((Self::member(name, Value::Object(object))?, format))
    }
}

impl<'de> Deserialize<'de> for StreamResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        StreamResponse::from_value(value)
            .map(|(response, _)| response)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::TaskState;

    #[test]
    fn reads_each_spelling() {
        let status = json!({"state": "TASK_STATE_WORKING"});
        let cases = [
            (
                json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": status}}),
                WireFormat::Wrapped,
            ),
            (
                json!({"status_update": {"task_id": "t", "context_id": "c", "status": status}}),
                WireFormat::Wrapped,
            ),
            (
                json!({"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "working"}, "final": false}),
                WireFormat::Kind,
            ),
            (
                json!({"taskId": "t", "contextId": "c", "status": status}),
                WireFormat::Bare,
            ),
        ];
        for (input, format) in cases {
            let (response, read_format) = StreamResponse::from_value(input.clone()).unwrap();
            assert_eq!(read_format, format, "{input}");
            let StreamResponse::StatusUpdate(event) = response else {
                panic!("{input}: not a status update");
            };
            assert_eq!(event.task_id, "t");
            assert_eq!(event.status.state, TaskState::Working);
        }
    }

    #[test]
    fn rejects_two_members_or_none() {
        for bad in [
            json!({"task": {"id": "t", "status": {"state": "working"}}, "message": {"messageId": "m", "role": "agent", "parts": []}}),
            json!({"hello": 1}),
            json!({"kind": "nope"}),
            json!([1]),
        ] {
            assert!(StreamResponse::from_value(bad.clone()).is_err(), "{bad}");
        }
    }
}
