//! Who may do what on a thread: the [`Authorizer`] hook and its default policy.
//!
//! The engine asks before it reveals or writes anything. A thread a caller may not see
//! is answered exactly as a thread that does not exist (404 `THREAD_NOT_FOUND`), so ids
//! cannot be probed; a caller who may see the thread but not do this gets 403 `FORBIDDEN`.
//!
//! **Default policy** ([`OwnerPolicy`]): the principal of a thread's first run owns it.
//! The owner may read, run, answer, manage and fork. A principal of the same tenant holding
//! a role that a pending interrupt's [`crate::ApprovalPolicy`] asks for may read the thread
//! and answer that interrupt, but not fork it (a copy would outlast the interrupt). The
//! policy itself (roles, not the requester, edit rules) is enforced by the
//! engine whatever the authorizer says (see [`crate::approval`]). Other tenants' threads
//! are not even addressable: partitions are scoped by tenant.

use agui_protocol::ResumeStatus;

use crate::principal::{Owner, Principal};
use crate::records::PendingInterrupt;

/// What the caller wants to do.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Access<'a> {
    /// Read the thread or replay one of its runs.
    Read,
    /// Start a new run on it.
    Run,
    /// Answer one pending interrupt.
    Answer {
        /// The pending interrupt (its typed approval policy included).
        pending: &'a PendingInterrupt,
        /// `resolved` or `cancelled`.
        status: ResumeStatus,
    },
    /// Rename, archive or delete it.
    Manage,
    /// Copy it into a new thread of the caller's, which the caller keeps whatever
    /// becomes of this one.
    Fork,
}

/// What the engine knows of the thread when it asks.
#[derive(Debug, Clone, Copy)]
pub struct ThreadFacts<'a> {
    /// The principal of its first run; `None` for a new thread (or one stored before
    /// owners were recorded): whoever acts on it first becomes its owner.
    pub owner: Option<&'a Owner>,
    /// Interrupts waiting for an answer (as the thread record keeps them).
    pub pending: &'a [PendingInterrupt],
}

/// The answer of an [`Authorizer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Go ahead.
    Allow,
    /// 404 `THREAD_NOT_FOUND`: the caller may not know the thread exists.
    Hidden,
    /// 403 `FORBIDDEN` with a reason safe to show.
    Forbidden(String),
}

/// The policy hook: principal × thread × operation → verdict.
pub trait Authorizer: Send + Sync + 'static {
    /// Whether `principal` may do `access` on a thread with `facts`.
    fn authorize(
        &self,
        principal: &Principal,
        facts: ThreadFacts<'_>,
        access: Access<'_>,
    ) -> Verdict;
}

/// The default policy (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct OwnerPolicy;

impl Authorizer for OwnerPolicy {
    fn authorize(
        &self,
        principal: &Principal,
        facts: ThreadFacts<'_>,
        access: Access<'_>,
    ) -> Verdict {
        let owns = facts.owner.is_none_or(|owner| principal.same_as(owner));
        // Only a non-owner needs the pending interrupts' policies read.
        let approver = || {
            facts.pending.iter().any(|p| {
                approver_roles(p)
                    .iter()
                    .any(|role| principal.has_role(role))
            })
        };
        if !owns && !approver() {
            return Verdict::Hidden;
        }
        match access {
            Access::Read => Verdict::Allow,
            Access::Run if owns => Verdict::Allow,
            Access::Run => {
                Verdict::Forbidden("only the thread's owner may start a run on it".into())
            }
            Access::Answer { pending, status } => answer(principal, facts.owner, pending, status),
            Access::Manage if owns => Verdict::Allow,
            Access::Manage => Verdict::Forbidden(
                "only the thread's owner may rename, archive or delete it".into(),
            ),
            // An approver's read access lasts while the interrupt is open; a copy would
            // outlive it.
            Access::Fork if owns => Verdict::Allow,
            Access::Fork => Verdict::Forbidden("only the thread's owner may fork it".into()),
        }
    }
}

fn answer(
    principal: &Principal,
    owner: Option<&Owner>,
    pending: &PendingInterrupt,
    status: ResumeStatus,
) -> Verdict {
    let interrupt = &pending.interrupt;
    let is_owner = owner.is_none_or(|o| principal.same_as(o));
    let roles = approver_roles(pending);
    let holds_role = roles.iter().any(|r| principal.has_role(r));
    if status == ResumeStatus::Cancelled {
        // Withdrawing a request is always the requester's (or an approver's) to do.
        return if is_owner || holds_role {
            Verdict::Allow
        } else {
            Verdict::Forbidden(format!("interrupt {} is not yours to cancel", interrupt.id))
        };
    }
    // Who may address it at all: the owner, or (when its policy names roles) anyone the
    // policy may let answer. The policy itself (roles, not the requester, edits) is the
    // engine's to enforce, whatever an authorizer says.
    if roles.is_empty() && !is_owner {
        return Verdict::Forbidden(format!(
            "only the thread's owner may answer interrupt {}",
            interrupt.id
        ));
    }
    Verdict::Allow
}

/// The roles a pending interrupt's approval policy asks for (empty: none, or no policy).
pub fn approver_roles(pending: &PendingInterrupt) -> Vec<String> {
    match pending.policy() {
        Ok(Some(policy)) => policy.roles,
        _ => Vec::new(),
    }
}
