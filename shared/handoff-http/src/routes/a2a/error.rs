//! The A2A errors of `POST /a2a`, and their one mapping to JSON-RPC error objects.

use a2a_types::jsonrpc::{JsonRpcError, codes};
use handoff_core::CoreError;
use handoff_core::codes::ErrorCode;
use serde_json::json;

use crate::error::ApiError;

/// JSON-RPC code of a Handoff refusal that A2A has no name for (a forbidden answer, a busy
/// thread, an interrupt no longer pending): its `data` names the Handoff code.
pub(crate) const HANDOFF_REFUSAL: i64 = -32050;

/// Why a JSON-RPC call failed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub(crate) enum A2aError {
    /// The body is not JSON.
    Parse(String),
    /// Not a JSON-RPC request object.
    InvalidRequest(String),
    /// No such method.
    MethodNotFound(String),
    /// The params do not fit the method.
    InvalidParams(String),
    /// No such task, or not the caller's to see.
    TaskNotFound(String),
    /// The task already ended.
    TaskNotCancelable(String),
    /// Push-notification configs are not served (yet).
    PushNotSupported,
    /// Not supported here, or not in the task's state.
    Unsupported(String),
    /// A part's media type the agent does not take.
    ContentType(String),
    /// The `A2A-Version` asked for is not served.
    Version(String),
    /// Handoff refused (its code and message, as `POST /agent` would say it).
    Refused(ApiError),
}

impl A2aError {
    /// The JSON-RPC error object (an A2A error carries the `google.rpc.ErrorInfo` detail).
    pub(crate) fn to_jsonrpc(&self) -> JsonRpcError {
        match self {
            A2aError::Parse(m) => {
                JsonRpcError::new(codes::PARSE_ERROR, format!("invalid JSON payload: {m}"))
            }
            A2aError::InvalidRequest(m) => JsonRpcError::new(codes::INVALID_REQUEST, m.clone()),
            A2aError::MethodNotFound(method) => JsonRpcError {
                code: codes::METHOD_NOT_FOUND,
                message: "Method not found".to_owned(),
                data: Some(json!({"method": method})),
            },
            A2aError::InvalidParams(m) => JsonRpcError::new(codes::INVALID_PARAMS, m.clone()),
            A2aError::TaskNotFound(id) => JsonRpcError::a2a(
                codes::TASK_NOT_FOUND,
                "TASK_NOT_FOUND",
                format!("task {id} not found"),
            ),
            A2aError::TaskNotCancelable(m) => {
                JsonRpcError::a2a(codes::TASK_NOT_CANCELABLE, "TASK_NOT_CANCELABLE", m.clone())
            }
            A2aError::PushNotSupported => JsonRpcError::a2a(
                codes::PUSH_NOTIFICATION_NOT_SUPPORTED,
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
                "this agent does not send push notifications",
            ),
            A2aError::Unsupported(m) => JsonRpcError::a2a(
                codes::UNSUPPORTED_OPERATION,
                "UNSUPPORTED_OPERATION",
                m.clone(),
            ),
            A2aError::ContentType(m) => JsonRpcError::a2a(
                codes::CONTENT_TYPE_NOT_SUPPORTED,
                "CONTENT_TYPE_NOT_SUPPORTED",
                m.clone(),
            ),
            A2aError::Version(v) => JsonRpcError::a2a(
                codes::VERSION_NOT_SUPPORTED,
                "VERSION_NOT_SUPPORTED",
                format!("A2A-Version {v} is not supported; this agent speaks 1.0"),
            ),
            A2aError::Refused(err) => refusal(err),
        }
    }
}

/// A Handoff refusal: bad input is `-32602`, a server failure `-32603`, the rest (forbidden,
/// conflicts, limits) [`HANDOFF_REFUSAL`]; `data` names the stable Handoff code either way.
fn refusal(err: &ApiError) -> JsonRpcError {
    let code = err.code();
    let rpc = match code.status {
        400 | 413 | 415 | 422 => codes::INVALID_PARAMS,
        500.. => codes::INTERNAL_ERROR,
        _ => HANDOFF_REFUSAL,
    };
    JsonRpcError {
        code: rpc,
        message: err.message().to_owned(),
        data: Some(json!([{
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": code.name,
            "domain": "handoff",
        }])),
    }
}

impl A2aError {
    /// A stored or produced document that does not (de)serialize.
    pub(crate) fn corrupt(err: impl std::fmt::Display) -> Self {
        A2aError::from(CoreError::CorruptRecord(err.to_string()))
    }

    /// A compare-and-set on a task record lost every retry to another writer.
    pub(crate) fn changed_meanwhile() -> Self {
        A2aError::from(CoreError::ThreadChanged(
            "the task changed meanwhile; send it again".into(),
        ))
    }
}

impl From<ApiError> for A2aError {
    fn from(err: ApiError) -> Self {
        A2aError::Refused(err)
    }
}

impl From<CoreError> for A2aError {
    fn from(err: CoreError) -> Self {
        A2aError::Refused(ApiError::from(err))
    }
}
