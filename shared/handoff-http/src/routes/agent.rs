//! `POST /agent`: one AG-UI run (or A2UI with `X-A2UI: true` / `?a2ui=true`).

use agui_protocol::RunAgentInput;
use agui_protocol::lenient::parse_input;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::response::Response;
use handoff_core::RunOptions;
use http::{HeaderMap, StatusCode, header};

use super::a2ui_history;
use crate::AppState;
use crate::body::{Encoding, sse_response};
use crate::config::HostDeadline;
use crate::error::ApiError;

pub(crate) async fn run_agent(
    State(app): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let body = read_json_body(&parts.headers, body, app.config.body_limit).await?;
    let input = parse_input(&body)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "INVALID_INPUT", e.to_string()))?;
    check_ids(&input)?;
    let encoding = Encoding::negotiate(&parts.headers, parts.uri.query(), Encoding::AgUi);
    let deadline = HostDeadline::of(&parts.extensions);
    start_run(&app, input, encoding, deadline).await
}

/// Starts a run and answers with its stream.
pub(crate) async fn start_run(
    app: &AppState,
    input: RunAgentInput,
    encoding: Encoding,
    deadline_ms: Option<u64>,
) -> Result<Response, ApiError> {
    let run_id = input.run_id.clone();
    tracing::info!(
        thread_id = %input.thread_id,
        run_id = %run_id,
        resume = input.resume_entries().len(),
        deadline_ms = ?deadline_ms,
        "run requested"
    );
    // A new run's history is its input; a resumed run's calls were made in earlier runs.
    let history = if input.resume_entries().is_empty() && encoding != Encoding::AgUi {
        input.messages.clone()
    } else {
        a2ui_history(app, encoding, &input.thread_id).await?
    };
    let events = app.engine.start(input, RunOptions { deadline_ms }).await?;
    let mut response = sse_response(
        events,
        encoding,
        app.engine.agent_name(),
        &history,
        app.engine.runtime().clone(),
        app.config.keep_alive_ms,
    );
    if let Ok(value) = run_id.as_str().parse() {
        response.headers_mut().insert("x-handoff-run-id", value);
    }
    Ok(response)
}

/// Reads a JSON body: 415 unless JSON, 413 over the limit.
pub(crate) async fn read_json_body(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
) -> Result<Bytes, ApiError> {
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
    if essence != "application/json" && !essence.ends_with("+json") {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UNSUPPORTED_MEDIA_TYPE",
            "send the body as application/json",
        ));
    }
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
    if declared.is_some_and(|len| len > limit) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, limit)
        .await
        .map_err(|_| too_large())
}

fn check_ids(input: &RunAgentInput) -> Result<(), ApiError> {
    for (name, value) in [
        ("threadId", input.thread_id.as_str()),
        ("runId", input.run_id.as_str()),
    ] {
        if value.trim().is_empty() || value.len() > 256 {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "INVALID_INPUT",
                format!("{name} must be 1 to 256 characters"),
            ));
        }
    }
    Ok(())
}
