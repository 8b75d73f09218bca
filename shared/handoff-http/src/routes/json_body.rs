//! Reading a JSON request body under the size limit, and refusing one so that the
//! client reads the refusal.
//!
//! Answering while the client is still sending makes the server close a connection
//! with unread bytes, which resets it: the client sees EPIPE or ECONNRESET instead
//! of the 413, and workerd restarts the request's isolate (the next request gets a
//! 503). So a refused body is read to its end and thrown away first, within bounds
//! that keep a huge or stalled upload from holding the request; past them the
//! connection is closed as before.

use std::pin::pin;

use axum::body::{Body, BodyDataStream, Bytes};
use bytes::BytesMut;
use futures::StreamExt;
use futures::future::{Either, select};
use handoff_core::Sleep;
use http::{HeaderMap, StatusCode, header};

use crate::AppState;
use crate::error::ApiError;

/// At most this much of a refused body is read and discarded.
const DRAIN_MAX_BYTES: usize = 8 * 1024 * 1024;
/// The time the discarding may take in all.
const DRAIN_MAX_MS: u64 = 5_000;
/// A pause this long means the client stopped sending: answer now.
const DRAIN_IDLE_MS: u64 = 1_000;

/// Reads a JSON body: 415 unless JSON, 413 over the limit.
pub(crate) async fn read_json_body(
    app: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, ApiError> {
    let limit = app.config.body_limit;
    let sleep = app.engine.runtime().sleep.as_ref();
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "BODY_TOO_LARGE",
            format!("the body exceeds {limit} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let refusal = if !is_json(headers) {
        Some(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UNSUPPORTED_MEDIA_TYPE",
            "send the body as application/json",
        ))
    } else if declared.is_some_and(|len| len > limit) {
        Some(too_large())
    } else {
        None
    };
    if let Some(refusal) = refusal {
        // A client that asked `Expect: 100-continue` waits for a go-ahead before it
        // sends the body; this answer replaces it, so there is nothing to discard.
        if !expects_continue(headers) {
            discard(body.into_data_stream(), declared, sleep).await;
        }
        return Err(refusal);
    }
    let mut stream = body.into_data_stream();
    let mut kept = BytesMut::new();
    while let Some(chunk) = stream.next().await {
        // A body that fails to arrive (the client went away) gets the same answer as before.
        let chunk = chunk.map_err(|_| too_large())?;
        let read = kept.len() + chunk.len();
        if read > limit {
            discard(stream, declared.map(|len| len.saturating_sub(read)), sleep).await;
            return Err(too_large());
        }
        kept.extend_from_slice(&chunk);
    }
    Ok(kept.freeze())
}

fn is_json(headers: &HeaderMap) -> bool {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json")
}

fn expects_continue(headers: &HeaderMap) -> bool {
    headers
        .get(header::EXPECT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
}

/// Reads the rest of a refused body and throws it away, within the drain bounds.
/// `remaining` is what the client declared is still to come, if it did.
async fn discard(mut stream: BodyDataStream, remaining: Option<usize>, sleep: &dyn Sleep) {
    if remaining.is_some_and(|len| len > DRAIN_MAX_BYTES) {
        return; // It could not be read to its end anyway.
    }
    let drain = async {
        let mut drained = 0;
        while drained <= DRAIN_MAX_BYTES {
            match select(stream.next(), sleep.sleep(DRAIN_IDLE_MS)).await {
                Either::Left((Some(Ok(chunk)), _)) => drained += chunk.len(),
                // The end of the body, a broken one, or a client that paused.
                _ => return,
            }
        }
    };
    select(pin!(drain), sleep.sleep(DRAIN_MAX_MS)).await;
}
