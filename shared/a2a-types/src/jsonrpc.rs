//! The JSON-RPC 2.0 envelope, error object, A2A error codes and method names.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A request or response id: a string, a number or `null`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JsonRpcId {
    /// A number.
    Number(i64),
    /// A string.
    String(String),
    /// `null` (only in error responses to unreadable requests).
    Null,
}

/// `"2.0"`.
pub const JSONRPC_VERSION: &str = "2.0";

fn version() -> String {
    JSONRPC_VERSION.to_owned()
}

/// A request (`id` absent makes it a notification).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "P: Deserialize<'de>"))]
pub struct JsonRpcRequest<P> {
    /// Always `"2.0"`.
    #[serde(default = "version")]
    pub jsonrpc: String,
    /// Correlation id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<JsonRpcId>,
    /// Method name ([`methods`] for v1.0, [`methods::v03`] for v0.3).
    pub method: String,
    /// Parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> JsonRpcRequest<P> {
    /// A request with an id.
    pub fn new(id: JsonRpcId, method: impl Into<String>, params: P) -> Self {
        JsonRpcRequest {
            jsonrpc: version(),
            id: Some(id),
            method: method.into(),
            params: Some(params),
        }
    }
}

/// A response: a `result` or an `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcResponse<R> {
    /// Always `"2.0"`.
    #[serde(default = "version")]
    pub jsonrpc: String,
    /// The request's id.
    pub id: JsonRpcId,
    /// Outcome.
    #[serde(flatten)]
    pub payload: JsonRpcPayload<R>,
}

/// The `result` / `error` member of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum JsonRpcPayload<R> {
    /// Success.
    Result(R),
    /// Failure.
    Error(JsonRpcError),
}

impl<R> JsonRpcResponse<R> {
    /// A success.
    pub fn result(id: JsonRpcId, result: R) -> Self {
        JsonRpcResponse {
            jsonrpc: version(),
            id,
            payload: JsonRpcPayload::Result(result),
        }
    }
    /// A failure.
    pub fn error(id: JsonRpcId, error: JsonRpcError) -> Self {
        JsonRpcResponse {
            jsonrpc: version(),
            id,
            payload: JsonRpcPayload::Error(error),
        }
    }
}

/// The `error` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcError {
    /// One of [`codes`].
    pub code: i64,
    /// Short description.
    pub message: String,
    /// Details (A2A v1.0 puts a `google.rpc.ErrorInfo` array here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl JsonRpcError {
    /// An error without data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        JsonRpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// An A2A error with the `google.rpc.ErrorInfo` detail v1.0 requires
    /// (`reason` is the error name in UPPER_SNAKE_CASE without `Error`, e.g. `TASK_NOT_FOUND`).
    pub fn a2a(code: i64, reason: &str, message: impl Into<String>) -> Self {
        JsonRpcError {
            code,
            message: message.into(),
            data: Some(serde_json::json!([{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "a2a-protocol.org",
            }])),
        }
    }
}

/// Error codes (JSON-RPC standard and A2A `-32001..=-32009`).
pub mod codes {
    /// Invalid JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Server error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// `TaskNotFoundError`.
    pub const TASK_NOT_FOUND: i64 = -32001;
    /// `TaskNotCancelableError`.
    pub const TASK_NOT_CANCELABLE: i64 = -32002;
    /// `PushNotificationNotSupportedError`.
    pub const PUSH_NOTIFICATION_NOT_SUPPORTED: i64 = -32003;
    /// `UnsupportedOperationError`.
    pub const UNSUPPORTED_OPERATION: i64 = -32004;
    /// `ContentTypeNotSupportedError`.
    pub const CONTENT_TYPE_NOT_SUPPORTED: i64 = -32005;
    /// `InvalidAgentResponseError`.
    pub const INVALID_AGENT_RESPONSE: i64 = -32006;
    /// `ExtendedAgentCardNotConfiguredError`.
    pub const EXTENDED_AGENT_CARD_NOT_CONFIGURED: i64 = -32007;
    /// `ExtensionSupportRequiredError`.
    pub const EXTENSION_SUPPORT_REQUIRED: i64 = -32008;
    /// `VersionNotSupportedError`.
    pub const VERSION_NOT_SUPPORTED: i64 = -32009;
}

/// Method names of the v1.0 JSON-RPC binding.
pub mod methods {
    /// Send a message.
    pub const SEND_MESSAGE: &str = "SendMessage";
    /// Send a message and stream the answer.
    pub const SEND_STREAMING_MESSAGE: &str = "SendStreamingMessage";
    /// Read a task.
    pub const GET_TASK: &str = "GetTask";
    /// List tasks.
    pub const LIST_TASKS: &str = "ListTasks";
    /// Cancel a task.
    pub const CANCEL_TASK: &str = "CancelTask";
    /// Stream a task's updates.
    pub const SUBSCRIBE_TO_TASK: &str = "SubscribeToTask";
    /// Create a push config.
    pub const CREATE_PUSH_CONFIG: &str = "CreateTaskPushNotificationConfig";
    /// Read a push config.
    pub const GET_PUSH_CONFIG: &str = "GetTaskPushNotificationConfig";
    /// List push configs.
    pub const LIST_PUSH_CONFIGS: &str = "ListTaskPushNotificationConfigs";
    /// Delete a push config.
    pub const DELETE_PUSH_CONFIG: &str = "DeleteTaskPushNotificationConfig";
    /// Read the extended agent card.
    pub const GET_EXTENDED_AGENT_CARD: &str = "GetExtendedAgentCard";

    /// Method names of v0.3.
    pub mod v03 {
        /// Send a message.
        pub const SEND_MESSAGE: &str = "message/send";
        /// Send a message and stream the answer.
        pub const SEND_STREAMING_MESSAGE: &str = "message/stream";
        /// Read a task.
        pub const GET_TASK: &str = "tasks/get";
        /// Cancel a task.
        pub const CANCEL_TASK: &str = "tasks/cancel";
        /// Stream a task's updates.
        pub const RESUBSCRIBE: &str = "tasks/resubscribe";
        /// Create a push config.
        pub const SET_PUSH_CONFIG: &str = "tasks/pushNotificationConfig/set";
        /// Read a push config.
        pub const GET_PUSH_CONFIG: &str = "tasks/pushNotificationConfig/get";
        /// List push configs.
        pub const LIST_PUSH_CONFIGS: &str = "tasks/pushNotificationConfig/list";
        /// Delete a push config.
        pub const DELETE_PUSH_CONFIG: &str = "tasks/pushNotificationConfig/delete";
        /// Read the extended agent card.
        pub const GET_EXTENDED_AGENT_CARD: &str = "agent/getAuthenticatedExtendedCard";
    }
}
