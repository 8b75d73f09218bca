//! An interrupt as an agent raises it: a question, or an approval under a typed policy.

use agui_protocol::{Interrupt, Metadata};
use serde::{Deserialize, Serialize};

use super::ApprovalPolicy;

/// One interrupt of [`crate::Finish::Interrupt`], with the approval policy it is raised
/// under as a typed field.
///
/// The policy is set only by the constructor that raises an approval
/// ([`RaisedInterrupt::approval`], or [`super::WithApproval::with_approval`] on an
/// [`Interrupt`]); nothing that edits the interrupt afterwards (metadata included) can
/// drop or weaken it. The engine stores it with the pending interrupt and writes its
/// `metadata["handoff.approval"]` echo when the interrupt is announced. An interrupt
/// whose metadata claims an approval (`handoff.approval`, or the older
/// `handoff.requiredRole` / `handoff.notOwner`) without a typed policy fails the run
/// with `APPROVAL_POLICY_MISSING`: nothing answerable is stored.
///
/// ```
/// use agui_protocol::{Interrupt, Metadata};
/// use handoff_core::approval::{ApprovalPolicy, RaisedInterrupt, WithApproval};
/// use serde_json::json;
///
/// let policy = ApprovalPolicy::new().role("approver").not_requester();
/// let mut extra = Metadata::new();
/// extra.insert("mcp".into(), json!({"server": "pay"}));
/// let raised = Interrupt::new("int-1", "tool_call")
///     .with_approval(&policy)
///     .with_metadata(extra); // merged: the policy stays
/// assert_eq!(raised.policy(), Some(&policy));
/// assert!(RaisedInterrupt::from(Interrupt::new("int-2", "input_required")).policy().is_none());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RaisedInterrupt {
    interrupt: Interrupt,
    approval: Option<(ApprovalPolicy, ApprovalSource)>,
}

/// Which kind of code raised an approval. Every place in Handoff that raises one names
/// itself here, and a test runs the same approval scenario through a row per variant (a
/// new variant without a row fails it); the pending interrupt keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ApprovalSource {
    /// An agent's own code ([`super::WithApproval::with_approval`]): scripted agents.
    Agent,
    /// A model's call of a backend tool declared with a fixed policy.
    BackendTool,
    /// A model's call of a backend tool whose policy is chosen from its arguments.
    BackendToolByArgs,
    /// A model's call of a remote MCP server's tool that requires approval.
    McpTool,
}

impl ApprovalSource {
    /// Every source.
    pub const ALL: [ApprovalSource; 4] = [
        ApprovalSource::Agent,
        ApprovalSource::BackendTool,
        ApprovalSource::BackendToolByArgs,
        ApprovalSource::McpTool,
    ];
}

impl RaisedInterrupt {
    /// An approval raised by an agent's own code: `interrupt`, answerable only as
    /// `policy` allows.
    pub fn approval(interrupt: Interrupt, policy: ApprovalPolicy) -> Self {
        Self::approval_from(ApprovalSource::Agent, interrupt, policy)
    }
    /// An approval raised by `source` (a library's tool kind names itself).
    pub fn approval_from(
        source: ApprovalSource,
        interrupt: Interrupt,
        policy: ApprovalPolicy,
    ) -> Self {
        Self {
            interrupt,
            approval: Some((policy, source)),
        }
    }
    /// A question that needs no approval: the thread's owner answers it.
    pub fn question(interrupt: Interrupt) -> Self {
        Self {
            interrupt,
            approval: None,
        }
    }
    /// The interrupt as it will be announced (without the policy's echo).
    pub fn interrupt(&self) -> &Interrupt {
        &self.interrupt
    }
    /// The approval policy, when this is an approval.
    pub fn policy(&self) -> Option<&ApprovalPolicy> {
        self.approval.as_ref().map(|(policy, _)| policy)
    }
    /// What raised the approval, when this is one.
    pub fn source(&self) -> Option<ApprovalSource> {
        self.approval.as_ref().map(|(_, source)| *source)
    }
    /// The interrupt with `metadata`'s keys merged into its own (the policy is untouched).
    #[must_use]
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.interrupt = self.interrupt.with_metadata(metadata);
        self
    }
    pub(crate) fn into_parts(self) -> (Interrupt, Option<(ApprovalPolicy, ApprovalSource)>) {
        (self.interrupt, self.approval)
    }
}

impl From<Interrupt> for RaisedInterrupt {
    fn from(interrupt: Interrupt) -> Self {
        Self::question(interrupt)
    }
}
