//! Driving one claimed run: RUN_STARTED, the agent (bounded by the host deadline),
//! then persist-before-announce finishing.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use agui_protocol::event::{MessagesSnapshot, RunError, RunFinished, RunStarted, StateSnapshot};
use agui_protocol::{
    Event, Interrupt, PROTOCOL_VERSION, RunAgentInput, RunFinishedOutcome, ToolCallId,
};
use futures::future::{Either, select};
use futures::{FutureExt, StreamExt};

use super::claim::Claimed;
use super::compact::compact;
use super::{Inner, RunOptions, RunStream};
use crate::agent::Finish;
use crate::context::{ContextParts, RunContext};
use crate::error::CoreError;
use crate::records::{
    self, LastRun, PendingInterrupt, ResumeRecord, RunRecord, RunStatus, THREAD_KEY, ThreadRecord,
    ThreadStatus, run_key,
};
use crate::store::{Condition, StoreError, Write};
use crate::time_fmt::parse_ms;

pub(crate) fn spawn_run(
    inner: Arc<Inner>,
    input: RunAgentInput,
    options: RunOptions,
    claimed: Box<Claimed>,
) -> RunStream {
    let (sink, events) = futures::channel::mpsc::unbounded();
    let runtime_spawner = inner.runtime.spawner.clone();
    let driver = async move {
        let mut ctx = RunContext::new(ContextParts {
            input,
            runtime: inner.runtime.clone(),
            store: inner.store.clone(),
            fence: claimed.fence,
            effect_ttl_ms: inner.config.effect_ttl_ms,
            state: claimed.state.clone(),
            messages: claimed.messages.clone(),
            decisions: claimed.decisions.clone(),
            sink,
        });
        execute(&inner, &mut ctx, options, &claimed).await;
    };
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

async fn execute(inner: &Inner, ctx: &mut RunContext, options: RunOptions, claimed: &Claimed) {
    let started_at = inner.runtime.now_ms();
    let mut started = RunStarted::new(ctx.thread_id().clone(), ctx.run_id().clone());
    started.protocol_version = Some(PROTOCOL_VERSION.to_owned());
    started.parent_run_id = ctx.input().parent_run_id.clone();
    ctx.emit_engine(Event::from(started).with_timestamp(started_at));

    // The margin shrinks for short budgets (a 3 s Lambda timeout must not be all margin).
    let stop_at = options.deadline_ms.map(|deadline| {
        let budget = deadline.saturating_sub(started_at);
        deadline.saturating_sub(inner.config.deadline_margin_ms.min(budget / 5))
    });
    let agent = inner.agent.clone();
    let outcome = {
        let run = AssertUnwindSafe(agent.run(ctx)).catch_unwind();
        match stop_at {
            None => Some(run.await),
            Some(at) => {
                let timer = inner.runtime.sleep.sleep(at.saturating_sub(started_at));
                match select(run, timer).await {
                    Either::Left((result, _)) => Some(result),
                    Either::Right(((), _)) => None,
                }
            }
        }
    };
    let finish = match outcome {
        None => {
            tracing::warn!(run_id = %ctx.run_id(), "host deadline approaching; cancelling the run");
            Ok(Finish::Cancelled)
        }
        Some(Err(_panic)) => {
            tracing::error!(run_id = %ctx.run_id(), "agent panicked");
            Err(CoreError::AgentPanicked)
        }
        Some(Ok(Err(agent_error))) => {
            let error = ctx
                .take_fatal()
                .unwrap_or_else(|| CoreError::Agent(agent_error.0.clone()));
            tracing::error!(run_id = %ctx.run_id(), error = %agent_error, code = error.code(), "agent failed");
            Err(error)
        }
        Some(Ok(Ok(finish))) => match ctx.take_fatal() {
            Some(fatal) => Err(fatal),
            None => check_interrupts(ctx, finish),
        },
    };
    match finish {
        Ok(finish) => finish_run(inner, ctx, claimed, finish).await,
        Err(error) => fail_run(inner, ctx, claimed, error).await,
    }
}

/// Interrupts must be non-empty, uniquely identified and point at calls this thread made.
fn check_interrupts(ctx: &RunContext, finish: Finish) -> Result<Finish, CoreError> {
    let Finish::Interrupt(interrupts) = &finish else {
        return Ok(finish);
    };
    let invalid = |why: &str| Err(CoreError::Agent(format!("invalid interrupt: {why}")));
    if interrupts.is_empty() {
        return invalid("an interrupt outcome needs at least one interrupt");
    }
    let mut seen = HashSet::new();
    for interrupt in interrupts {
        if interrupt.id.is_empty() || !seen.insert(interrupt.id.clone()) {
            return invalid("interrupt ids must be non-empty and unique");
        }
        if let Some(call) = &interrupt.tool_call_id
            && !known_tool_call(ctx, call)
        {
            return invalid("toolCallId does not refer to a tool call of this thread");
        }
    }
    Ok(finish)
}

fn known_tool_call(ctx: &RunContext, id: &ToolCallId) -> bool {
    ctx.messages().iter().any(|m| match m {
        agui_protocol::Message::Assistant(a) => a.tool_calls.iter().flatten().any(|c| c.id == *id),
        _ => false,
    })
}

async fn finish_run(inner: &Inner, ctx: &mut RunContext, claimed: &Claimed, finish: Finish) {
    ctx.close_open_items();
    let now = inner.runtime.now_ms();
    let (outcome, result, status, pending) = match finish {
        Finish::Success { result } => {
            let pending = frontend_calls_pending(ctx);
            let outcome = RunFinishedOutcome::Success {
                pending_tool_call_ids: (!pending.is_empty()).then_some(pending),
            };
            (outcome, result, RunStatus::Succeeded, Vec::new())
        }
        Finish::Cancelled => (
            RunFinishedOutcome::Cancelled,
            None,
            RunStatus::Cancelled,
            Vec::new(),
        ),
        Finish::Interrupt(interrupts) => {
            ctx.emit_engine(
                Event::from(StateSnapshot::new(ctx.state().clone())).with_timestamp(now),
            );
            ctx.emit_engine(
                Event::from(MessagesSnapshot::new(ctx.messages().to_vec())).with_timestamp(now),
            );
            let pending = to_pending(&interrupts, ctx);
            (
                RunFinishedOutcome::Interrupt { interrupts },
                None,
                RunStatus::Interrupted,
                pending,
            )
        }
    };
    let mut finished = RunFinished::new(ctx.thread_id().clone(), ctx.run_id().clone());
    finished.outcome = Some(outcome);
    finished.result = result;
    let finished = Event::from(finished).with_timestamp(inner.runtime.now_ms());

    let thread_status = if pending.is_empty() {
        ThreadStatus::Idle
    } else {
        ThreadStatus::Interrupted
    };
    let thread = ThreadRecord {
        status: thread_status,
        lease: None,
        pending,
        state: ctx.state().clone(),
        messages: ctx.messages().to_vec(),
        last_run: Some(LastRun {
            run_id: ctx.run_id().clone(),
            status,
        }),
    };
    let mut log = ctx_log(ctx);
    log.push(finished.clone());
    match commit_finish(inner, ctx, claimed, &thread, status, log).await {
        Ok(()) => ctx.emit_engine(finished),
        Err(error) => {
            if matches!(error, CoreError::Store(StoreError::Unavailable(_))) {
                release_lease(inner, ctx, claimed).await;
            }
            emit_error(ctx, &error)
        }
    }
}

/// The thread as it was claimed, unleased, its last run marked errored
/// (pending interrupts stay answerable).
fn released_after_error(ctx: &RunContext, claimed: &Claimed) -> ThreadRecord {
    ThreadRecord {
        status: if claimed.thread.pending.is_empty() {
            ThreadStatus::Idle
        } else {
            ThreadStatus::Interrupted
        },
        lease: None,
        last_run: Some(LastRun {
            run_id: ctx.run_id().clone(),
            status: RunStatus::Errored,
        }),
        ..claimed.thread.clone()
    }
}

/// After a finish commit that storage refused (a throttle, an outage), hands the thread back
/// as it was claimed, so a retry need not wait for the lease to lapse. Only the thread is
/// written, fenced like the finish: if that did apply after all, this fails and changes
/// nothing; the run record stays `running`, so the same request re-executes in place.
async fn release_lease(inner: &Inner, ctx: &RunContext, claimed: &Claimed) {
    let now = inner.runtime.now_ms();
    let thread = released_after_error(ctx, claimed);
    let write = Write::put(
        THREAD_KEY,
        Condition::Version(claimed.fence),
        records::encode(&thread),
        Some(now + inner.config.thread_ttl_ms),
    );
    if let Err(e) = inner.store.commit(ctx.thread_id(), vec![write], now).await {
        tracing::warn!(run_id = %ctx.run_id(), error = %e, "could not release the lease; it lapses at its deadline");
    }
}

/// Errors leave the thread as it was (pending interrupts included), release the
/// lease and forget the resume answer, so a retry executes again — its effects
/// still run at most once.
async fn fail_run(inner: &Inner, ctx: &mut RunContext, claimed: &Claimed, error: CoreError) {
    let mut event = RunError::from(&error);
    event.base.timestamp = Some(inner.runtime.now_ms());
    let event = Event::from(event);
    if !matches!(error, CoreError::LeaseLost) {
        let thread = released_after_error(ctx, claimed);
        let mut log = ctx_log(ctx);
        log.push(event.clone());
        if let Err(commit_error) =
            commit_finish(inner, ctx, claimed, &thread, RunStatus::Errored, log).await
        {
            tracing::error!(error = %commit_error, "could not record the failed run");
        }
    }
    ctx.emit_engine(event);
}

fn ctx_log(ctx: &RunContext) -> Vec<Event> {
    compact(ctx.log().to_vec())
}

async fn commit_finish(
    inner: &Inner,
    ctx: &RunContext,
    claimed: &Claimed,
    thread: &ThreadRecord,
    status: RunStatus,
    events: Vec<Event>,
) -> Result<(), CoreError> {
    let now = inner.runtime.now_ms();
    let run = RunRecord {
        input_hash: claimed.input_hash.clone(),
        status,
        resume_key: claimed.resume_key.clone(),
        started_at_ms: claimed.started_at_ms,
        events,
    };
    let run_expiry = Some(now + inner.config.run_ttl_ms);
    // The resume record still names this run: the thread fence below proves no other
    // claim (which would have rewritten it in the same commit) happened since ours.
    let resume = claimed.resume_key.as_ref().map(|key| {
        if status == RunStatus::Errored {
            return Write::delete(key, Condition::Always);
        }
        let answer = ResumeRecord {
            run_id: ctx.run_id().clone(),
            finished: Some(Box::new(run.clone())),
        };
        Write::put(key, Condition::Always, records::encode(&answer), run_expiry)
    });
    let mut writes = vec![
        Write::put(
            THREAD_KEY,
            Condition::Version(claimed.fence),
            records::encode(thread),
            Some(now + inner.config.thread_ttl_ms),
        ),
        Write::put(
            run_key(ctx.run_id()),
            Condition::Always,
            records::encode(&run),
            run_expiry,
        ),
    ];
    writes.extend(resume);
    match inner.store.commit(ctx.thread_id(), writes, now).await {
        Ok(()) => Ok(()),
        Err(StoreError::ConditionFailed { .. }) => Err(CoreError::LeaseLost),
        Err(e) => Err(e.into()),
    }
}

fn emit_error(ctx: &mut RunContext, error: &CoreError) {
    tracing::error!(run_id = %ctx.run_id(), code = error.code(), error = %error, "run could not be committed");
    let event = Event::from(RunError::from(error)).with_timestamp(ctx.now_ms());
    ctx.emit_engine(event);
}

fn to_pending(interrupts: &[Interrupt], ctx: &RunContext) -> Vec<PendingInterrupt> {
    interrupts
        .iter()
        .map(|i| PendingInterrupt {
            interrupt: i.clone(),
            run_id: ctx.run_id().clone(),
            expires_at_ms: i.expires_at.as_deref().and_then(parse_ms),
        })
        .collect()
}

/// Calls this run made to application (frontend) tools that have no result yet.
fn frontend_calls_pending(ctx: &RunContext) -> Vec<ToolCallId> {
    let frontend: HashSet<&str> = ctx
        .input()
        .tool_list()
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    let mut started = Vec::new();
    let mut answered = HashSet::new();
    for event in ctx.log() {
        match event {
            Event::ToolCallStart(e) if frontend.contains(e.tool_call_name.as_str()) => {
                started.push(e.tool_call_id.clone())
            }
            Event::ToolCallResult(e) => {
                answered.insert(e.tool_call_id.clone());
            }
            _ => {}
        }
    }
    started
        .into_iter()
        .filter(|id| !answered.contains(id))
        .collect()
}
