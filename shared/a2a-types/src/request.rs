//! `SendMessageRequest`, its configuration, and `SendMessageResponse`.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::Metadata;
use crate::message::Message;
use crate::push::TaskPushNotificationConfig;
use crate::serde_util::{is_false, null_default};
use crate::stream::StreamResponse;
use crate::task::Task;

/// Params of `SendMessage` / `SendStreamingMessage` (v0.3 `message/send`, `message/stream`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// Tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The message.
    pub message: Message,
    /// Options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Custom metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Options of a send.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Media types the client accepts for response parts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub accepted_output_modes: Vec<String>,
    /// Where to push updates (its `taskId` stays empty on a send).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// At most this many history messages in the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_length: Option<i32>,
    /// Answer once the task exists instead of waiting for a terminal or interrupted state.
    #[serde(skip_serializing_if = "is_false")]
    pub return_immediately: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigurationWire {
    #[serde(
        default,
        alias = "accepted_output_modes",
        deserialize_with = "null_default"
    )]
    accepted_output_modes: Vec<String>,
    #[serde(
        default,
        alias = "task_push_notification_config",
        alias = "pushNotificationConfig",
        alias = "push_notification_config"
    )]
    task_push_notification_config: Option<TaskPushNotificationConfig>,
    #[serde(default, alias = "history_length")]
    history_length: Option<i32>,
    #[serde(default, alias = "return_immediately")]
    return_immediately: Option<bool>,
    /// v0.3: the inverse of `returnImmediately`.
    #[serde(default)]
    blocking: Option<bool>,
}

impl<'de> Deserialize<'de> for SendMessageConfiguration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = ConfigurationWire::deserialize(deserializer)?;
        let return_immediately = wire
            .return_immediately
            .or(wire.blocking.map(|blocking| !blocking))
            .unwrap_or(false);
        Ok(SendMessageConfiguration {
            accepted_output_modes: wire.accepted_output_modes,
            task_push_notification_config: wire.task_push_notification_config,
            history_length: wire.history_length,
            return_immediately,
        })
    }
}

/// Result of `SendMessage`: a task or a direct message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SendMessageResponse {
    /// The task created or updated.
    Task(Task),
    /// A direct answer.
    Message(Message),
}

impl<'de> Deserialize<'de> for SendMessageResponse {
    /// Reads `{"task"}` / `{"message"}` and v0.3's bare `Task` / `Message` results.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match StreamResponse::from_value(value).map_err(serde::de::Error::custom)? {
            (StreamResponse::Task(task), _) => Ok(SendMessageResponse::Task(task)),
            (StreamResponse::Message(message), _) => Ok(SendMessageResponse::Message(message)),
            _ => Err(serde::de::Error::custom(
                "a send message response is a `task` or a `message`",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn blocking_is_the_inverse_of_return_immediately() {
        let read = |v| serde_json::from_value::<SendMessageConfiguration>(v).unwrap();
        assert!(read(json!({"blocking": false})).return_immediately);
        assert!(!read(json!({"blocking": true})).return_immediately);
        assert!(read(json!({"returnImmediately": true, "blocking": true})).return_immediately);
        assert!(!read(json!({})).return_immediately);
    }
}
