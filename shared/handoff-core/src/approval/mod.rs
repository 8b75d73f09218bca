//! Approval policies: who may answer an interrupt and what an answer may change.
//!
//! An agent raises an approval with [`WithApproval::with_approval`] (or
//! [`RaisedInterrupt::approval`]): the [`ApprovalPolicy`] is a typed field of the raised
//! interrupt, and the engine stores it as a typed field of the pending interrupt
//! ([`crate::records::PendingInterrupt::approval`]), together with the principal whose
//! run raised it, the agent that raised it and the original arguments of the tool call it
//! is about. `metadata["handoff.approval"]` on the wire is an echo written from that field
//! when the interrupt is announced (so a front end can show who must approve and what may
//! be edited); nothing reads a policy back from metadata. Every answer is checked against
//! the stored copy when the engine claims the thread, whatever route or host carried it —
//! a client can neither supply nor weaken it. A refused answer writes nothing: 403
//! `FORBIDDEN` for who answers, 422 `RESUME_PAYLOAD_INVALID` for an edit the policy does
//! not allow, each naming the rule.
//!
//! **Fail closed.** An interrupt whose metadata claims an approval (`handoff.approval`,
//! `handoff.requiredRole`, `handoff.notOwner`) without a typed policy ends its run with
//! `RUN_ERROR` `APPROVAL_POLICY_MISSING` and stores nothing answerable. A stored
//! interrupt that needs an approval whose policy cannot be read is answered by no one.
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
//! let raised = Interrupt::new("int-1", "tool_call").with_approval(&policy);
//! assert_eq!(raised.policy(), Some(&policy));
//! ```
//!
//! Rules:
//! - **roles**: a `resolved` answer needs one of them (none listed: the thread's owner
//!   answers, as for any interrupt);
//! - **not the requester**: the principal whose run raised the interrupt may not resolve
//!   it (approve or deny); they may still cancel their own request;
//! - **edits**: `editedArgs` replaces the tool call's arguments. Every argument whose value
//!   differs from the original (added, removed or changed) needs an [`EditRule`] that
//!   allows the change; without rules no edit is allowed. A bounded number keeps its type
//!   (an integer stays an integer) and its sign (a non-negative one stays non-negative).
//!   Named checks ([`ApprovalPolicy::check`], registered with
//!   [`crate::Agent::approval_checks`] or [`crate::Engine::with_approval_check`]) see every
//!   edited answer; a check no instance registered refuses the answer (fail closed).
//! - **re-evaluated on edits**: an agent that chooses the policy from the call's arguments
//!   ([`crate::Agent::approval_policy_for`]) is asked again for the edited arguments, and
//!   the answer must satisfy both policies (the stricter one applies).

mod check;
mod edits;
mod raised;

use std::collections::BTreeMap;
use std::sync::Arc;

use agui_protocol::Interrupt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use check::EditedAnswer;
pub(crate) use check::{enforce, may_resolve};
pub use raised::{ApprovalSource, RaisedInterrupt};

/// Interrupt metadata naming the role an answer needs (before approval policies; read
/// as a policy with that role).
pub const REQUIRED_ROLE: &str = "handoff.requiredRole";
/// Interrupt metadata: `true` when the requester may not resolve it (before approval
/// policies; read as a policy's not-the-requester rule).
pub const NOT_OWNER: &str = "handoff.notOwner";

/// Interrupt metadata echoing the [`ApprovalPolicy`] on the wire (written by the engine
/// from the typed field; never read back as a policy on new records).
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

    /// The policy a record stored before typed policies carries in its interrupt's
    /// metadata: `handoff.approval`, or the older `handoff.requiredRole` /
    /// `handoff.notOwner` keys. `Err` when the metadata claims a policy it does not hold.
    pub(crate) fn from_legacy_metadata(
        interrupt: &Interrupt,
    ) -> Result<Option<ApprovalPolicy>, String> {
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
        if metadata.contains_key(NOT_OWNER) && !metadata.contains_key(REQUIRED_ROLE) {
            return Err(format!(
                "interrupt {}: {NOT_OWNER} without {REQUIRED_ROLE}",
                interrupt.id
            ));
        }
        let Some(role) = metadata.get(REQUIRED_ROLE) else {
            return Ok(None);
        };
        let role = role
            .as_str()
            .ok_or_else(|| format!("interrupt {}: {REQUIRED_ROLE} is not a role", interrupt.id))?;
        Ok(Some(ApprovalPolicy {
            roles: vec![role.to_owned()],
            not_requester: metadata.get(NOT_OWNER).and_then(Value::as_bool) == Some(true),
            // Legacy interrupts left `editedArgs` to their `responseSchema` and agent.
            edits_unchecked: true,
            ..ApprovalPolicy::default()
        }))
    }
}

/// Whether `interrupt`'s metadata claims an approval (any of the keys a policy was ever
/// carried in): such an interrupt needs a typed policy.
pub(crate) fn claims_approval(interrupt: &Interrupt) -> bool {
    interrupt.metadata.as_ref().is_some_and(|m| {
        [APPROVAL, REQUIRED_ROLE, NOT_OWNER]
            .iter()
            .any(|k| m.contains_key(*k))
    })
}

/// Raising an interrupt as an approval.
pub trait WithApproval {
    /// The interrupt raised as an approval under `policy` (a typed field of the result;
    /// see [`RaisedInterrupt`]).
    #[must_use]
    fn with_approval(self, policy: &ApprovalPolicy) -> RaisedInterrupt;
}

impl WithApproval for Interrupt {
    fn with_approval(self, policy: &ApprovalPolicy) -> RaisedInterrupt {
        RaisedInterrupt::approval(self, policy.clone())
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
