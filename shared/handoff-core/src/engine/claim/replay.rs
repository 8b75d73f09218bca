//! Stage 2, the replays: a request repeating a run that has a record (the same input under
//! the same run id), or an answer already applied (its resume record), is answered with
//! that run's events instead of running again; while that run still runs, it is busy.
//! Otherwise this stage says at which versions the commit must find the two records.

use agui_protocol::event::{RunFinished, RunStarted};
use agui_protocol::{Event, ResumeEntry, RunId};

use super::super::hash::same_input;
use super::super::{Inner, history};
use super::Claim;
use super::busy::busy;
use super::read::Read;
use super::request::Request;
use crate::access::Access;
use crate::error::CoreError;
use crate::principal::Principal;
use crate::records::{self, ResumeRecord, RunRecord, RunStatus, ThreadRecord, run_key};
use crate::store::Condition;

/// What the replay stage decided.
pub(crate) enum Replayed {
    /// The request is answered: a replay (or an error).
    Done(Claim),
    /// A new run: the versions its commit must find its run and resume records at, and
    /// whether it re-executes its own abandoned run.
    New {
        run: Condition,
        answer: Condition,
        redrive: bool,
    },
}

pub(crate) async fn replay(
    inner: &Inner,
    request: &Request<'_>,
    read: &Read,
    now: u64,
) -> Result<Replayed, CoreError> {
    let (input, principal) = (request.input, request.principal);
    let stored = read.stored();
    let entries = request.entries();
    // Abandoned runs (their instance died holding the lease) are re-executed in place;
    // their effects are protected by effect records, not by this check.
    let mut run_condition = Condition::Absent;
    let mut resume_condition = Condition::Absent;
    let mut redrive = false;
    if let Some(item) = &read.run {
        let run: RunRecord = records::decode(item)?;
        if !same_input(&run.input_hash, &request.hash, input) {
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
                let partition = &request.partition;
                let (id, asked) = (&input.run_id, &input.run_id);
                return replay_or_busy(inner, partition, run, id, asked, stored)
                    .await
                    .map(Replayed::Done);
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
            redrive = true;
        }
    }
    if let Some(item) = &read.answer {
        let answer: ResumeRecord = records::decode(item)?;
        // A finished answer carries its run; only an in-flight one costs a second read.
        let run = match answer.finished {
            Some(run) => Some(*run),
            None => {
                let key = run_key(&answer.run_id);
                match inner.store.get_one(&request.partition, &key, now).await? {
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
                let partition = &request.partition;
                let (id, asked) = (&answer.run_id, &input.run_id);
                return replay_or_busy(inner, partition, run, id, asked, stored)
                    .await
                    .map(Replayed::Done);
            }
        }
        resume_condition = Condition::Version(item.version);
    }
    Ok(Replayed::New {
        run: run_condition,
        answer: resume_condition,
        redrive,
    })
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

/// Whether a resume (`entries`) under `run_id` answers the interrupts that the stored run
/// of that id raised and the thread still waits on.
fn answers_run(
    thread: Option<&ThreadRecord>,
    entries: &[ResumeEntry],
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

#[cfg(test)]
mod tests {
    use agui_protocol::event::{RunFinished, RunStarted};
    use agui_protocol::{Event, RunId};

    use super::{abandoned, rename_run};
    use crate::records::{Lease, ThreadRecord};

    #[test]
    fn a_replay_answers_under_the_run_id_that_asked() {
        let events = vec![
            Event::RunStarted(RunStarted::new("t", "r1")),
            Event::RunFinished(RunFinished::new("t", "r1")),
        ];
        for event in rename_run(events, &RunId::from("r2")) {
            match event {
                Event::RunStarted(e) => assert_eq!(e.run_id.as_str(), "r2"),
                Event::RunFinished(e) => assert_eq!(e.run_id.as_str(), "r2"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_run_is_abandoned_once_it_holds_no_live_lease() {
        let thread = ThreadRecord {
            lease: Some(Lease {
                run_id: RunId::from("r1"),
                expires_at_ms: 50,
                answer: None,
            }),
            ..ThreadRecord::default()
        };
        let r1 = RunId::from("r1");
        assert!(!abandoned(Some(&thread), &r1, 49));
        assert!(abandoned(Some(&thread), &r1, 50), "the lease ended");
        assert!(
            abandoned(Some(&thread), &RunId::from("r2"), 0),
            "another run's lease"
        );
        assert!(abandoned(None, &r1, 0), "no thread");
    }
}
