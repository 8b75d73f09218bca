//! Resuming an SSE answer the server closed before the response (session revisions,
//! 2025-11-25's polling: SEP-1699).
//!
//! A server may answer a POST with an event stream, send an event with an `id` (and a
//! `retry` delay), and close it before the response, to free the connection. The client
//! then waits `retry` ms and opens a GET stream with `Last-Event-ID`: the server sends
//! what followed, the response among it. The GET stream may stay open after it, so it is
//! read as it arrives and left once the response is there. At most [`MAX_RESUMES`]
//! reconnections, each bounded by the request's time limit; a stream without any event id
//! cannot be resumed. 2026-07-28 has no resumption: a broken stream is a lost request.

use agui_protocol::sse::SseDecoder;
use futures::StreamExt;
use handoff_core::outbound::{Outbound, OutboundError, Timeout};
use serde_json::Value;
use std::time::Duration;

use super::MAX_ANSWER_BYTES;

/// Reconnections for one request.
pub const MAX_RESUMES: usize = 3;
/// The wait before reconnecting when the server named none.
pub const DEFAULT_RETRY_MS: u64 = 1_000;
/// The longest `retry` honoured (a server asking for more is waited on this long).
const MAX_RETRY_MS: u64 = 10_000;

/// Where an event stream stopped: its last event id and `retry` delay.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Position {
    pub(crate) last_event_id: Option<String>,
    pub(crate) retry_ms: Option<u64>,
}

impl Position {
    /// Updates the position from the `id:` and `retry:` fields in `body`.
    pub(crate) fn read(&mut self, body: &[u8]) {
        for line in String::from_utf8_lossy(body).lines() {
            let line = line.trim_end_matches('\r');
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => continue,
            };
            match field {
                "id" if !value.contains('\0') => self.last_event_id = Some(value.to_owned()),
                "retry" => {
                    if let Ok(ms) = value.trim().parse() {
                        self.retry_ms = Some(ms);
                    }
                }
                _ => {}
            }
        }
    }

    /// How long to wait before reconnecting.
    pub(crate) fn wait_ms(&self) -> u64 {
        self.retry_ms.unwrap_or(DEFAULT_RETRY_MS).min(MAX_RETRY_MS)
    }
}

/// Reads the GET stream `request` opens until the response to request `id` arrives:
/// `Ok(Some(message))`, or `Ok(None)` when the stream ended first (`position` then says
/// where). Bounded by `timeout_ms` and [`MAX_ANSWER_BYTES`].
pub(crate) async fn follow(
    http: &dyn Outbound,
    mut request: http::Request<Vec<u8>>,
    id: u64,
    timeout_ms: u64,
    position: &mut Position,
) -> Result<Option<Value>, OutboundError> {
    let timeout = Duration::from_millis(timeout_ms.max(1));
    request.extensions_mut().insert(Timeout(timeout));
    let response = http.send(request).await?;
    if !response.status().is_success() {
        return Ok(None);
    }
    let mut body = response.into_body();
    let mut decoder = SseDecoder::new();
    let mut read = 0usize;
    while let Some(chunk) = body.next().await {
        let chunk = chunk?;
        read += chunk.len();
        if read > MAX_ANSWER_BYTES {
            return Err(OutboundError::TooLarge(MAX_ANSWER_BYTES));
        }
        position.read(&chunk);
        for frame in decoder.feed(&chunk) {
            let Ok(message) = serde_json::from_str::<Value>(&frame.data) else {
                continue;
            };
            let response = message.get("method").is_none()
                && message.get("id").and_then(Value::as_u64) == Some(id);
            if response {
                return Ok(Some(message));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_id_and_retry_are_kept() {
        let mut position = Position::default();
        position.read(b"id: event-1\nretry: 500\ndata: \n\n");
        assert_eq!(position.last_event_id.as_deref(), Some("event-1"));
        assert_eq!(position.wait_ms(), 500);
        position.read(b"event: message\r\nid: e2\r\ndata: {}\r\n\r\n");
        assert_eq!(position.last_event_id.as_deref(), Some("e2"));
        assert_eq!(Position::default().wait_ms(), DEFAULT_RETRY_MS);
        let mut long = Position::default();
        long.read(b"retry: 600000\n");
        assert_eq!(long.wait_ms(), MAX_RETRY_MS);
    }
}
