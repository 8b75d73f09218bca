//! What a host provides to reach MCP servers: one POST, answered whole.

use async_trait::async_trait;
use futures::{Stream, StreamExt};

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

/// Reads a body that arrives in `chunks` until it ends, or until it is over `cap` bytes:
/// then [`McpHttpError::TooLarge`] at once, without reading on, so a server cannot make
/// a host hold more than `cap` plus one chunk. A chunk that fails is an answer that never
/// came whole ([`McpHttpError::InDoubt`]). For hosts whose client hands out the body in
/// chunks (`fetch` on Workers); `ureq` caps its reader itself.
pub async fn read_capped<S, E>(chunks: S, cap: usize) -> Result<Vec<u8>, McpHttpError>
where
    S: Stream<Item = Result<Vec<u8>, E>>,
    E: std::fmt::Display,
{
    let mut chunks = std::pin::pin!(chunks);
    let mut body = Vec::new();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| McpHttpError::InDoubt(e.to_string()))?;
        if chunk.len() > cap.saturating_sub(body.len()) {
            return Err(McpHttpError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use futures::executor::block_on;
    use futures::stream;

    use super::*;

    /// An endless body in `size`-byte chunks, counting how many were read; past `limit`
    /// chunks it fails, as a reader that never stops would otherwise run forever.
    fn endless<'a>(
        size: usize,
        limit: usize,
        read: &'a Cell<usize>,
    ) -> impl Stream<Item = Result<Vec<u8>, String>> + 'a {
        stream::repeat_with(move || {
            read.set(read.get() + 1);
            match read.get() > limit {
                true => Err("read on past the cap".to_owned()),
                false => Ok(vec![b'x'; size]),
            }
        })
    }

    #[test]
    fn reading_stops_at_the_first_chunk_over_the_cap() {
        let read = Cell::new(0);
        let answer = block_on(read_capped(endless(4, 1_000, &read), 10));
        assert_eq!(answer, Err(McpHttpError::TooLarge));
        assert_eq!(read.get(), 3, "4 + 4 fit in 10, the third chunk is over");
    }

    #[test]
    fn a_body_up_to_the_cap_is_read_whole_and_a_broken_one_is_in_doubt() {
        let chunks = stream::iter([Ok(b"abcd".to_vec()), Ok(Vec::new()), Ok(b"efghij".to_vec())]);
        let body = block_on(read_capped::<_, String>(chunks, 10));
        assert_eq!(body.as_deref(), Ok(&b"abcdefghij"[..]));
        let chunks = stream::iter([Ok(b"ab".to_vec()), Err("connection reset")]);
        assert_eq!(
            block_on(read_capped(chunks, 10)),
            Err(McpHttpError::InDoubt("connection reset".to_owned()))
        );
        let empty = stream::iter(Vec::<Result<Vec<u8>, String>>::new());
        assert_eq!(block_on(read_capped(empty, 0)), Ok(Vec::new()));
    }
}
