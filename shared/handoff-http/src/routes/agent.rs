//! `POST /agent`: one AG-UI run (or A2UI with `X-A2UI: true` / `?a2ui=true`).

use std::sync::Arc;

use agui_protocol::RunAgentInput;
use agui_protocol::lenient::parse_input;
use axum::extract::{Request, State};
use axum::response::Response;
use futures::StreamExt;
use handoff_core::RunOptions;
use handoff_core::codes;
use http::HeaderName;

use super::json_body::read_json_body;
use super::{a2ui_history, background, principal};
use crate::AppState;
use crate::body::{Encoding, sse_response};
use crate::config::HostDeadline;
use crate::error::ApiError;
use crate::request_log::{RequestFacts, RequestId, TraceId};

/// The run's id, for a client that needs it before the first event (exposed by CORS).
const RUN_ID_HEADER: HeaderName = HeaderName::from_static("x-handoff-run-id");

pub(crate) async fn run_agent(
    State(app): State<Arc<AppState>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let body = read_json_body(&app, &parts.headers, body).await?;
    let input =
        parse_input(&body).map_err(|e| ApiError::new(codes::INVALID_INPUT, e.to_string()))?;
    if let Some(background) = background::offered(&app, &parts.headers) {
        return background::start(&app, &parts, input, run_options(&parts)?, background).await;
    }
    let encoding = Encoding::negotiate(&parts.headers, parts.uri.query(), Encoding::AgUi);
    start_run(&app, &parts, input, encoding, run_options(&parts)?).await
}

/// The principal and host deadline of a request, and what its log line shares with the
/// run's (request and trace ids, the counter of store calls).
pub(crate) fn run_options(parts: &http::request::Parts) -> Result<RunOptions, ApiError> {
    let extensions = &parts.extensions;
    Ok(RunOptions {
        deadline_ms: HostDeadline::of(extensions),
        principal: principal(extensions)?,
        agent_id: None,
        request_id: extensions.get::<RequestId>().map(|id| id.0.clone()),
        trace_id: extensions.get::<TraceId>().map(|id| id.0.clone()),
        ..RunOptions::default()
    })
}

/// Starts a run and answers with its stream.
pub(crate) async fn start_run(
    app: &AppState,
    parts: &http::request::Parts,
    input: RunAgentInput,
    encoding: Encoding,
    options: RunOptions,
) -> Result<Response, ApiError> {
    let run_id = input.run_id.clone();
    if let Some(facts) = parts.extensions.get::<Arc<RequestFacts>>() {
        facts.run(&input.thread_id, run_id.as_str(), &options.store_calls);
    }
    tracing::info!(
        thread_id = %input.thread_id,
        run_id = %run_id,
        resume = input.resume_entries().len(),
        deadline_ms = ?options.deadline_ms,
        tenant = %options.principal.tenant,
        subject = %options.principal.subject,
        "run requested"
    );
    // A new run's history is its input; a resumed run's calls were made in earlier runs.
    let history = if input.resume_entries().is_empty() && encoding.needs_history() {
        input.messages.clone()
    } else {
        a2ui_history(app, &options.principal, encoding, &input.thread_id).await?
    };
    let mut events = app.engine.start_shared(input, options).await?.peekable();
    // The head goes out with the first frame rather than alone: one write and one
    // wake-up of the client fewer per run (RUN_STARTED comes at once).
    std::pin::Pin::new(&mut events).peek().await;
    let mut response = sse_response(
        Box::pin(events),
        encoding,
        app.engine.agent_name(),
        &history,
        app.engine.runtime().clone(),
        app.config.keep_alive_ms,
    );
    if let Ok(value) = run_id.as_str().parse() {
        response.headers_mut().insert(RUN_ID_HEADER, value);
    }
    Ok(response)
}
