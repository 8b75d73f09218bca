//! Driving one claimed run: RUN_STARTED, the agent (bounded by the host deadline and
//! its lease), then persist-before-announce finishing.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use agui_protocol::event::RunStarted;
use agui_protocol::{Event, PROTOCOL_VERSION, RunAgentInput};
use futures::future::{Either, select};
use futures::{FutureExt, StreamExt};
use tracing::Instrument;

use super::claimed::Claimed;
use super::digest;
use super::finish::{finish_run, stop_run};
use super::history;
use super::lease::{self, Stop};
use super::live;
use super::stop::{self, StopBoard, StopTicket};
use super::telemetry;
use super::{Inner, RunOptions, SharedRunStream};
use crate::agent::Finish;
use crate::codes::ErrorCode;
use crate::context::fence::Fence;
use crate::context::{ContextParts, RunContext, SharedLog};
use crate::error::CoreError;
use crate::schema::SchemaFailure;

pub(crate) fn spawn_run(
    inner: Arc<Inner>,
    input: RunAgentInput,
    options: RunOptions,
    mut claimed: Box<Claimed>,
) -> SharedRunStream {
    // The client's stream reads the log the run appends to (the run no longer depends on
    // it: a dropped stream only stops delivery).
    let log = SharedLog::new();
    let events = log.reader();
    let runtime_spawner = inner.runtime.spawner.clone();
    let span = telemetry::run_span(inner.agent.name(), &input, &options);
    let run_span = span.clone();
    let facts = telemetry::RunLogFacts::of(&options);
    // On this instance's stop board before the run is handed over: a stop sent as soon as
    // the claim is answered (a background run's 202) reaches it at once, not at a poll.
    let ticket = StopBoard::register(&inner.stops, &claimed.partition, input.run_id.as_str());
    let driver = async move {
        let started_ms = inner.runtime.now_ms();
        let mut ctx = RunContext::new(ContextParts {
            input,
            partition: claimed.partition.clone(),
            principal: options.principal.clone(),
            runtime: inner.runtime.clone(),
            store: inner.store.clone(),
            fence: Arc::new(Fence::new(claimed.fence)),
            effect_ttl_ms: inner.config.effect_ttl_ms,
            // Moved, not copied: the claim's copies are not read again.
            state: std::mem::take(&mut claimed.state),
            messages: Vec::new(),
            decisions: std::mem::take(&mut claimed.decisions),
            log,
            validator: inner.validator.clone(),
            deadline_ms: options.deadline_ms,
            budget: inner.config.token_budget,
            redrive: claimed.redrive,
        });
        if let Some(head) = claimed.audit_head.take() {
            ctx.knows_audit_head(head);
        }
        execute(&inner, &mut ctx, options, &mut claimed, ticket).await;
        telemetry::record_end(&run_span, &ctx, started_ms, &facts);
    }
    .instrument(span);
    if let Some(spawner) = &runtime_spawner {
        // The run no longer depends on the response: a dropped stream only stops delivery.
        spawner.spawn(Box::pin(driver));
        return Box::pin(events);
    }
    // The driver yields nothing itself; it pushes events into the channel that this stream drains.
    let driver = driver
        .into_stream()
        .filter_map(|()| futures::future::ready(None));
    Box::pin(futures::stream::select(events, driver))
}

async fn execute(
    inner: &Inner,
    ctx: &mut RunContext,
    options: RunOptions,
    claimed: &mut Claimed,
    mut ticket: StopTicket,
) {
    let started_at = inner.runtime.now_ms();
    let mut started = RunStarted::new(ctx.thread_id().clone(), ctx.run_id().clone());
    started.protocol_version = Some(PROTOCOL_VERSION.to_owned());
    started.parent_run_id = ctx.input().parent_run_id.clone();
    ctx.emit_engine(Event::from(started).with_timestamp(started_at));
    if let Err(error) = read_history(inner, ctx, claimed).await {
        stop_run(inner, ctx, claimed, error).await;
        return;
    }
    let claimed = &*claimed;

    let fence = ctx.fence().clone();
    let partition = ctx.partition().to_owned();
    let mut watcher = Box::pin(
        lease::watch(
            inner,
            &partition,
            claimed,
            &fence,
            started_at,
            options.deadline_ms,
        )
        .fuse(),
    );
    let run_id = ctx.run_id().to_string();
    let stop_requested = stop::requested(
        inner,
        &partition,
        &run_id,
        claimed.started_at_ms,
        &mut ticket,
    )
    .map(|()| Stop::Requested);
    let journal = live::journal(
        inner,
        &partition,
        &run_id,
        claimed.started_at_ms,
        ctx.shared_log(),
    );
    // The journal never ends; beside it, a stop request does.
    let background = async {
        match select(Box::pin(stop_requested), Box::pin(journal)).await {
            Either::Left((stop, _)) => stop,
            Either::Right(((), stop)) => stop.await,
        }
    };
    let agent = inner.agent.clone();
    let outcome = {
        let run = AssertUnwindSafe(agent.run(ctx)).catch_unwind();
        let stop = select(&mut watcher, Box::pin(background));
        match select(run, stop).await {
            Either::Left((result, _)) => Ok(result),
            Either::Right((Either::Left((stop, _)) | Either::Right((stop, _)), _)) => Err(stop),
        }
    };
    drop(ticket);
    lease::settle(&mut watcher, &fence).await;
    drop(watcher);
    ctx.settle_budget().await;

    let ending = match outcome {
        Err(Stop::Deadline) if options.hand_off_at_deadline => {
            tracing::info!(run_id = %ctx.run_id(), "deadline approaching; handing the run over");
            super::handover::hand_off(inner, ctx.partition(), claimed, ctx.fence()).await;
            return;
        }
        Err(Stop::Deadline) if !ctx.is_resume() => {
            tracing::warn!(run_id = %ctx.run_id(), "deadline approaching; cancelling the run");
            Ok(Finish::Cancelled)
        }
        Err(Stop::Deadline) => {
            tracing::warn!(run_id = %ctx.run_id(), "deadline approaching; stopping the resumed run");
            Err(CoreError::DeadlineExceeded)
        }
        Err(Stop::LeaseLost) => Err(CoreError::LeaseLost),
        Err(Stop::Requested) if !ctx.is_resume() => {
            tracing::info!(run_id = %ctx.run_id(), "stopped on request; cancelling the run");
            Ok(Finish::Cancelled)
        }
        // A resumed run's answer is settled like one stopped at its deadline (an effect in
        // doubt keeps it pinned), but the run is announced cancelled, as asked.
        Err(Stop::Requested) => {
            tracing::info!(run_id = %ctx.run_id(), "stopped on request while applying an answer");
            Err(CoreError::Stopped)
        }
        Ok(Err(_panic)) => {
            tracing::error!(run_id = %ctx.run_id(), "agent panicked");
            Err(CoreError::AgentPanicked)
        }
        Ok(Ok(Err(agent_error))) => {
            let error = ctx
                .take_fatal()
                .unwrap_or_else(|| CoreError::Agent(agent_error.0.clone()));
            tracing::error!(run_id = %ctx.run_id(), error = %agent_error, code = error.code().name, "agent failed");
            Err(error)
        }
        Ok(Ok(Ok(finish))) => match ctx.take_fatal() {
            Some(fatal) => Err(fatal),
            None => check_interrupts(inner, ctx, finish),
        },
    };
    match ending {
        Ok(finish) => finish_run(inner, ctx, claimed, finish).await,
        Err(error) => stop_run(inner, ctx, claimed, error).await,
    }
}

/// Gives the run its history: the stored one, plus what a new run's input adds to it.
async fn read_history(
    inner: &Inner,
    ctx: &mut RunContext,
    claimed: &mut Claimed,
) -> Result<(), CoreError> {
    // `recognised`: how many leading input messages are the stored history, when the digest
    // proved it.
    let (mut messages, recognised) = match claimed.preloaded.take() {
        Some(stored) => (stored, None),
        None => match digest::recognised_prefix(&claimed.thread, &claimed.input_chain) {
            // The client resent the stored history, byte for byte: no page is read.
            Some(count) => (ctx.input().messages[..count].to_vec(), Some(count)),
            None => {
                let thread = &claimed.thread;
                let now = inner.runtime.now_ms();
                let stored = history::load(inner, ctx.partition(), thread, thread.pages, now);
                (stored.await?, None)
            }
        },
    };
    if claimed.thread.history_digest.is_none() && claimed.thread.messages.is_empty() {
        // Stored before digests: the history just read starts the chain its next page
        // extends.
        let chained = digest::extend(digest::EMPTY, &messages);
        claimed.thread.history_digest = Some(digest::to_hex(chained));
    }
    let stored = messages.len();
    if !ctx.is_resume() {
        let input = &ctx.input().messages;
        let added = match recognised {
            Some(count) => history::merge_recognised(input, count),
            None => history::merge(&messages, input, claimed.after_running)?,
        };
        messages.extend(added);
    }
    ctx.set_history(messages, stored);
    Ok(())
}

/// Interrupts must be non-empty, uniquely identified, fresh, and point at calls this
/// thread made.
fn check_interrupts(inner: &Inner, ctx: &RunContext, finish: Finish) -> Result<Finish, CoreError> {
    let Finish::Interrupt(interrupts) = &finish else {
        return Ok(finish);
    };
    let invalid = |why: &str| Err(CoreError::Agent(format!("invalid interrupt: {why}")));
    if interrupts.is_empty() {
        return invalid("an interrupt outcome needs at least one interrupt");
    }
    let mut seen = HashSet::new();
    for raised in interrupts {
        let interrupt = raised.interrupt();
        if interrupt.id.is_empty() || !seen.insert(interrupt.id.clone()) {
            return invalid("interrupt ids must be non-empty and unique");
        }
        // Its answer is recorded under the id: the same answer would replay this run forever.
        if ctx.decision(&interrupt.id).is_some() {
            return Err(CoreError::InterruptIdReused(interrupt.id.to_string()));
        }
        // Fail closed: an answer nobody can check must not be asked for.
        if let Some(schema) = &interrupt.response_schema {
            let validator = inner
                .validator
                .as_deref()
                .ok_or(CoreError::SchemaValidationUnavailable)?;
            if let Err(SchemaFailure::Unusable(reason) | SchemaFailure::Invalid(reason)) =
                validator.check_schema(schema)
            {
                return invalid(&format!("its responseSchema cannot be checked: {reason}"));
            }
        }
        // Fail closed: an interrupt that claims an approval in its metadata but carries no
        // typed policy (a builder or a path that lost it) must not become answerable.
        if raised.policy().is_none() && crate::approval::claims_approval(interrupt) {
            return Err(CoreError::ApprovalPolicyMissing(interrupt.id.to_string()));
        }
        if let Some(call) = &interrupt.tool_call_id
            && ctx.find_tool_call(call).is_none()
        {
            return invalid("toolCallId does not refer to a tool call of this thread");
        }
    }
    Ok(finish)
}
