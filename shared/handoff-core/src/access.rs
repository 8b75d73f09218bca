//! Who may do what on a thread: the [`Authorizer`] hook and its default policy.
//!
//! The engine asks before it reveals or writes anything. A thread a caller may not see
//! is answered exactly as a thread that does not exist (404 `THREAD_NOT_FOUND`), so ids
//! cannot be probed; a caller who may see the thread but not do this gets 403 `FORBIDDEN`.
//!
//! **Default policy** ([`OwnerPolicy`]): the principal of a thread's first run owns it.
//! The owner may read, run and answer. A principal of the same tenant holding a role that
//! a pending interrupt asks for (`metadata["handoff.requiredRole"]`) may read the thread
//! and answer that interrupt. **Four-eyes**: an interrupt naming a role can only be
//! resolved by a holder of that role, and with `metadata["handoff.notOwner"] = true`
//! never by the thread's owner, who may still cancel their own request. Other tenants'
//! threads are not even addressable: partitions are scoped by tenant.

use agui_protocol::{Interrupt, ResumeStatus};

use crate::principal::{Owner, Principal};
use crate::records::PendingInterrupt;

/// Interrupt metadata naming the role an answer needs.
pub const REQUIRED_ROLE: &str = "handoff.requiredRole";
/// Interrupt metadata: `true` when the thread's owner may not resolve it.
pub const NOT_OWNER: &str = "handoff.notOwner";

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
        /// The interrupt.
        interrupt: &'a Interrupt,
        /// `resolved` or `cancelled`.
        status: ResumeStatus,
    },
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
        let approver = facts
            .pending
            .iter()
            .any(|p| required_role(&p.interrupt).is_some_and(|role| principal.has_role(role)));
        if !owns && !approver {
            return Verdict::Hidden;
        }
        match access {
            Access::Read => Verdict::Allow,
            Access::Run if owns => Verdict::Allow,
            Access::Run => {
                Verdict::Forbidden("only the thread's owner may start a run on it".into())
            }
            Access::Answer { interrupt, status } => {
                answer(principal, facts.owner, interrupt, status)
            }
        }
    }
}

fn answer(
    principal: &Principal,
    owner: Option<&Owner>,
    interrupt: &Interrupt,
    status: ResumeStatus,
) -> Verdict {
    let is_owner = owner.is_none_or(|o| principal.same_as(o));
    let role = required_role(interrupt);
    let holds_role = role.is_some_and(|r| principal.has_role(r));
    if status == ResumeStatus::Cancelled {
        // Withdrawing a request is always the requester's (or an approver's) to do.
        return if is_owner || holds_role {
            Verdict::Allow
        } else {
            Verdict::Forbidden(format!("interrupt {} is not yours to cancel", interrupt.id))
        };
    }
    match role {
        Some(role) if !holds_role => Verdict::Forbidden(format!(
            "answering interrupt {} needs the role {role}",
            interrupt.id
        )),
        Some(_) if not_owner(interrupt) && owner.is_some_and(|o| principal.same_as(o)) => {
            Verdict::Forbidden(format!(
                "interrupt {} must be approved by someone other than its requester",
                interrupt.id
            ))
        }
        Some(_) => Verdict::Allow,
        None if is_owner => Verdict::Allow,
        None => Verdict::Forbidden(format!(
            "only the thread's owner may answer interrupt {}",
            interrupt.id
        )),
    }
}

/// The role an interrupt's answer needs (`metadata["handoff.requiredRole"]`).
pub fn required_role(interrupt: &Interrupt) -> Option<&str> {
    interrupt.metadata.as_ref()?.get(REQUIRED_ROLE)?.as_str()
}

/// Whether the thread's owner is barred from resolving the interrupt (`metadata["handoff.notOwner"]`).
pub fn not_owner(interrupt: &Interrupt) -> bool {
    interrupt
        .metadata
        .as_ref()
        .and_then(|m| m.get(NOT_OWNER))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}
