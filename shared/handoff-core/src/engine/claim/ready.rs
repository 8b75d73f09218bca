//! Stage 5, readiness: the agent may say a resolved answer cannot be applied yet (a ledger,
//! a remote task). A re-drive of an answer already accepted is never refused.

use super::super::Inner;
use super::super::validate::check_readiness;
use super::answers::abandoned_answer;
use crate::decision::Decision;
use crate::error::CoreError;
use crate::records::{THREAD_KEY, ThreadRecord};
use crate::store::Condition;

/// Whether the claim goes on (`false`: the thread moved since the read, read again), or
/// the agent's refusal.
pub(crate) async fn ready(
    inner: &Inner,
    partition: &str,
    thread: &ThreadRecord,
    decisions: &[Decision],
    read_at: &Condition,
    now: u64,
) -> Result<bool, CoreError> {
    // A pinned answer was ready when it was first accepted, and its effect may have
    // run since: its re-drive is never refused on the agent's word (that would strand
    // the thread with an effect in doubt).
    let redrive = abandoned_answer(thread).is_some()
        || thread.pending.iter().any(|p| p.pinned_answer.is_some());
    if !redrive
        && let Err(refusal) = check_readiness(inner.agent.as_ref(), partition, decisions).await
    {
        // The agent judged outside state (a ledger, a remote task) against this read of
        // the thread; if the thread has moved since (a concurrent identical answer was
        // applied), decide again on fresh facts: a replay, not a refusal.
        if still_current(inner, partition, read_at, now).await? {
            return Err(refusal);
        }
        return Ok(false);
    }
    Ok(true)
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

#[cfg(test)]
mod tests {
    use futures::executor::block_on;

    use super::{ready, still_current};
    use crate::engine::claim::test_support::Fixture;
    use crate::records::ThreadRecord;
    use crate::store::Condition;

    #[test]
    fn without_answers_the_claim_goes_on_without_a_read() {
        let f = Fixture::new();
        let thread = ThreadRecord::default();
        let go = block_on(ready(
            &f.inner,
            "p",
            &thread,
            &[],
            &Condition::Absent,
            f.now(),
        ));
        assert!(go.unwrap());
        assert_eq!(f.cost().gets, 0);
    }

    #[test]
    fn a_head_that_moved_is_not_current() {
        let f = Fixture::new();
        block_on(f.put_thread(&ThreadRecord::default()));
        let partition = f.options.principal.partition("t").unwrap();
        let now = f.now();
        assert!(!block_on(still_current(&f.inner, &partition, &Condition::Absent, now)).unwrap());
        assert!(
            block_on(still_current(
                &f.inner,
                &partition,
                &Condition::Version(1),
                now
            ))
            .unwrap()
        );
        assert!(
            !block_on(still_current(
                &f.inner,
                &partition,
                &Condition::Version(2),
                now
            ))
            .unwrap()
        );
    }
}
