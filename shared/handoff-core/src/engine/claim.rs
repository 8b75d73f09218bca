//! Reading, validating and claiming a thread for a run: one consistent read and one
//! conditional commit in the common case, and for a thread's first run the commit alone
//! (its conditions stand in for the read; see `no_run_answered`).

use agui_protocol::event::{RunFinished, RunStarted};
use agui_protocol::{Event, Message, ResumeEntry, RunAgentInput, RunId};
use serde_json::Value;

use super::claimed::Claimed;
use super::digest::Chain;
use super::hash::{input_hash, resume_hash, same_input};
use super::validate::{check_readiness, validate_resume};
use super::{Inner, RunOptions};
use super::{history, lease, leftovers};
use crate::access::Access;
use crate::approval;
use crate::context::audit_head_read;
use crate::error::CoreError;
use crate::principal::{Owner, Principal};
use crate::records::audit::AUDIT_HEAD_KEY;
use crate::records::{
    self, LastRun, Lease, MARK_KEY, ResumeRecord, RunRecord, RunStatus, THREAD_KEY, ThreadRecord,
    ThreadStatus, resume_key, run_key,
};
use crate::store::{Condition, StoreError, Write};

/// Conditional-commit races a claim retries before answering busy.
const MAX_ATTEMPTS: usize = 6;

pub(crate) enum Claim {
    Run(Box<Claimed>),
    Replay(Vec<Event>),
}

pub(crate) async fn claim(
    inner: &Inner,
    input: &RunAgentInput,
    options: &RunOptions,
    after_running: bool,
) -> Result<Claim, CoreError> {
    let principal = &options.principal;
    let partition_name = principal.partition(&input.thread_id)?;
    check_input_ids(input)?;
    let partition = partition_name.as_str();
    // Each message written and hashed once: the input's hash and the run's check for a
    // resent history share this chain.
    let chain = Chain::of(&input.messages);
    let hash = input_hash(input, &chain);
    let entries = input.resume_entries();
    let resume = (!entries.is_empty()).then(|| resume_key(&resume_hash(partition, entries)));
    let run_item_key = run_key(&input.run_id);
    // A request whose history shows no run yet most likely starts a thread: its first
    // attempt reads nothing and commits as if nothing were stored. Every such assumption
    // is a condition of that commit (no head, no record of this run, no marker of
    // leftovers), so if anything exists the commit is refused and the claim reads as usual.
    let mut assume_new = entries.is_empty()
        && no_run_answered(&input.messages)
        && inner.authorize(principal, None, Access::Read).is_ok()
        && inner.authorize(principal, None, Access::Run).is_ok();

    for _ in 0..MAX_ATTEMPTS + usize::from(assume_new) {
        let now = inner.runtime.now_ms();
        let mut keys = vec![THREAD_KEY, run_item_key.as_str()];
        keys.extend(resume.as_deref());
        // A resume appends to the thread's audit chain (the answers, the effects): its head
        // rides along, so the run does not read it on its own.
        if resume.is_some() {
            keys.push(AUDIT_HEAD_KEY);
        }
        // The marker rides along: with no head, it means an expired thread left records.
        keys.push(MARK_KEY);
        let mut items = if std::mem::take(&mut assume_new) {
            keys.iter().map(|_| None).collect()
        } else {
            inner.store.get(partition, &keys, now).await?
        };
        let mark = items.pop().flatten();
        let audit_head = match resume {
            Some(_) => audit_head_read(items.pop().flatten().as_ref()),
            None => None,
        };
        let mut mark_until = mark
            .as_ref()
            .map_or(0, |mark| mark.expires_at_ms.unwrap_or(u64::MAX));
        if items[0].is_none() && mark.is_some() {
            leftovers::clear(inner, partition, now).await?;
            continue;
        }
        // Decoded once: a thread record carries every message, so it can be large. A
        // corrupt one fails the claim below; the replay checks read it as absent.
        let decoded = items[0]
            .as_ref()
            .map(records::decode::<ThreadRecord>)
            .transpose();
        let stored = decoded.as_ref().ok().and_then(Option::as_ref);

        // Abandoned runs (their instance died holding the lease) are re-executed in place;
        // their effects are protected by effect records, not by this check.
        let mut run_condition = Condition::Absent;
        let mut resume_condition = Condition::Absent;
        if let Some(item) = &items[1] {
            let run: RunRecord = records::decode(item)?;
            if !same_input(&run.input_hash, &hash, input) {
                // A resume may reuse the id of the run whose interrupts it answers
                // (CopilotKit does): a new run under that id, whose record replaces the
                // interrupted run's. Anything else reusing an id is a client bug.
                if !answers_run(stored, entries, &run, &input.run_id) {
                    // Only to someone who may see the thread: to anyone else it is absent.
                    inner.authorize(principal, stored, Access::Read)?;
                    return Err(CoreError::RunIdConflict(input.run_id.to_string()));
                }
                run_condition = Condition::Version(item.version);
            } else {
                may_replay(inner, principal, stored, &run)?;
                if run.status.is_final() || !abandoned(stored, &input.run_id, now) {
                    return replay_or_busy(
                        inner,
                        partition,
                        run,
                        &input.run_id,
                        &input.run_id,
                        stored,
                    )
                    .await;
                }
                // Re-executing it now would rewrite history after the thread moved on.
                if stored
                    .and_then(|t| t.last_run.as_ref())
                    .is_some_and(|last| last.run_id != input.run_id)
                {
                    return Err(CoreError::ThreadChanged(format!(
                        "run {} was abandoned and a newer run has since used the thread",
                        input.run_id
                    )));
                }
                run_condition = Condition::Version(item.version);
            }
        }
        if let Some(item) = items.get(2).and_then(Option::as_ref) {
            let answer: ResumeRecord = records::decode(item)?;
            // A finished answer carries its run; only an in-flight one costs a second read.
            let run = match answer.finished {
                Some(run) => Some(*run),
                None => {
                    let key = run_key(&answer.run_id);
                    match inner.store.get_one(partition, &key, now).await? {
                        Some(run_item) => Some(records::decode::<RunRecord>(&run_item)?),
                        None => None,
                    }
                }
            };
            if let Some(run) = run {
                let repeat = if run.status.is_final() {
                    !reraised(stored, entries, &answer.run_id)
                } else {
                    !abandoned(stored, &answer.run_id, now)
                };
                if answer.run_id != input.run_id && repeat {
                    may_replay(inner, principal, stored, &run)?;
                    return replay_or_busy(
                        inner,
                        partition,
                        run,
                        &answer.run_id,
                        &input.run_id,
                        stored,
                    )
                    .await;
                }
            }
            resume_condition = Condition::Version(item.version);
        }

        let (thread, condition) = match (decoded?, &items[0]) {
            (Some(thread), Some(item)) => (thread, Condition::Version(item.version)),
            _ => (ThreadRecord::default(), Condition::Absent),
        };
        // Before anything about the thread (even that it is busy) is revealed.
        let existing = matches!(condition, Condition::Version(_)).then_some(&thread);
        inner.authorize(principal, existing, Access::Read)?;
        if entries.is_empty() {
            inner.authorize(principal, existing, Access::Run)?;
        } else if existing.is_none() {
            // Answered exactly like a thread the caller may not see, so neither tells.
            return Err(CoreError::ThreadNotFound);
        }
        if let Some(lease) = thread
            .lease
            .as_ref()
            .filter(|l| thread.status == ThreadStatus::Running && l.expires_at_ms > now)
        {
            return Err(busy(inner, &lease.run_id, lease.expires_at_ms, now));
        }
        // A holder that died applying an answer may have executed its effects: only that
        // answer may follow (it re-drives them under the same keys).
        let abandoned_answer = thread
            .lease
            .as_ref()
            .filter(|_| thread.status == ThreadStatus::Running)
            .and_then(|l| l.answer.as_deref());
        let agent_id = options.agent_id.as_deref().unwrap_or(inner.agent.name());
        let decisions = validate_resume(
            inner.validator.as_deref(),
            &thread,
            agent_id,
            input,
            resume.as_deref(),
            abandoned_answer,
            now,
        )?;
        for decision in &decisions {
            let pending = thread
                .pending
                .iter()
                .find(|p| p.interrupt.id == decision.interrupt.id)
                .ok_or_else(|| CoreError::InterruptNotPending {
                    id: decision.interrupt.id.to_string(),
                })?;
            let access = Access::Answer {
                pending,
                status: decision.status,
            };
            inner.authorize(principal, existing, access)?;
            // The interrupt's own policy, as stored (and as the agent would choose it for
            // edited arguments): no authorizer can waive it.
            let reevaluated = reevaluated_policy(inner, pending, decision);
            approval::enforce(
                &inner.approval_checks,
                principal,
                pending,
                thread.owner.as_ref(),
                decision,
                reevaluated.as_ref(),
            )?;
        }
        // A pinned answer was ready when it was first accepted, and its effect may have
        // run since: its re-drive is never refused on the agent's word (that would strand
        // the thread with an effect in doubt).
        let redrive =
            abandoned_answer.is_some() || thread.pending.iter().any(|p| p.pinned_answer.is_some());
        if !redrive
            && let Err(refusal) = check_readiness(inner.agent.as_ref(), partition, &decisions).await
        {
            // The agent judged outside state (a ledger, a remote task) against this read of
            // the thread; if the thread has moved since (a concurrent identical answer was
            // applied), decide again on fresh facts: a replay, not a refusal.
            if still_current(inner, partition, &condition, now).await? {
                return Err(refusal);
            }
            continue;
        }

        let lease_end = lease::lease_until(inner, options.deadline_ms, now);
        // A stale copy is refused before anything is written. A request that contains the
        // thread's newest message cannot be stale, so only one that lacks it pays for a read
        // of the history here; the run reads it after RUN_STARTED otherwise.
        let preloaded = if decisions.is_empty() && history::needs_check(&thread, &input.messages) {
            let stored = history::load(inner, partition, &thread, thread.pages, now).await?;
            history::merge(&stored, &input.messages, after_running)?;
            Some(stored)
        } else {
            None
        };
        let state = if decisions.is_empty() {
            let state = input.state.clone().unwrap_or_else(|| thread.state.clone());
            if state.is_null() {
                Value::Object(Default::default())
            } else {
                state
            }
        } else {
            thread.state.clone()
        };
        let mut thread = thread;
        let migrated = history::migrate(inner, &mut thread, &input.run_id, now);
        let owner = thread.owner.take().or_else(|| Some(Owner::from(principal)));
        if thread.meta.agent_id.as_deref() != Some(agent_id) {
            thread.meta.agent_id = Some(agent_id.to_owned());
        }
        thread.meta.created_at_ms.get_or_insert(now);
        thread.meta.last_run_at_ms = Some(now);
        thread.meta.updated_at_ms = Some(now);
        // Moved, not copied: a thread head carries its pending interrupts and state.
        let claimed_thread = ThreadRecord {
            status: ThreadStatus::Running,
            lease: Some(Lease {
                run_id: input.run_id.clone(),
                expires_at_ms: lease_end,
                answer: resume.clone(),
            }),
            last_run: Some(LastRun {
                run_id: input.run_id.clone(),
                status: RunStatus::Running,
            }),
            owner,
            ..thread
        };
        let run = RunRecord {
            input_hash: hash.clone(),
            status: RunStatus::Running,
            resume_key: resume.clone(),
            started_at_ms: now,
            events: Vec::new(),
            snapshot_pages: None,
            requested_by: Some(Owner::from(principal)),
            cuts: Vec::new(),
        };
        let run_expiry = Some(now + inner.config.run_ttl_ms);
        let mut writes = vec![
            claimed_thread.write(partition, condition, Some(now + inner.config.thread_ttl_ms)),
            Write::put(&run_item_key, run_condition, run.encode(), run_expiry),
        ];
        writes.extend(migrated);
        if matches!(condition, Condition::Absent) {
            writes.push(leftovers::first_mark(inner, now));
            mark_until = leftovers::mark_expiry(inner, now);
        }
        if let Some(key) = &resume {
            let answer = ResumeRecord {
                run_id: input.run_id.clone(),
                finished: None,
            };
            writes.push(Write::put(
                key,
                resume_condition,
                records::encode(&answer),
                run_expiry,
            ));
        }
        match inner.store.commit(partition, writes, now).await {
            Ok(()) => {
                let fence = match condition {
                    Condition::Version(v) => v + 1,
                    _ => 1,
                };
                return Ok(Claim::Run(Box::new(Claimed {
                    run_id: input.run_id.clone(),
                    partition: partition_name,
                    requested_by: Owner::from(principal),
                    fence,
                    thread: claimed_thread,
                    decisions,
                    resume_key: resume,
                    input_hash: hash,
                    input_chain: chain,
                    started_at_ms: now,
                    state,
                    preloaded,
                    after_running,
                    mark_until,
                    audit_head,
                })));
            }
            // Someone else moved first: read again and decide with fresh facts.
            Err(StoreError::ConditionFailed { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Err(CoreError::ThreadBusy {
        run_id: String::new(),
        retry_after_ms: inner.config.busy_retry_after_ms,
    })
}

/// The policy the agent chooses for an answer's edited arguments, when it chooses
/// policies per call ([`crate::Agent::approval_policy_for`]).
fn reevaluated_policy(
    inner: &Inner,
    pending: &records::PendingInterrupt,
    decision: &crate::decision::Decision,
) -> Option<approval::ApprovalPolicy> {
    let edited = decision.edited_args()?;
    let tool = pending.tool_name.as_deref()?;
    inner.agent.approval_policy_for(tool, edited)
}

/// Whether the thread head is still at the version the claim read (`Absent`: still absent).
async fn still_current(
    inner: &Inner,
    partition: &str,
    read: &Condition,
    now: u64,
) -> Result<bool, CoreError> {
    let head = inner.store.get_one(partition, THREAD_KEY, now).await?;
    Ok(match (read, head) {
        (Condition::Version(v), Some(item)) => item.version == *v,
        (Condition::Absent, None) => true,
        _ => false,
    })
}

/// Whether a history shows no run yet: it holds only what a person or the application
/// wrote (no assistant or tool message). With no answers in the request, that reads as a
/// thread's first run; a client that sends only its new message also reads so on later
/// turns, and its claims then pay one refused commit before their read.
fn no_run_answered(messages: &[Message]) -> bool {
    !messages.is_empty()
        && messages.iter().all(|m| {
            matches!(
                m,
                Message::User(_) | Message::System(_) | Message::Developer(_)
            )
        })
}

/// Every id of the request is free of control characters (keys are joined with them)
/// and of sane length: 400 `INVALID_INPUT` naming the field, before anything is read.
fn check_input_ids(input: &RunAgentInput) -> Result<(), CoreError> {
    use crate::principal::check_id;
    check_id("runId", &input.run_id)?;
    if let Some(parent) = &input.parent_run_id {
        check_id("parentRunId", parent)?;
    }
    for entry in input.resume_entries() {
        check_id("resume[].interruptId", &entry.interrupt_id)?;
    }
    // History ids are the client's; only what could split a key is refused.
    // Printable ASCII (most ids) needs no decoding to be free of control characters.
    let has_control = |id: &str| {
        !id.bytes().all(|b| (b' '..=b'~').contains(&b)) && id.chars().any(char::is_control)
    };
    let control = |name: &str, id: &str| match has_control(id) {
        true => Err(CoreError::InvalidInput(format!(
            "{name} must not contain control characters"
        ))),
        false => Ok(()),
    };
    for message in &input.messages {
        control("messages[].id", message.id())?;
        if let Message::Assistant(a) = message {
            for call in a.tool_calls.iter().flatten() {
                control("messages[].toolCalls[].id", &call.id)?;
            }
        }
        if let Message::Tool(t) = message {
            control("messages[].toolCallId", &t.tool_call_id)?;
        }
    }
    Ok(())
}

/// A recorded run is replayed only to a principal who may read its thread, or who asked
/// for it (an approver's retry, once the interrupt is no longer pending).
fn may_replay(
    inner: &Inner,
    principal: &Principal,
    thread: Option<&ThreadRecord>,
    run: &RunRecord,
) -> Result<(), CoreError> {
    if run.made_by(principal) {
        return Ok(());
    }
    inner.authorize(principal, thread, Access::Read)
}

/// Whether `run_id` no longer holds a live lease on the thread.
fn abandoned(thread: Option<&ThreadRecord>, run_id: &RunId, now: u64) -> bool {
    let lease = thread.and_then(|t| t.lease.as_ref());
    lease.is_none_or(|l| l.run_id != *run_id || l.expires_at_ms <= now)
}

/// Whether an interrupt this answer addresses is pending again, raised by a run
/// other than the one that applied the answer. Interrupt ids are only unique
/// within a run, so that is a new question reusing an id: the answer must be
/// applied to it, not replayed from the earlier run (which would report success
/// and leave the thread interrupted for as long as the resume record lives).
fn reraised(thread: Option<&ThreadRecord>, entries: &[ResumeEntry], applied_by: &RunId) -> bool {
    let Some(thread) = thread else {
        return false;
    };
    thread.pending.iter().any(|p| {
        p.run_id != *applied_by && entries.iter().any(|e| e.interrupt_id == p.interrupt.id)
    })
}

fn busy(inner: &Inner, run_id: &RunId, lease_end: u64, now: u64) -> CoreError {
    CoreError::ThreadBusy {
        run_id: run_id.to_string(),
        retry_after_ms: inner
            .config
            .busy_retry_after_ms
            .min(lease_end.saturating_sub(now))
            .max(1),
    }
}

/// Whether a resume (`entries`) under `run_id` answers the interrupts that the stored run
/// of that id raised and the thread still waits on.
fn answers_run(
    thread: Option<&ThreadRecord>,
    entries: &[agui_protocol::ResumeEntry],
    run: &RunRecord,
    run_id: &RunId,
) -> bool {
    !entries.is_empty()
        && run.status == RunStatus::Interrupted
        && thread.is_some_and(|t| t.pending.iter().any(|p| p.run_id == *run_id))
}

/// A finished run is replayed (under the requester's runId); a running one is busy.
async fn replay_or_busy(
    inner: &Inner,
    partition: &str,
    mut run: RunRecord,
    original: &RunId,
    requested: &RunId,
    thread: Option<&ThreadRecord>,
) -> Result<Claim, CoreError> {
    if !run.status.is_final() {
        let now = inner.runtime.now_ms();
        let lease_end = thread
            .and_then(|t| t.lease.as_ref())
            .map_or(now, |l| l.expires_at_ms);
        return Err(busy(inner, original, lease_end, now));
    }
    history::hydrate(inner, partition, &mut run, inner.runtime.now_ms()).await?;
    Ok(Claim::Replay(rename_run(run.events, requested)))
}

/// Rewrites the run id of lifecycle events so a replay answers the request that asked.
fn rename_run(events: Vec<Event>, run_id: &RunId) -> Vec<Event> {
    events
        .into_iter()
        .map(|event| match event {
            Event::RunStarted(e) => Event::RunStarted(RunStarted {
                run_id: run_id.clone(),
                ..e
            }),
            Event::RunFinished(e) => Event::RunFinished(RunFinished {
                run_id: run_id.clone(),
                ..e
            }),
            other => other,
        })
        .collect()
}
