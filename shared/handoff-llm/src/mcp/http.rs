//! What a host provides to reach MCP servers: one POST, answered whole.

use async_trait::async_trait;

/// Largest MCP answer a host reads (a larger one is [`McpHttpError::TooLarge`]); results
/// are then cut to [`super::MAX_RESULT_BYTES`] for the model.
pub const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// One POST to an MCP endpoint.
#[derive(Clone, PartialEq, Eq)]
pub struct McpRequest {
    /// The server's endpoint (checked by the host's outbound guard before connecting).
    pub url: String,
    /// Headers, the server's own credential among them (never log their values).
    pub headers: Vec<(String, String)>,
    /// The JSON-RPC message.
    pub body: Vec<u8>,
    /// Give up after this long, the body's reading included.
    pub timeout_ms: u64,
}

impl std::fmt::Debug for McpRequest {
    /// Without header values: they carry the server's token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRequest")
            .field("url", &self.url)
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("timeout_ms", &self.timeout_ms)
            .finish_non_exhaustive()
    }
}

/// One answer, read whole (an SSE answer ends when the server closes it after the
/// response).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpResponse {
    /// The status.
    pub status: u16,
    /// `Content-Type` (empty when absent).
    pub content_type: String,
    /// `Mcp-Session-Id`, if the server sent one.
    pub session_id: Option<String>,
    /// The body (at most [`MAX_ANSWER_BYTES`]).
    pub body: Vec<u8>,
}

/// Why a POST got no answer, as far as "did the server act?" goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpHttpError {
    /// Nothing was sent: the URL was refused by the outbound guard, the name did not
    /// resolve, the connection was refused.
    NotSent(String),
    /// Sent, and the answer never came whole (a timeout, a broken connection): the
    /// server may have acted.
    InDoubt(String),
    /// The answer was over [`MAX_ANSWER_BYTES`] (the server did answer).
    TooLarge,
}

impl std::fmt::Display for McpHttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpHttpError::NotSent(why) => write!(f, "not sent: {why}"),
            McpHttpError::InDoubt(why) => write!(f, "no answer: {why}"),
            McpHttpError::TooLarge => write!(f, "answer over {MAX_ANSWER_BYTES} bytes"),
        }
    }
}

/// A host's HTTP client for MCP servers: `ureq` natively, `fetch` on Workers. It must
/// apply the outbound guard (no private or loopback addresses unless allowed, no
/// redirects, no proxy), time out after [`McpRequest::timeout_ms`] and cap the body.
#[async_trait]
pub trait McpHttp: Send + Sync + 'static {
    /// Sends `request`; any HTTP status is an `Ok`.
    async fn post(&self, request: McpRequest) -> Result<McpResponse, McpHttpError>;
}
