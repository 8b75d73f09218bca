#![doc = include_str!("../README.md")]

pub mod jsonrpc;
pub mod message;
pub mod push;
pub mod request;
mod serde_util;
pub mod stream;
pub mod task;

pub use message::{Message, Part, PartContent, Role};
pub use push::{AuthenticationInfo, TaskPushNotificationConfig};
pub use request::{SendMessageConfiguration, SendMessageRequest, SendMessageResponse};
pub use stream::{StreamResponse, TaskArtifactUpdateEvent, TaskStatusUpdateEvent, WireFormat};
pub use task::{Artifact, Task, TaskState, TaskStatus};

/// A JSON object (`google.protobuf.Struct`), used for `metadata`.
pub type Metadata = serde_json::Map<String, serde_json::Value>;

/// The protocol version these types write.
pub const PROTOCOL_VERSION: &str = "1.0";
