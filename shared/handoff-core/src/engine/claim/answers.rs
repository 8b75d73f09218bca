//! Stage 4, the answers of a resume: each validated against its interrupt (pending, for
//! this agent, within its schema), its sender authorized to give it, and the interrupt's
//! approval policy enforced (no authorizer can waive it).

use super::super::Inner;
use super::super::validate::validate_resume;
use super::request::Request;
use crate::access::Access;
use crate::approval::{self, ApprovalPolicy};
use crate::decision::Decision;
use crate::error::CoreError;
use crate::records::{PendingInterrupt, ThreadRecord, ThreadStatus};

/// The request's answers as decisions (none for a new run), or why one is refused.
pub(crate) fn decide(
    inner: &Inner,
    request: &Request<'_>,
    thread: &ThreadRecord,
    existing: Option<&ThreadRecord>,
    now: u64,
) -> Result<Vec<Decision>, CoreError> {
    let answers = validate_resume(
        inner.validator.as_deref(),
        thread,
        request.agent_id,
        request.input,
        request.resume.as_deref(),
        abandoned_answer(thread),
        now,
    )?;
    for (pending, decision) in &answers {
        let access = Access::Answer {
            pending,
            status: decision.status,
        };
        inner.authorize(request.principal, existing, access)?;
        // The interrupt's own policy, as stored (and as the agent would choose it for
        // edited arguments): no authorizer can waive it.
        let reevaluated = reevaluated_policy(inner, pending, decision);
        approval::enforce(
            &inner.approval_checks,
            request.principal,
            pending,
            thread.owner.as_ref(),
            decision,
            reevaluated.as_ref(),
        )?;
    }
    Ok(answers.into_iter().map(|(_, decision)| decision).collect())
}

/// The answer a holder that died was applying: it may have executed its effects, so only
/// that answer may follow (it re-drives them under the same keys).
pub(crate) fn abandoned_answer(thread: &ThreadRecord) -> Option<&str> {
    thread
        .lease
        .as_ref()
        .filter(|_| thread.status == ThreadStatus::Running)
        .and_then(|l| l.answer.as_deref())
}

/// The policy the agent chooses for an answer's edited arguments, when it chooses
/// policies per call ([`crate::Agent::approval_policy_for`]).
fn reevaluated_policy(
    inner: &Inner,
    pending: &PendingInterrupt,
    decision: &Decision,
) -> Option<ApprovalPolicy> {
    let edited = decision.edited_args()?;
    let tool = pending.tool_name.as_deref()?;
    inner.agent.approval_policy_for(tool, edited)
}

#[cfg(test)]
mod tests {
    use agui_protocol::RunId;

    use super::{abandoned_answer, decide};
    use crate::engine::claim::test_support::{Fixture, input};
    use crate::records::{Lease, ThreadRecord, ThreadStatus};

    #[test]
    fn a_new_run_has_no_decisions() {
        let f = Fixture::new();
        let plain = input("t", "r1");
        let thread = ThreadRecord::default();
        let decisions = decide(&f.inner, &f.request(&plain), &thread, None, f.now()).unwrap();
        assert!(decisions.is_empty());
    }

    #[test]
    fn only_a_running_threads_lease_pins_its_answer() {
        let mut thread = ThreadRecord {
            status: ThreadStatus::Running,
            lease: Some(Lease {
                run_id: RunId::from("r1"),
                expires_at_ms: 0,
                answer: Some("resume#x".into()),
            }),
            ..ThreadRecord::default()
        };
        assert_eq!(abandoned_answer(&thread), Some("resume#x"));
        thread.status = ThreadStatus::Interrupted;
        assert_eq!(abandoned_answer(&thread), None);
    }
}
