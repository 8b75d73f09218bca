//! Ending a run: persist, then announce. What an answer becomes when its run does not
//! finish cleanly is decided here (see the crate docs, "Answers and side effects").

use std::collections::HashSet;
use std::sync::Arc;

use agui_protocol::event::{MessagesSnapshot, RunError, RunFinished, StateSnapshot};
use agui_protocol::{Event, Message, Metadata, RunFinishedOutcome, ToolCallId};
use serde_json::json;

use super::Inner;
use super::claimed::Claimed;
use super::compact::compact_fragments;
use super::history;
use crate::agent::Finish;
use crate::approval::{APPROVAL, RaisedInterrupt};
use crate::codes::ErrorCode;
use crate::context::RunContext;
use crate::error::CoreError;
use crate::records::{
    self, AnswerAudit, DeltaCuts, LastRun, PendingInterrupt, ResumeRecord, RunRecord, RunStatus,
    ThreadRecord, ThreadStatus, run_key,
};
use crate::store::{Condition, StoreError, Write};
use crate::time_fmt::parse_ms;

pub(crate) async fn finish_run(
    inner: &Inner,
    ctx: &mut RunContext,
    claimed: &Claimed,
    finish: Finish,
) {
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
        Finish::Interrupt(raised) => {
            // The client must hold the final state before the interrupt: unless the run's
            // last event already gave it (an agent's `set_state` just before it asks), a
            // second, identical snapshot would tell it nothing.
            if !ends_with_state(ctx) {
                ctx.emit_engine(
                    Event::from(StateSnapshot::new(ctx.state().clone())).with_timestamp(now),
                );
            }
            ctx.emit_engine(
                Event::from(MessagesSnapshot::new(ctx.messages().to_vec())).with_timestamp(now),
            );
            let pending = to_pending(raised, ctx, claimed);
            let interrupts = pending.iter().map(|p| p.interrupt.clone()).collect();
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
    finished.usage = ctx.usage_report();
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
        // Moved, not copied: the run's state is final (a snapshot event, if any, has its
        // own copy).
        state: ctx.take_state(),
        last_run: Some(LastRun {
            run_id: ctx.run_id().clone(),
            status,
        }),
        ..claimed.thread.carried_over()
    };
    let mut log = ctx_log(ctx);
    log.events.push(Arc::new(finished));
    match commit_finish(inner, ctx, claimed, thread, status, log, Ending::Consumed).await {
        // The record's own copy of RUN_FINISHED, its last event, is the one announced.
        Ok((mut stored, notices)) => {
            if let Some(finished) = stored.pop() {
                ctx.emit_engine(Arc::unwrap_or_clone(finished));
            }
            super::notify::deliver(inner, ctx.partition(), &notices).await;
        }
        Err(error) => {
            if !matches!(error, CoreError::LeaseLost) {
                release_lease(inner, ctx, claimed).await;
            }
            emit_error(ctx, &error)
        }
    }
}

/// Whether the run's last event is a snapshot of its current state (the parent's, not a
/// subagent's).
fn ends_with_state(ctx: &RunContext) -> bool {
    match ctx.log().last().map(|event| &**event) {
        Some(Event::StateSnapshot(last)) => {
            last.subagent_run_id.is_none() && last.snapshot == *ctx.state()
        }
        _ => false,
    }
}

/// A run that stopped without finishing (error, panic, deadline of a resume, lost lease,
/// a stop request while applying an answer: announced `cancelled`, settled the same way).
///
/// - Lease lost: nothing can be written; the thread is its next holder's.
/// - An effect in doubt: the answer is not consumed and only it may be applied again
///   (pinned), so the retry re-drives the effect under the same key.
/// - Effects executed, none in doubt: the answer is consumed; the thread keeps what the
///   run said and did (with a tool message per answered call saying what executed), so
///   no other answer can take the path the executed effect excluded.
/// - Nothing executed: the thread is left as claimed, its interrupts still answerable.
pub(crate) async fn stop_run(
    inner: &Inner,
    ctx: &mut RunContext,
    claimed: &Claimed,
    error: CoreError,
) {
    let (event, status) = if error == CoreError::Stopped {
        let mut finished = RunFinished::new(ctx.thread_id().clone(), ctx.run_id().clone());
        finished.outcome = Some(RunFinishedOutcome::Cancelled);
        finished.usage = ctx.usage_report();
        (Event::from(finished), RunStatus::Cancelled)
    } else {
        (Event::from(run_error(ctx, &error)), RunStatus::Errored)
    };
    let event = event.with_timestamp(inner.runtime.now_ms());
    let mut notices = Vec::new();
    if !matches!(error, CoreError::LeaseLost) {
        let effects = ctx.effects();
        let consumed = !effects.is_empty() && !effects.any_in_doubt();
        let (mut thread, ending) = if consumed {
            (record_executed(ctx, claimed, &error), Ending::Consumed)
        } else {
            (released_after_error(ctx, claimed), Ending::Released)
        };
        if let Some(last) = thread.last_run.as_mut() {
            last.status = status;
        }
        let mut log = ctx_log(ctx);
        log.events.push(Arc::new(event.clone()));
        let committed = commit_finish(inner, ctx, claimed, thread, status, log, ending).await;
        match committed {
            Ok((_, keys)) => notices = keys,
            Err(commit_error) => {
                tracing::error!(error = %commit_error, "could not record the failed run");
                if !matches!(commit_error, CoreError::LeaseLost) {
                    release_lease(inner, ctx, claimed).await;
                }
            }
        }
    }
    ctx.emit_engine(event);
    super::notify::deliver(inner, ctx.partition(), &notices).await;
}

/// The thread after a run that executed effects and then failed: its history and state
/// as the run left them, nothing pending.
fn record_executed(ctx: &mut RunContext, claimed: &Claimed, error: &CoreError) -> ThreadRecord {
    let answered: HashSet<&ToolCallId> = ctx
        .messages()
        .iter()
        .filter_map(|m| match m {
            Message::Tool(t) => Some(&t.tool_call_id),
            _ => None,
        })
        .collect();
    let unanswered: Vec<ToolCallId> = ctx
        .decisions()
        .iter()
        .filter_map(|d| d.tool_call_id())
        .filter(|id| !answered.contains(id))
        .cloned()
        .collect();
    let executed: Vec<_> = ctx
        .effects()
        .done()
        .map(|(key, result)| json!({ "key": key, "result": result }))
        .collect();
    // Sent as TOOL_CALL_RESULTs, not only stored: the client's copy of the history must
    // hold them, or its next request would look stale (THREAD_CHANGED).
    ctx.close_open_items();
    for tool_call_id in unanswered {
        let content = json!({ "error": error.code(), "executedEffects": executed });
        ctx.tool_result(&tool_call_id, content.to_string());
    }
    ThreadRecord {
        status: ThreadStatus::Idle,
        lease: None,
        pending: Vec::new(),
        state: ctx.state().clone(),
        last_run: Some(LastRun {
            run_id: ctx.run_id().clone(),
            status: RunStatus::Errored,
        }),
        ..claimed.thread.carried_over()
    }
}

/// The thread as it was claimed, unleased, its last run marked errored; pending
/// interrupts stay answerable, pinned to this run's answer if any of its effects
/// started (one may have executed).
fn released_after_error(ctx: &RunContext, claimed: &Claimed) -> ThreadRecord {
    let pin = claimed
        .resume_key
        .as_ref()
        .filter(|_| !ctx.effects().is_empty());
    let mut pending = claimed.thread.pending.clone();
    if let Some(key) = pin {
        for p in &mut pending {
            p.pinned_answer = Some(key.clone());
        }
    }
    ThreadRecord {
        status: if pending.is_empty() {
            ThreadStatus::Idle
        } else {
            ThreadStatus::Interrupted
        },
        lease: None,
        pending,
        last_run: Some(LastRun {
            run_id: ctx.run_id().clone(),
            status: RunStatus::Errored,
        }),
        ..claimed.thread.clone()
    }
}

/// After a finish commit that storage refused (a throttle, an outage, a record too
/// large), hands the thread back as it was claimed, so a retry need not wait for the
/// lease to lapse. Only the thread is written, fenced like the finish: if that did apply
/// after all, this fails and changes nothing; the run record stays `running`, so the
/// same request re-executes in place.
async fn release_lease(inner: &Inner, ctx: &RunContext, claimed: &Claimed) {
    let now = inner.runtime.now_ms();
    let thread = released_after_error(ctx, claimed);
    let fence = *ctx.fence().lock().await;
    let write = thread.write(
        ctx.partition(),
        Condition::Version(fence),
        Some(now + inner.config.thread_ttl_ms),
    );
    if let Err(e) = inner.store.commit(ctx.partition(), vec![write], now).await {
        tracing::warn!(run_id = %ctx.run_id(), error = %e, "could not release the lease; it lapses at its deadline");
    }
}

/// The run's log as it is stored.
struct StoredLog {
    /// Compacted (deltas merged); the events kept as they are shared with the live log.
    events: Vec<Arc<Event>>,
    /// Where the merged deltas were cut.
    cuts: Vec<DeltaCuts>,
    /// A `MESSAGES_SNAPSHOT` of the whole history was stored empty: the history pages
    /// hold it.
    snapshot_stripped: bool,
}

/// The run's log as stored: compacted, and a `MESSAGES_SNAPSHOT` that is the run's whole
/// history stored empty (never copied: in a long thread it is most of the log's bytes).
fn ctx_log(ctx: &RunContext) -> StoredLog {
    let history = ctx.messages();
    let log = ctx.log();
    let mut snapshot_stripped = false;
    let events = log.iter().map(|event| match &**event {
        Event::MessagesSnapshot(snapshot) if snapshot.messages == history => {
            snapshot_stripped = true;
            Arc::new(Event::MessagesSnapshot(MessagesSnapshot {
                messages: Vec::new(),
                base: snapshot.base.clone(),
            }))
        }
        _ => Arc::clone(event),
    });
    let (events, cuts) = compact_fragments(events.collect());
    StoredLog {
        events,
        cuts,
        snapshot_stripped,
    }
}

/// Largest run record copied into its resume record.
const RESUME_COPY_MAX_BYTES: usize = 16 * 1024;

/// What a finish commit does with the run's answer and history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// The run's messages become a history page; its answer (if any) is recorded as
    /// applied by this run, so a duplicate replays it.
    Consumed,
    /// History stays as claimed; the answer is forgotten so it can be applied again.
    Released,
}

/// Commits the thread head, the run record and (when the run added messages) its
/// history page, under the fence; answers the run record's events.
async fn commit_finish(
    inner: &Inner,
    ctx: &RunContext,
    claimed: &Claimed,
    mut thread: ThreadRecord,
    status: RunStatus,
    log: StoredLog,
    ending: Ending,
) -> Result<(Vec<Arc<Event>>, Vec<String>), CoreError> {
    let now = inner.runtime.now_ms();
    let consume_answer = ending == Ending::Consumed;
    let page = if consume_answer {
        let added = ctx.added_messages();
        let answers = audit(ctx, claimed);
        // A fork at these messages starts from the state as it stood after this run.
        let state = (thread.state != claimed.thread.state).then(|| thread.state.clone());
        history::append(
            inner,
            &mut thread,
            ctx.run_id(),
            &added,
            &answers,
            state.as_ref(),
            now,
        )
    } else {
        None
    };
    let run = RunRecord {
        input_hash: claimed.input_hash.clone(),
        status,
        resume_key: claimed.resume_key.clone(),
        started_at_ms: claimed.started_at_ms,
        events: Vec::new(),
        snapshot_pages: log.snapshot_stripped.then_some(thread.pages),
        requested_by: Some(claimed.requested_by.clone()),
        cuts: log.cuts,
        // Ended: nothing is left to re-drive, and the record (put with no listing entry)
        // leaves the re-drive listing in this same commit.
        redrive: None,
    };
    let run_expiry = Some(now + inner.config.run_ttl_ms);
    let run_bytes = run.encode_with_events(&log.events);
    // The resume record still names this run: the thread fence below proves no other
    // claim (which would have rewritten it in the same commit) happened since ours.
    let resume = claimed.resume_key.as_ref().map(|key| {
        if !consume_answer {
            return Write::delete(key, Condition::Always);
        }
        // A small run rides along, so a duplicate answer replays from the claim's one read;
        // a large one is read from its own record instead of being written twice.
        let answer = if run_bytes.len() <= RESUME_COPY_MAX_BYTES {
            ResumeRecord::encode_finished(ctx.run_id(), &run_bytes)
        } else {
            records::encode(&ResumeRecord {
                run_id: ctx.run_id().clone(),
                finished: None,
            })
        };
        Write::put(key, Condition::Always, answer, run_expiry)
    });
    let fence = ctx.fence().lock().await;
    // The head is renewed below: the pages it counts must not expire before it.
    let pages = claimed.thread.pages;
    super::renew::pages_if_due(inner, ctx.partition(), &mut thread, pages, *fence, now).await;
    thread.meta.updated_at_ms = Some(now);
    let mut writes = vec![
        thread.write(
            ctx.partition(),
            Condition::Version(*fence),
            Some(now + inner.config.thread_ttl_ms),
        ),
        Write::put(
            run_key(ctx.run_id()),
            Condition::Always,
            run_bytes,
            run_expiry,
        ),
    ];
    writes.extend(resume);
    writes.extend(super::approvals::entry(
        inner,
        ctx.partition(),
        &thread,
        &claimed.thread,
        now,
    ));
    if page.is_some() && !super::leftovers::mark_lasts(inner, claimed.mark_until, now) {
        // The history outlives the head: so must the marker that says it is there.
        writes.push(super::leftovers::mark(inner, now));
    }
    writes.extend(page);
    if consume_answer && ctx.audits_effects() {
        // The answers' audit entries land with the records that consume them.
        writes.extend(ctx.audit_append(ctx.finish_entries(now)).await?.writes);
    }
    let terminal = log.events.last().map(|e| e.as_ref());
    let (notices, keys) =
        super::notify::writes(inner, ctx, claimed, &thread, status, terminal, now);
    writes.extend(notices);
    match inner.store.commit(ctx.partition(), writes, now).await {
        Ok(()) => Ok((log.events, keys)),
        Err(StoreError::ConditionFailed { .. }) => Err(CoreError::LeaseLost),
        Err(e) => Err(e.into()),
    }
}

/// The audit entries of the answers a run applied.
fn audit(ctx: &RunContext, claimed: &Claimed) -> Vec<AnswerAudit> {
    let by = &claimed.requested_by;
    ctx.decisions()
        .iter()
        .map(|d| AnswerAudit {
            interrupt_id: d.id().to_string(),
            status: d.status,
            approved: d.field("approved").and_then(serde_json::Value::as_bool),
            by: by.subject.clone(),
            run_id: ctx.run_id().clone(),
            at_ms: claimed.started_at_ms,
        })
        .collect()
}

fn emit_error(ctx: &mut RunContext, error: &CoreError) {
    tracing::error!(run_id = %ctx.run_id(), code = error.code().name, error = %error, "run could not be committed");
    let event = Event::from(run_error(ctx, error)).with_timestamp(ctx.now_ms());
    ctx.emit_engine(event);
}

/// The `RUN_ERROR` for `error`, with the usage the run incurred before it.
fn run_error(ctx: &RunContext, error: &CoreError) -> RunError {
    let mut event = RunError::from(error);
    event.usage = ctx.usage_report();
    event
}

/// The pending records of `raised`: each keeps its typed policy, and the interrupt it
/// announces echoes that policy in `metadata["handoff.approval"]` (replacing anything the
/// agent wrote there; `execute::check_interrupts` refused a claim without a policy).
fn to_pending(
    raised: Vec<RaisedInterrupt>,
    ctx: &RunContext,
    claimed: &Claimed,
) -> Vec<PendingInterrupt> {
    let agent_id = claimed.thread.meta.agent_id.clone();
    raised
        .into_iter()
        .map(|raised| {
            let (mut interrupt, approval) = raised.into_parts();
            let (approval, approval_source) = approval.unzip();
            if let (Some(policy), Some(source)) = (&approval, approval_source) {
                // The policy as a front end shows it, and what kind of code raised it.
                let mut echo = serde_json::to_value(policy).unwrap_or_default();
                echo["source"] = serde_json::to_value(source).unwrap_or_default();
                interrupt =
                    interrupt.with_metadata(Metadata::from_iter([(APPROVAL.to_owned(), echo)]));
            }
            let call = interrupt
                .tool_call_id
                .as_ref()
                .and_then(|id| ctx.find_tool_call(id));
            PendingInterrupt {
                run_id: ctx.run_id().clone(),
                expires_at_ms: interrupt.expires_at.as_deref().and_then(parse_ms),
                pinned_answer: None,
                raised_by: Some(claimed.requested_by.clone()),
                tool_args: call
                    .and_then(|call| serde_json::from_str(&call.function.arguments).ok()),
                tool_name: call.map(|call| call.function.name.clone()),
                raised_at_ms: Some(ctx.now_ms()),
                approval,
                approval_source,
                agent_id: agent_id.clone(),
                watches: claimed.watches.clone(),
                interrupt,
            }
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
    for event in ctx.log().iter() {
        match &**event {
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
