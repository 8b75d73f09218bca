//! One call of a backend tool: inside `ctx.effect` (once across retries and instances),
//! traced as an `execute_tool` span.

use std::sync::Arc;

use agui_protocol::ToolCallId;
use handoff_core::{AgentError, RunContext};
use serde_json::{Value, json};
use tracing::Instrument;

use crate::mcp::{self, InputAnswers};
use crate::telemetry;
use crate::tool::{BackendTool, ToolError};

/// Runs `tool` with `args` for `call` (a retry answering a question when `retry` says
/// which attempt and with what answers).
pub(crate) async fn execute(
    ctx: &mut RunContext,
    call: &ToolCallId,
    tool: &BackendTool,
    args: Value,
    retry: Option<(u64, InputAnswers)>,
) -> Result<Value, AgentError> {
    let span = telemetry::tool_span(&tool.spec.name, call.as_str());
    let captured = telemetry::content::capture_message_content().then(|| args.clone());
    let result = execute_once(ctx, call, tool, args, retry)
        .instrument(span.clone())
        .await;
    if let Some(arguments) = &captured {
        telemetry::tool_content(&span, arguments, result.as_ref().ok());
    }
    match &result {
        Err(_) => telemetry::failed(&span, "effect_failed"),
        Ok(value) if value.get("error").is_some() => telemetry::failed(&span, "tool_error"),
        Ok(_) => {}
    }
    result
}

/// The call under `tool-{call}`, or attempt `n` answering a question under
/// `tool-{call}-input-{n}` ([`mcp::input`]).
async fn execute_once(
    ctx: &mut RunContext,
    call: &ToolCallId,
    tool: &BackendTool,
    args: Value,
    retry: Option<(u64, InputAnswers)>,
) -> Result<Value, AgentError> {
    let handler = tool.handler.clone();
    let retrying = tool.retry.clone();
    let key = mcp::input::effect_key(call, retry.as_ref().map_or(0, |(n, _)| *n));
    // What the handler said, if it failed: a call that did nothing is the model's to
    // hear about, one that may have acted fails the run (its effect stays in doubt).
    let refused = Arc::new(std::sync::Mutex::new(None));
    let seen = refused.clone();
    let outcome = ctx
        .effect(&key, move |idempotency_key| async move {
            let result = match (retry, retrying) {
                (None, _) => handler(args, idempotency_key).await,
                (Some((_, answers)), Some(again)) => again(args, answers, idempotency_key).await,
                (Some(_), None) => Err(ToolError::NotExecuted(
                    "this tool cannot be asked again".to_owned(),
                )),
            };
            if let Err(ToolError::NotExecuted(message)) = &result {
                *seen
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(message.clone());
            }
            result
        })
        .await;
    let refused = refused
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    match (outcome, refused) {
        (Err(_), Some(message)) => Ok(json!({ "error": message })),
        (outcome, _) => outcome,
    }
}
