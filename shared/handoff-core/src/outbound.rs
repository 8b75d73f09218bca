//! The one outbound HTTP trait every caller goes through (A2A delegation, key sets,
//! model providers, MCP servers and their OAuth tokens, the trace exporter), on
//! `http::Request` / `http::Response`. Hosts implement it once: `ureq` natively, `fetch`
//! on Workers. No I/O here.
//!
//! The answer's body is a stream, so a model's answer reaches the run as it arrives;
//! callers that want it whole read it with [`read_capped`], which stops at their cap.
//! Header values that carry credentials are marked sensitive ([`sensitive`]), so a
//! request's `Debug` never prints them.

use std::time::Duration;

use async_trait::async_trait;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use http::HeaderValue;

/// An answer's body, chunk by chunk.
pub type Body = BoxStream<'static, Result<Vec<u8>, OutboundError>>;

/// How long a request may take, its body's reading included: a request extension
/// (`request.extensions_mut().insert(Timeout(..))`). Without one, the host's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeout(pub Duration);

/// Why a request got no (whole) answer, as far as "did the server act?" goes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutboundError {
    /// The outbound guard refused the URL or its addresses: nothing was sent.
    #[error("refused: {0}")]
    Refused(String),
    /// Nothing was sent: the name did not resolve, the connection was refused or
    /// timed out, the request could not be built.
    #[error("not sent: {0}")]
    NotSent(String),
    /// Sent, and the answer never came whole (a timeout, a broken connection): the
    /// server may have acted.
    #[error("no answer: {0}")]
    InDoubt(String),
    /// The answer's body was over the caller's cap (the server did answer).
    #[error("answer over {0} bytes")]
    TooLarge(usize),
}

/// A host's HTTP client.
#[async_trait]
pub trait Outbound: Send + Sync + 'static {
    /// Sends `request`; any HTTP status is `Ok`. Implementations apply the outbound URL
    /// guard (no private, loopback or link-local address after DNS unless the host
    /// allows it), follow no redirects, add the current trace's `traceparent`, and
    /// time out after the request's [`Timeout`] (the body's reading included).
    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError>;
}

/// A body that is already whole (test fakes, hosts that read it at once).
pub fn whole(bytes: Vec<u8>) -> Body {
    futures::stream::once(async move { Ok(bytes) }).boxed()
}

/// A header value that carries a credential: `Debug` prints it as `Sensitive`.
pub fn sensitive(value: &str) -> Result<HeaderValue, http::header::InvalidHeaderValue> {
    let mut value = HeaderValue::from_str(value)?;
    value.set_sensitive(true);
    Ok(value)
}

/// Reads `response`'s body until it ends, or until it is over `cap` bytes: then
/// [`OutboundError::TooLarge`] at once, without reading on, so a server cannot make a
/// host hold more than `cap` plus one chunk. A chunk that fails is an answer that never
/// came whole (its error, [`OutboundError::InDoubt`] from the hosts).
pub async fn read_capped(
    response: http::Response<Body>,
    cap: usize,
) -> Result<http::Response<Vec<u8>>, OutboundError> {
    let (parts, chunks) = response.into_parts();
    let body = collect_capped(chunks, cap).await?;
    Ok(http::Response::from_parts(parts, body))
}

async fn collect_capped<S>(chunks: S, cap: usize) -> Result<Vec<u8>, OutboundError>
where
    S: Stream<Item = Result<Vec<u8>, OutboundError>>,
{
    let mut chunks = std::pin::pin!(chunks);
    let mut body = Vec::new();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk?;
        if chunk.len() > cap.saturating_sub(body.len()) {
            return Err(OutboundError::TooLarge(cap));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures::executor::block_on;
    use futures::stream;

    use super::*;

    fn answer(body: Body) -> http::Response<Body> {
        http::Response::new(body)
    }

    /// An endless body in `size`-byte chunks, counting how many were read; past `limit`
    /// chunks it fails, as a reader that never stops would otherwise run forever.
    fn endless(size: usize, limit: usize, read: Arc<AtomicUsize>) -> Body {
        stream::repeat_with(
            move || match read.fetch_add(1, Ordering::SeqCst) + 1 > limit {
                true => Err(OutboundError::InDoubt("read on past the cap".to_owned())),
                false => Ok(vec![b'x'; size]),
            },
        )
        .boxed()
    }

    #[test]
    fn reading_stops_at_the_first_chunk_over_the_cap() {
        let read = Arc::new(AtomicUsize::new(0));
        let answer = block_on(read_capped(answer(endless(4, 1_000, read.clone())), 10));
        assert_eq!(answer.unwrap_err(), OutboundError::TooLarge(10));
        assert_eq!(
            read.load(Ordering::SeqCst),
            3,
            "4 + 4 fit in 10, the third chunk is over"
        );
    }

    #[test]
    fn a_body_up_to_the_cap_is_read_whole_and_a_broken_one_is_in_doubt() {
        let chunks = stream::iter([Ok(b"abcd".to_vec()), Ok(Vec::new()), Ok(b"efghij".to_vec())]);
        let mut head = answer(chunks.boxed());
        *head.status_mut() = http::StatusCode::CREATED;
        let read = block_on(read_capped(head, 10)).unwrap();
        assert_eq!(read.status(), 201, "the head is kept");
        assert_eq!(read.body(), b"abcdefghij");
        let broken = OutboundError::InDoubt("connection reset".to_owned());
        let chunks = stream::iter([Ok(b"ab".to_vec()), Err(broken.clone())]);
        assert_eq!(
            block_on(read_capped(answer(chunks.boxed()), 10)).unwrap_err(),
            broken
        );
        let empty = block_on(read_capped(answer(stream::empty().boxed()), 0)).unwrap();
        assert!(empty.body().is_empty());
    }

    #[test]
    fn a_sensitive_header_is_hidden_from_debug() {
        let mut request = http::Request::new(Vec::<u8>::new());
        let key = sensitive("Bearer sk-secret").unwrap();
        request.headers_mut().insert("authorization", key);
        let shown = format!("{request:?}");
        assert!(!shown.contains("sk-secret"), "{shown}");
        assert!(shown.contains("authorization"), "{shown}");
    }
}
