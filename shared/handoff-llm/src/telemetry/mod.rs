//! The spans of a model call (`chat {model}`) and of a backend tool (`execute_tool
//! {tool}`), named and attributed as OpenTelemetry's GenAI conventions say. Message
//! contents and tool arguments are recorded only when the host opts in ([`content`]).

use agui_protocol::Message;
use handoff_core::RunContext;
use serde_json::Value;
use tracing::field::Empty;

use crate::Provider;
use crate::delta::FinishReason;
use crate::emit::ModelTurn;

pub(crate) mod content;

pub(crate) fn chat_span(provider: &Provider, ctx: &RunContext) -> tracing::Span {
    let model = provider.model();
    tracing::info_span!(
        target: "handoff::llm",
        "chat",
        otel.name = %format_args!("chat {model}"),
        otel.kind = "client",
        otel.status_code = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider.name(),
        gen_ai.request.model = model,
        gen_ai.request.stream = true,
        gen_ai.conversation.id = %ctx.thread_id(),
        gen_ai.response.finish_reasons = Empty,
        gen_ai.response.time_to_first_chunk = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.usage.reasoning.output_tokens = Empty,
        gen_ai.system_instructions = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        error.type = Empty,
    )
}

/// What the model is sent, when contents are captured.
pub(crate) fn chat_input(span: &tracing::Span, system: Option<&str>, messages: &[Message]) {
    if span.is_disabled() || !content::capture_message_content() {
        return;
    }
    if let Some(system) = system {
        span.record(
            "gen_ai.system_instructions",
            content::system_instructions(system),
        );
    }
    span.record("gen_ai.input.messages", content::input_messages(messages));
}

/// Seconds from the request to the first chunk of the answer.
pub(crate) fn first_chunk(span: &tracing::Span, started_ms: u64, now_ms: u64) {
    let seconds = now_ms.saturating_sub(started_ms) as f64 / 1000.0;
    span.record("gen_ai.response.time_to_first_chunk", seconds);
}

pub(crate) fn chat_ended(span: &tracing::Span, turn: &ModelTurn) {
    if span.is_disabled() {
        return;
    }
    let reason = turn.finish_reason.as_ref().map(finish_reason);
    if let Some(reason) = reason {
        span.record("gen_ai.response.finish_reasons", reason);
    }
    if content::capture_message_content() {
        span.record(
            "gen_ai.output.messages",
            content::output_messages(turn, reason),
        );
    }
    let usage = &turn.usage;
    let counts = [
        ("gen_ai.usage.input_tokens", usage.input_tokens),
        ("gen_ai.usage.output_tokens", usage.output_tokens),
        (
            "gen_ai.usage.cache_read.input_tokens",
            usage.cached_input_tokens,
        ),
        (
            "gen_ai.usage.cache_creation.input_tokens",
            usage.cache_write_input_tokens,
        ),
        (
            "gen_ai.usage.reasoning.output_tokens",
            usage.reasoning_tokens,
        ),
    ];
    for (name, count) in counts {
        if let Some(count) = count {
            span.record(name, count);
        }
    }
}

/// A failed span: `error.type` is the error's stable code.
pub(crate) fn failed(span: &tracing::Span, code: &str) {
    span.record("otel.status_code", "ERROR");
    span.record("error.type", code);
}

fn finish_reason(reason: &FinishReason) -> &str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::Length => "length",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Other(other) => other,
    }
}

pub(crate) fn tool_span(tool: &str, call_id: &str) -> tracing::Span {
    tracing::info_span!(
        target: "handoff::llm",
        "execute_tool",
        otel.name = %format_args!("execute_tool {tool}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        gen_ai.tool.type = "function",
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        error.type = Empty,
    )
}

/// A tool's arguments and result, when contents are captured.
pub(crate) fn tool_content(span: &tracing::Span, arguments: &Value, result: Option<&Value>) {
    if span.is_disabled() || !content::capture_message_content() {
        return;
    }
    span.record("gen_ai.tool.call.arguments", arguments.to_string());
    if let Some(result) = result {
        span.record("gen_ai.tool.call.result", result.to_string());
    }
}
