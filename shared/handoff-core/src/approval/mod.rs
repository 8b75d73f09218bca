//! Approval policies: who may answer an interrupt and what an answer may change.
//!
//! An agent attaches an [`ApprovalPolicy`] to the interrupt it raises
//! ([`WithApproval::with_approval`]). The policy travels in the interrupt's metadata
//! (`handoff.approval`, so a front end can show who must approve and what may be edited),
//! and the engine stores it with the pending interrupt, together with the principal whose
//! run raised it and the original arguments of the tool call it is about. Every answer is
//! checked against that stored copy when the engine claims the thread, whatever route or
//! host carried it — a client can neither supply nor weaken it. A refused answer writes
//! nothing: 403 `FORBIDDEN` for who answers, 422 `RESUME_PAYLOAD_INVALID` for an edit the
//! policy does not allow, each naming the rule.
//!
//! ```
//! use agui_protocol::Interrupt;
//! use handoff_core::approval::{ApprovalPolicy, WithApproval};
//!
//! let policy = ApprovalPolicy::new()
//!     .role("approver")
//!     .not_requester()
//!     .fixed("orderId")
//!     .at_most_original("amountCents");
//! let interrupt = Interrupt::new("int-1", "tool_call").with_approval(&policy);
//! assert_eq!(ApprovalPolicy::of(&interrupt).unwrap(), Some(policy));
//! ```
//!
//! Rules:
//! - **roles**: a `resolved` answer needs one of them (none listed: the thread's owner
//!   answers, as for any interrupt);
//! - **not the requester**: the principal whose run raised the interrupt may not resolve
//!   it (approve or deny); they may still cancel their own request;
//! - **edits**: `editedArgs` replaces the tool call's arguments. Every argument whose value
//!   differs from the original (added, removed or changed) needs an [`EditRule`] that
//!   allows the change; without rules no edit is allowed. Named checks
//!   ([`ApprovalPolicy::check`], registered with [`crate::Agent::approval_checks`] or
//!   [`crate::Engine::with_approval_check`]) see every edited answer; a check no instance
//!   registered refuses the answer (fail closed).

mod check;
mod edits;

use std::collections::BTreeMap;
use std::sync::Arc;

use agui_protocol::{Interrupt, Metadata};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::access::{NOT_OWNER, REQUIRED_ROLE};

pub use check::EditedAnswer;
pub(crate) use check::enforce;

/// Interrupt metadata carrying the [`ApprovalPolicy`].
pub const APPROVAL: &str = "handoff.approval";

/// How one argument of a tool call may be edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum EditRule {
    /// Must stay as proposed (the default for every argument; name it to document it).
    Fixed,
    /// May take any value the tool's schema accepts.
    Any,
    /// A number no greater than the proposed one.
    AtMostOriginal,
    /// A number no smaller than the proposed one.
    AtLeastOriginal,
}

/// Who may answer an interrupt and what an answer may change (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ApprovalPolicy {
    /// A `resolved` answer needs one of these roles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// The principal whose run raised the interrupt may not resolve it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_requester: bool,
    /// How each argument may change in `editedArgs`; unlisted arguments are fixed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub edits: BTreeMap<String, EditRule>,
    /// Named checks every edited answer must pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
    /// Derived from the metadata of interrupts stored before policies, which left edits
    /// to their schema and agent.
    #[serde(skip)]
    pub(crate) edits_unchecked: bool,
}

impl ApprovalPolicy {
    /// Anyone who may answer the thread's interrupts, no edits.
    pub fn new() -> Self {
        Self::default()
    }
    /// A `resolved` answer needs `role` (several calls: any one of them).
    #[must_use]
    pub fn role(mut self, role: &str) -> Self {
        if !self.roles.iter().any(|r| r == role) {
            self.roles.push(role.to_owned());
        }
        self
    }
    /// The requester may not resolve it (four eyes); they may still cancel.
    #[must_use]
    pub fn not_requester(mut self) -> Self {
        self.not_requester = true;
        self
    }
    /// `argument` may not change (the default; stating it documents the rule).
    #[must_use]
    pub fn fixed(self, argument: &str) -> Self {
        self.edit(argument, EditRule::Fixed)
    }
    /// `argument` may take any value.
    #[must_use]
    pub fn editable(self, argument: &str) -> Self {
        self.edit(argument, EditRule::Any)
    }
    /// `argument` may only decrease (or stay).
    #[must_use]
    pub fn at_most_original(self, argument: &str) -> Self {
        self.edit(argument, EditRule::AtMostOriginal)
    }
    /// `argument` may only increase (or stay).
    #[must_use]
    pub fn at_least_original(self, argument: &str) -> Self {
        self.edit(argument, EditRule::AtLeastOriginal)
    }
    /// `argument` may change as `rule` says.
    #[must_use]
    pub fn edit(mut self, argument: &str, rule: EditRule) -> Self {
        self.edits.insert(argument.to_owned(), rule);
        self
    }
    /// Every edited answer must also pass the check registered under `name`.
    #[must_use]
    pub fn check(mut self, name: &str) -> Self {
        self.checks.push(name.to_owned());
        self
    }

    /// The policy `interrupt` carries: its `handoff.approval` metadata, or the older
    /// `handoff.requiredRole` / `handoff.notOwner` keys (interrupts stored before
    /// policies). `Err` when the metadata is not a policy.
    pub fn of(interrupt: &Interrupt) -> Result<Option<ApprovalPolicy>, String> {
        let Some(metadata) = interrupt.metadata.as_ref() else {
            return Ok(None);
        };
        if let Some(value) = metadata.get(APPROVAL) {
            // Read in place: the value is not cloned to be consumed.
            return ApprovalPolicy::deserialize(value).map(Some).map_err(|e| {
                format!(
                    "interrupt {}: {APPROVAL} is not a policy: {e}",
                    interrupt.id
                )
            });
        }
        let Some(role) = metadata.get(REQUIRED_ROLE).and_then(Value::as_str) else {
            return Ok(None);
        };
        Ok(Some(ApprovalPolicy {
            roles: vec![role.to_owned()],
            not_requester: metadata.get(NOT_OWNER).and_then(Value::as_bool) == Some(true),
            // Legacy interrupts left `editedArgs` to their `responseSchema` and agent.
            edits_unchecked: true,
            ..ApprovalPolicy::default()
        }))
    }
}

/// Attaching a policy to an interrupt.
pub trait WithApproval {
    /// The interrupt with `policy` in its metadata (`handoff.approval`).
    #[must_use]
    fn with_approval(self, policy: &ApprovalPolicy) -> Self;
}

impl WithApproval for Interrupt {
    fn with_approval(mut self, policy: &ApprovalPolicy) -> Self {
        let value = serde_json::to_value(policy).unwrap_or(Value::Null);
        self.metadata
            .get_or_insert_with(Metadata::new)
            .insert(APPROVAL.to_owned(), value);
        self
    }
}

/// A named check on edited answers: `Err` (a reason safe to show) refuses the answer
/// with 422 `RESUME_PAYLOAD_INVALID`.
pub type ApprovalCheck = Arc<dyn Fn(&EditedAnswer<'_>) -> Result<(), String> + Send + Sync>;

/// The named checks an engine knows.
#[derive(Clone, Default)]
pub struct ApprovalChecks(BTreeMap<String, ApprovalCheck>);

impl ApprovalChecks {
    /// No checks.
    pub fn new() -> Self {
        Self::default()
    }
    /// With `check` under `name` (replacing one of that name).
    #[must_use]
    pub fn with(
        mut self,
        name: &str,
        check: impl Fn(&EditedAnswer<'_>) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.0.insert(name.to_owned(), Arc::new(check));
        self
    }
    pub(crate) fn get(&self, name: &str) -> Option<&ApprovalCheck> {
        self.0.get(name)
    }
    pub(crate) fn extend(&mut self, other: ApprovalChecks) {
        self.0.extend(other.0);
    }
}

impl std::fmt::Debug for ApprovalChecks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}
