//! Reading, validating and claiming a thread for a run: one consistent read and one
//! conditional commit in the common case, and for a thread's first run the commit alone
//! (its conditions stand in for the read; see `Request::may_assume_new`).
//!
//! [`claim`] is the sequence of its stages, each in its own module: the request worked out
//! once ([`request`]), then per attempt the read ([`read`], which clears an expired
//! thread's leftovers), the replays ([`replay`]), authorization ([`authorize`]), the busy
//! check ([`busy`]), the answers' validation and approval ([`answers`]), readiness
//! ([`ready`]), the stale-history check ([`stale`]), the starting state ([`state`]) and the
//! commit ([`commit`]). A stage that finds the thread moved sends the claim round again.

mod answers;
mod authorize;
mod busy;
mod commit;
mod read;
mod ready;
mod replay;
mod request;
mod stale;
mod state;
#[cfg(test)]
mod test_support;

use agui_protocol::{Event, RunAgentInput};

use super::claimed::Claimed;
use super::{Inner, RunOptions};
use crate::error::CoreError;
use crate::principal::Owner;
use crate::store::Condition;
use commit::Conditions;
use replay::Replayed;
use request::Request;

/// Conditional-commit races a claim retries before answering busy.
const MAX_ATTEMPTS: usize = 6;

pub(crate) enum Claim {
    Run(Box<Claimed>),
    Replay(Vec<Event>),
    /// The thread is still held by this other run, whose lease lapsed before it ended: it
    /// is to be re-driven before this request runs (see `redrive`).
    Abandoned(agui_protocol::RunId),
}

pub(crate) async fn claim(
    inner: &Inner,
    input: &RunAgentInput,
    options: &RunOptions,
    after_running: bool,
) -> Result<Claim, CoreError> {
    let request = Request::new(inner, input, options, after_running)?;
    let mut assume_new = request.may_assume_new(inner);
    for _ in 0..MAX_ATTEMPTS + usize::from(assume_new) {
        let now = inner.runtime.now_ms();
        let assumed = std::mem::take(&mut assume_new);
        let Some(read) = read::read(inner, &request, assumed, now).await? else {
            continue;
        };
        let (run, answer, redrive) = match replay::replay(inner, &request, &read, now).await? {
            Replayed::Done(claim) => return Ok(claim),
            Replayed::New {
                run,
                answer,
                redrive,
            } => (run, answer, redrive),
        };
        let (audit_head, mark_until) = (read.audit_head.clone(), read.mark_until);
        let (thread, condition) = read.into_thread()?;
        let existing = matches!(condition, Condition::Version(_)).then_some(&thread);
        authorize::authorize(inner, &request, existing)?;
        busy::check_free(inner, &thread, now)?;
        let decisions = answers::decide(inner, &request, &thread, existing, now)?;
        // An answer the abandoned run's in-doubt one excludes was refused just above.
        if !after_running
            && let Some(other) = super::handover::abandoned_by_other(&thread, &input.run_id, now)
        {
            return Ok(Claim::Abandoned(other));
        }
        let partition = request.partition.as_str();
        if !ready::ready(inner, partition, &thread, &decisions, &condition, now).await? {
            continue;
        }
        let preloaded = stale::preload(inner, &request, &thread, &decisions, now).await?;
        let state = state::initial(input, &thread, !decisions.is_empty());
        let conditions = Conditions {
            thread: condition,
            run,
            answer,
        };
        let Some(committed) = commit::commit(
            inner, &request, options, thread, conditions, mark_until, now,
        )
        .await?
        else {
            continue;
        };
        let watches = inherited_watches(options, &committed.thread, &decisions);
        return Ok(Claim::Run(Box::new(Claimed {
            run_id: input.run_id.clone(),
            partition: request.partition,
            requested_by: Owner::from(request.principal),
            fence: committed.fence,
            thread: committed.thread,
            decisions,
            resume_key: request.resume,
            input_hash: request.hash,
            input_chain: request.chain,
            started_at_ms: now,
            state,
            preloaded,
            after_running,
            mark_until: committed.mark_until,
            audit_head,
            watches,
            redrive,
            run_record: committed.run_record,
        })));
    }
    Err(CoreError::ThreadBusy {
        run_id: String::new(),
        retry_after_ms: inner.config.busy_retry_after_ms,
    })
}

/// The request's watches, then those of the interrupts its answers resolve (each once).
fn inherited_watches(
    options: &RunOptions,
    thread: &crate::records::ThreadRecord,
    decisions: &[crate::decision::Decision],
) -> Vec<crate::outbox::Watch> {
    let mut watches = options.watches.clone();
    let answered = thread
        .pending
        .iter()
        .filter(|p| decisions.iter().any(|d| d.interrupt.id == p.interrupt.id));
    for watch in answered.flat_map(|p| &p.watches) {
        if !watches.contains(watch) {
            watches.push(watch.clone());
        }
    }
    watches
}
