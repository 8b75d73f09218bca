//! Stage 8, the commit: the thread head leased to the run, the run's record, a first
//! thread's leftovers marker and a resume's record, in one conditional commit on the
//! versions the claim read. A lost race reads and decides again.

use super::super::{Inner, RunOptions, handover, history, lease, leftovers};
use super::request::Request;
use crate::error::CoreError;
use crate::principal::Owner;
use crate::records::{
    self, LastRun, Lease, ResumeRecord, RunRecord, RunStatus, ThreadRecord, ThreadStatus,
};
use crate::store::{Condition, StoreError, Write};

/// The versions the commit must find the records at.
pub(crate) struct Conditions {
    pub(crate) thread: Condition,
    pub(crate) run: Condition,
    pub(crate) answer: Condition,
}

/// A committed claim.
pub(crate) struct Committed {
    /// The thread as claimed.
    pub(crate) thread: ThreadRecord,
    /// The thread's version after the commit (its lease's fence).
    pub(crate) fence: u64,
    /// When the thread's marker expires as the claim saw or wrote it.
    pub(crate) mark_until: u64,
    /// The run's record as written (its request in it, for a re-drive).
    pub(crate) run_record: Vec<u8>,
}

/// The commit, or `None` when another writer moved first.
pub(crate) async fn commit(
    inner: &Inner,
    request: &Request<'_>,
    options: &RunOptions,
    mut thread: ThreadRecord,
    conditions: Conditions,
    mut mark_until: u64,
    now: u64,
) -> Result<Option<Committed>, CoreError> {
    let (input, principal) = (request.input, request.principal);
    let partition = request.partition.as_str();
    let lease_end = lease::lease_until(inner, request.deadline_ms, now);
    let run_expiry = Some(now + inner.config.run_ttl_ms);
    // Before the head moves on: what of the input the stored history already holds.
    let redrive = handover::request(input, options, &thread, &request.chain);
    let migrated = history::migrate(inner, &mut thread, &input.run_id, now);
    let owner = thread.owner.take().or_else(|| Some(Owner::from(principal)));
    if thread.meta.agent_id.as_deref() != Some(request.agent_id) {
        thread.meta.agent_id = Some(request.agent_id.to_owned());
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
            answer: request.resume.clone(),
        }),
        last_run: Some(LastRun {
            run_id: input.run_id.clone(),
            status: RunStatus::Running,
        }),
        owner,
        ..thread
    };
    let run = RunRecord {
        input_hash: request.hash.clone(),
        status: RunStatus::Running,
        resume_key: request.resume.clone(),
        started_at_ms: now,
        events: Vec::new(),
        snapshot_pages: None,
        requested_by: Some(Owner::from(principal)),
        cuts: Vec::new(),
        redrive: Some(redrive),
    };
    let run_record = run.encode();
    let thread_expiry = Some(now + inner.config.thread_ttl_ms);
    let mut writes = vec![
        claimed_thread.write(partition, conditions.thread, thread_expiry),
        Write::put(
            &request.run_key,
            conditions.run,
            run_record.clone(),
            run_expiry,
        )
        .indexed(handover::listing(lease_end)),
    ];
    writes.extend(migrated);
    if matches!(conditions.thread, Condition::Absent) {
        writes.push(leftovers::first_mark(inner, now));
        mark_until = leftovers::mark_expiry(inner, now);
    }
    if let Some(key) = &request.resume {
        let answer = ResumeRecord {
            run_id: input.run_id.clone(),
            finished: None,
        };
        let record = records::encode(&answer);
        writes.push(Write::put(key, conditions.answer, record, run_expiry));
    }
    match inner.store.commit(partition, writes, now).await {
        Ok(()) => Ok(Some(Committed {
            thread: claimed_thread,
            fence: match conditions.thread {
                Condition::Version(v) => v + 1,
                _ => 1,
            },
            mark_until,
            run_record,
        })),
        // Someone else moved first: read again and decide with fresh facts.
        Err(StoreError::ConditionFailed { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use futures::executor::block_on;

    use super::{Conditions, commit};
    use crate::engine::claim::test_support::{Fixture, input};
    use crate::records::{ThreadRecord, ThreadStatus};
    use crate::store::Condition;

    fn options() -> crate::engine::RunOptions {
        crate::engine::RunOptions::default()
    }

    fn absent() -> Conditions {
        Conditions {
            thread: Condition::Absent,
            run: Condition::Absent,
            answer: Condition::Absent,
        }
    }

    #[test]
    fn a_first_claim_is_one_commit_of_head_run_and_marker() {
        let f = Fixture::new();
        let plain = input("t", "r1");
        let request = f.request(&plain);
        let now = f.now();
        let thread = ThreadRecord::default();
        let done = block_on(commit(
            &f.inner,
            &request,
            &options(),
            thread,
            absent(),
            0,
            now,
        ))
        .unwrap();
        let done = done.expect("nothing stood in the way");
        assert_eq!(done.thread.status, ThreadStatus::Running);
        assert_eq!(done.fence, 1);
        assert!(done.mark_until > now, "the marker was written");
        let cost = f.cost();
        // The head, the run (the request kept for a re-drive rides in it), the marker.
        assert_eq!((cost.gets, cost.commits, cost.puts), (0, 1, 3));
    }

    #[test]
    fn a_lost_race_is_none_not_an_error() {
        let f = Fixture::new();
        block_on(f.put_thread(&ThreadRecord::default()));
        let plain = input("t", "r1");
        let request = f.request(&plain);
        let thread = ThreadRecord::default();
        let lost = block_on(commit(
            &f.inner,
            &request,
            &options(),
            thread,
            absent(),
            0,
            f.now(),
        ))
        .unwrap();
        assert!(lost.is_none());
        assert_eq!(f.cost().conflicts, 1);
    }
}
