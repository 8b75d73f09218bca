//! The errors of `POST /mcp`, and their one mapping to JSON-RPC error objects.

use handoff_core::CoreError;
use handoff_core::codes::{self, ErrorCode};
use serde_json::{Value, json};

use crate::error::ApiError;

pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// 2026-07-28: `Mcp-Method` / `Mcp-Name` disagree with the body.
pub(crate) const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: a protocol version this server does not speak.
pub(crate) const UNSUPPORTED_VERSION: i64 = -32022;
/// A Handoff refusal JSON-RPC has no name for (forbidden, a busy thread, an interrupt no
/// longer pending): in the implementation range, outside the spec's reserved -32020..-32099.
pub(crate) const HANDOFF_REFUSAL: i64 = -32010;

/// Why a JSON-RPC call failed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum McpError {
    Parse(String),
    InvalidRequest(String),
    MethodNotFound(String),
    InvalidParams(String),
    /// The protocol version asked for, and the ones served.
    Version(String),
    HeaderMismatch(String),
    /// Handoff refused (its code and message, as `POST /agent` would say it).
    Refused(ApiError),
}

impl McpError {
    /// The JSON-RPC error object. A Handoff refusal names its stable code in `data.code`.
    pub(crate) fn to_jsonrpc(&self) -> Value {
        let (code, message, data) = match self {
            McpError::Parse(m) => (PARSE_ERROR, format!("invalid JSON: {m}"), None),
            McpError::InvalidRequest(m) => (INVALID_REQUEST, m.clone(), None),
            McpError::MethodNotFound(m) => (
                METHOD_NOT_FOUND,
                format!("method not found: {m}"),
                Some(json!({"method": m})),
            ),
            McpError::InvalidParams(m) => (INVALID_PARAMS, m.clone(), None),
            McpError::Version(asked) => (
                UNSUPPORTED_VERSION,
                format!("protocol version {asked} is not supported"),
                Some(json!({"supported": super::SERVED, "requested": asked})),
            ),
            McpError::HeaderMismatch(m) => (HEADER_MISMATCH, m.clone(), None),
            McpError::Refused(err) => {
                let code = err.code();
                let rpc = match code.status {
                    400 | 413 | 415 | 422 => INVALID_PARAMS,
                    500.. => INTERNAL_ERROR,
                    _ => HANDOFF_REFUSAL,
                };
                (
                    rpc,
                    err.message().to_owned(),
                    Some(json!({"code": code.name})),
                )
            }
        };
        let mut error = json!({"code": code, "message": message});
        if let Some(data) = data {
            error["data"] = data;
        }
        error
    }

    /// A `requestState` that does not hold for this call: never run.
    pub(crate) fn bad_state(message: impl Into<String>) -> Self {
        McpError::Refused(ApiError::new(codes::REQUEST_STATE_INVALID, message))
    }
}

impl From<ApiError> for McpError {
    fn from(err: ApiError) -> Self {
        McpError::Refused(err)
    }
}

impl From<CoreError> for McpError {
    fn from(err: CoreError) -> Self {
        McpError::Refused(ApiError::from(err))
    }
}
