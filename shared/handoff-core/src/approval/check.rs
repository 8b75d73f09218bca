//! Enforcing a stored policy on one answer, at the engine's claim.

use agui_protocol::{Interrupt, ResumeStatus};
use serde_json::Value;

use super::{ApprovalChecks, ApprovalPolicy, edits};
use crate::decision::Decision;
use crate::error::CoreError;
use crate::principal::{Owner, Principal};
use crate::records::PendingInterrupt;

/// What a named check sees of a `resolved` answer.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct EditedAnswer<'a> {
    /// The interrupt as it was raised.
    pub interrupt: &'a Interrupt,
    /// The tool call's proposed arguments, when the interrupt is about one.
    pub original: Option<&'a Value>,
    /// The answer's `editedArgs`, if it edits.
    pub edited: Option<&'a Value>,
    /// The whole answer.
    pub payload: Option<&'a Value>,
    /// Who answers.
    pub principal: &'a Principal,
}

/// `Ok` when `principal` may give `decision` to `pending` under its stored policy and,
/// when the answer edits the arguments of a call whose policy the agent chooses from them,
/// under `reevaluated` (the policy for the edited arguments) as well. `owner` is the
/// thread's owner: the requester of interrupts stored before the requester was recorded.
pub(crate) fn enforce(
    checks: &ApprovalChecks,
    principal: &Principal,
    pending: &PendingInterrupt,
    owner: Option<&Owner>,
    decision: &Decision,
    reevaluated: Option<&ApprovalPolicy>,
) -> Result<(), CoreError> {
    // Withdrawing a request is the requester's (or an approver's) right; the authorizer
    // decides who that is.
    if decision.status != ResumeStatus::Resolved {
        return Ok(());
    }
    let Some(policy) = stored_policy(pending)? else {
        return Ok(());
    };
    enforce_policy(checks, principal, pending, owner, decision, &policy)?;
    match reevaluated {
        Some(stricter) if *stricter != policy => {
            enforce_policy(checks, principal, pending, owner, decision, stricter)
        }
        _ => Ok(()),
    }
}

/// `Ok` when `principal` may resolve `pending` as far as its stored policy says who may
/// (roles, not the requester): the claim's rule, which the approvals inbox shows too.
pub(crate) fn may_resolve(
    principal: &Principal,
    pending: &PendingInterrupt,
    owner: Option<&Owner>,
) -> Result<(), CoreError> {
    match stored_policy(pending)? {
        Some(policy) => may_resolve_under(&policy, principal, pending, owner),
        None => Ok(()),
    }
}

/// The stored policy of `pending`; one that cannot be read refuses every resolution.
fn stored_policy(pending: &PendingInterrupt) -> Result<Option<ApprovalPolicy>, CoreError> {
    // Fail closed: a policy this server cannot read protects nothing if skipped.
    pending.policy().map_err(|reason| {
        tracing::error!(%reason, "unreadable approval policy");
        CoreError::Forbidden(format!(
            "interrupt {} carries an approval policy this server cannot read",
            pending.interrupt.id
        ))
    })
}

/// Who may resolve under `policy`: a holder of one of its roles, and not the requester
/// when it says so (`owner` stands in for a requester records before it did not keep).
fn may_resolve_under(
    policy: &ApprovalPolicy,
    principal: &Principal,
    pending: &PendingInterrupt,
    owner: Option<&Owner>,
) -> Result<(), CoreError> {
    let id = &pending.interrupt.id;
    if !policy.roles.is_empty() && !policy.roles.iter().any(|r| principal.has_role(r)) {
        return Err(CoreError::Forbidden(format!(
            "answering interrupt {id} needs the role {}",
            policy.roles.join(" or ")
        )));
    }
    let requester = pending.raised_by.as_ref().or(owner);
    if policy.not_requester && requester.is_none_or(|r| principal.same_as(r)) {
        return Err(CoreError::Forbidden(format!(
            "interrupt {id} must be approved by someone other than its requester (who may cancel it)"
        )));
    }
    Ok(())
}

/// `Ok` when a `resolved` `decision` by `principal` satisfies `policy`.
fn enforce_policy(
    checks: &ApprovalChecks,
    principal: &Principal,
    pending: &PendingInterrupt,
    owner: Option<&Owner>,
    decision: &Decision,
    policy: &ApprovalPolicy,
) -> Result<(), CoreError> {
    let id = &pending.interrupt.id;
    may_resolve_under(policy, principal, pending, owner)?;
    let invalid = |reason: String| CoreError::ResumePayloadInvalid {
        id: id.to_string(),
        reason: format!("the approval policy does not allow it: {reason}"),
    };
    let edited = decision.field("editedArgs").filter(|v| !v.is_null());
    if let Some(edited) = edited
        && !policy.edits_unchecked
    {
        edits::check(policy, pending.tool_args.as_ref(), edited).map_err(invalid)?;
    }
    let answer = EditedAnswer {
        interrupt: &pending.interrupt,
        original: pending.tool_args.as_ref(),
        edited,
        payload: decision.payload.as_ref(),
        principal,
    };
    for name in &policy.checks {
        let check = checks
            .get(name)
            .ok_or_else(|| invalid(format!("the check {name} is not registered on this server")))?;
        check(&answer).map_err(|why| invalid(format!("{name}: {why}")))?;
    }
    Ok(())
}
