//! The run's span, `invoke_agent {agent}` (OpenTelemetry's GenAI conventions), and the
//! one log line each run ends with.
//!
//! Spans are `tracing` spans whose field names are the conventions' attribute names;
//! `otel.name` and `otel.kind` are the exporter's span name and kind. A host that exports
//! traces (OTLP on native hosts, log lines on Workers) turns them into its format; the
//! core only names what happened. The span of a run is a child of whatever span is
//! current where the run starts (the host's request span, which continues the caller's
//! `traceparent`).

use agui_protocol::{Event, RunAgentInput, RunFinishedOutcome, RunId};
use tracing::field::Empty;

use super::RunOptions;
use crate::context::RunContext;
use crate::store::traced::StoreCalls;

/// The span every event of the run is emitted under.
pub(crate) fn run_span(agent: &str, input: &RunAgentInput, options: &RunOptions) -> tracing::Span {
    let agent = options.agent_id.as_deref().unwrap_or(agent);
    tracing::info_span!(
        target: "handoff::run",
        "invoke_agent",
        otel.name = %format_args!("invoke_agent {agent}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.provider.name = "handoff",
        gen_ai.agent.name = agent,
        gen_ai.conversation.id = %input.thread_id,
        handoff.run.id = %input.run_id,
        handoff.run.parent_id = input.parent_run_id.as_ref().map(RunId::as_str),
        handoff.run.resume = input.resume.as_ref().is_some_and(|r| !r.is_empty()),
        handoff.tenant = options.principal.tenant.as_str(),
        handoff.run.outcome = Empty,
        error.type = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
    )
}

/// What a run's log line says besides its outcome: the request it came from (to join
/// the two lines) and its store calls.
pub(crate) struct RunLogFacts {
    request_id: Option<String>,
    trace_id: Option<String>,
    store_calls: StoreCalls,
}

impl RunLogFacts {
    pub(crate) fn of(options: &RunOptions) -> Self {
        RunLogFacts {
            request_id: options.request_id.clone(),
            trace_id: options.trace_id.clone(),
            store_calls: options.store_calls.clone(),
        }
    }
}

/// What the run ended with, from its terminal event: the span's outcome and usage, and
/// one `run ended` line (the run's log record, whatever the log format).
pub(crate) fn record_end(
    span: &tracing::Span,
    ctx: &RunContext,
    started_ms: u64,
    facts: &RunLogFacts,
) {
    let log = ctx.shared_log();
    let (outcome, code) = match log.lock().last().map(|e| &**e) {
        Some(Event::RunFinished(finished)) => match &finished.outcome {
            Some(RunFinishedOutcome::Interrupt { .. }) => ("interrupt", None),
            Some(RunFinishedOutcome::Cancelled) => ("cancelled", None),
            _ => ("success", None),
        },
        Some(Event::RunError(error)) => ("error", error.code.clone()),
        _ => ("error", None),
    };
    let duration_ms = ctx.now_ms().saturating_sub(started_ms);
    if !span.is_disabled() {
        span.record("handoff.run.outcome", outcome);
        if outcome == "error" {
            span.record("otel.status_code", "ERROR");
            span.record("error.type", code.as_deref().unwrap_or("_OTHER"));
        }
        if let Some(usage) = ctx.usage_report() {
            let input: u64 = usage.iter().filter_map(|u| u.input_tokens).sum();
            let output: u64 = usage.iter().filter_map(|u| u.output_tokens).sum();
            span.record("gen_ai.usage.input_tokens", input);
            span.record("gen_ai.usage.output_tokens", output);
        }
    }
    tracing::info!(
        target: "handoff::run",
        thread_id = %ctx.thread_id(),
        run_id = %ctx.run_id(),
        tenant = ctx.principal().tenant.as_str(),
        outcome,
        code = code.as_deref(),
        duration_ms,
        store_calls = facts.store_calls.count(),
        request_id = facts.request_id.as_deref(),
        trace_id = facts.trace_id.as_deref(),
        "run ended"
    );
}
