//! Background runs: `POST /agent` with `Prefer: respond-async` (RFC 7240) is answered
//! `202 {"threadId","runId"}` once the run is claimed, and the run goes on with nobody
//! connected, on the host's [`Runtime::background`](handoff_core::Runtime::background)
//! (the dev server's tasks, a Worker's `waitUntil`). At the host's deadline it is handed
//! over, not cancelled, and the next sweep finishes it. A host whose work ends with the
//! response (Lambda, [`BackgroundMode::Detached`]) only claims it and hands it over at
//! once: its next sweep runs it. Other hosts ignore the preference (RFC 7240 lets a
//! server) and stream.

use std::sync::Arc;

use agui_protocol::RunAgentInput;
use axum::Json;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use handoff_core::{RunOptions, Spawn};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::json;

use crate::AppState;
use crate::config::BackgroundMode;
use crate::error::ApiError;
use crate::request_log::RequestFacts;

/// `Preference-Applied` (RFC 7240 §3).
const PREFERENCE_APPLIED: HeaderName = HeaderName::from_static("preference-applied");

/// What a path segment keeps as it is: the unreserved characters (RFC 3986 §2.3).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// How a background run goes on.
pub(crate) enum Background {
    /// Driven by the host's executor.
    Spawned(Arc<dyn Spawn>),
    /// Handed over to the host's next sweep.
    Detached,
}

/// How the run goes on when the request prefers `respond-async` and the host offers
/// background runs; `None` runs it as usual (streamed).
pub(crate) fn offered(app: &AppState, headers: &HeaderMap) -> Option<Background> {
    if !prefers_async(headers) {
        return None;
    }
    match app.engine.runtime().background.clone() {
        Some(spawn) => Some(Background::Spawned(spawn)),
        None if app.config.background == BackgroundMode::Detached => Some(Background::Detached),
        None => None,
    }
}

/// Whether a `Prefer` header names `respond-async`, among any other preferences
/// (`respond-async, wait=5`), in any case, in any of several `Prefer` headers.
pub(crate) fn prefers_async(headers: &HeaderMap) -> bool {
    headers
        .get_all("prefer")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|preference| preference.split([';', '=']).next())
        .any(|token| token.trim().eq_ignore_ascii_case("respond-async"))
}

/// Claims the run, hands its driving to `background` (which reads it to its end, so it
/// needs no client) and answers `202` with where its status is.
pub(crate) async fn start(
    app: &AppState,
    parts: &http::request::Parts,
    input: RunAgentInput,
    mut options: RunOptions,
    background: Background,
) -> Result<Response, ApiError> {
    // Nobody streams it: at the deadline it is handed over, not cancelled.
    options.hand_off_at_deadline = true;
    if let Some(budget) = app.config.background_budget_ms {
        let until = app.engine.runtime().now_ms().saturating_add(budget);
        options.deadline_ms = Some(options.deadline_ms.map_or(until, |d| d.min(until)));
    }
    let thread_id = input.thread_id.to_string();
    let run_id = input.run_id.to_string();
    if let Some(facts) = parts.extensions.get::<Arc<RequestFacts>>() {
        facts.run(&thread_id, &run_id, &options.store_calls);
    }
    tracing::info!(
        thread_id = %thread_id,
        run_id = %run_id,
        resume = input.resume_entries().len(),
        tenant = %options.principal.tenant,
        subject = %options.principal.subject,
        "background run requested"
    );
    // Errors (bad input, a busy thread, a refused answer) come back here, before a 202.
    match background {
        Background::Spawned(spawn) => {
            let events = app.engine.start_shared(input, options).await?;
            drive(&spawn, events);
        }
        Background::Detached => app.engine.start_detached(input, options).await?,
    }
    let location = format!(
        "/threads/{}/runs/{}",
        utf8_percent_encode(&thread_id, SEGMENT),
        utf8_percent_encode(&run_id, SEGMENT)
    );
    let body = json!({ "threadId": thread_id, "runId": run_id });
    let mut response = (StatusCode::ACCEPTED, Json(body)).into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&location) {
        headers.insert(header::LOCATION, value);
    }
    headers.insert(
        PREFERENCE_APPLIED,
        HeaderValue::from_static("respond-async"),
    );
    Ok(response)
}

/// Reads `events` to their end on `background`: the run goes on with nobody connected
/// (a schedule's tick runs the same way, `crate::schedules`).
pub(crate) fn drive(background: &Arc<dyn Spawn>, events: handoff_core::SharedRunStream) {
    background.spawn(Box::pin(events.for_each(|_| futures::future::ready(()))));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefer(values: &[&str]) -> bool {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("prefer", HeaderValue::from_str(value).unwrap());
        }
        prefers_async(&headers)
    }

    #[test]
    fn respond_async_is_found_among_other_preferences() {
        assert!(prefer(&["respond-async"]));
        assert!(prefer(&["respond-async, wait=5"]));
        assert!(prefer(&["wait=5 , Respond-Async"]));
        assert!(prefer(&["return=minimal", "respond-async; foo=bar"]));
        assert!(!prefer(&[]));
        assert!(!prefer(&["wait=5"]));
        assert!(!prefer(&["respond-asynchronously"]));
        assert!(!prefer(&["handling=respond-async"]));
    }
}
