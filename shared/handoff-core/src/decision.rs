//! The answer to an interrupt, as a resumed run sees it.

use agui_protocol::{Interrupt, InterruptId, Metadata, ResumeStatus, ToolCallId};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::approval::ApprovalPolicy;
use crate::error::AgentError;

/// One interrupt this thread raised, with the client's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The interrupt as it was announced.
    pub interrupt: Interrupt,
    /// `resolved` or `cancelled`.
    pub status: ResumeStatus,
    /// The answer (validated against `responseSchema`).
    pub payload: Option<Value>,
    /// Envelope metadata of the resume entry.
    pub metadata: Option<Metadata>,
    /// The arguments the interrupt's tool call proposed, as the server stored them when
    /// the interrupt was raised.
    pub proposed_args: Option<Value>,
    /// The approval policy the interrupt was raised under, as stored.
    pub approval: Option<ApprovalPolicy>,
}

impl Decision {
    /// The interrupt id.
    pub fn id(&self) -> &InterruptId {
        &self.interrupt.id
    }
    /// The tool call the interrupt was about.
    pub fn tool_call_id(&self) -> Option<&ToolCallId> {
        self.interrupt.tool_call_id.as_ref()
    }
    /// The user abandoned the question: the action must not execute.
    pub fn is_cancelled(&self) -> bool {
        self.status == ResumeStatus::Cancelled
    }
    /// Resolved with `{"approved": true, ...}`.
    pub fn approved(&self) -> bool {
        self.status == ResumeStatus::Resolved && self.field("approved") == Some(&Value::Bool(true))
    }
    /// Resolved with `{"approved": false, ...}` (a denial is a resolved answer).
    pub fn denied(&self) -> bool {
        self.status == ResumeStatus::Resolved && self.field("approved") == Some(&Value::Bool(false))
    }
    /// Replacement arguments (`editedArgs` is a full replacement, not a merge).
    pub fn edited_args(&self) -> Option<&Value> {
        self.field("editedArgs").filter(|v| v.is_object())
    }
    /// The arguments to act on: `editedArgs` when the answer edits (the engine held the
    /// edit to the interrupt's approval policy), else the proposed ones.
    pub fn args(&self) -> Option<&Value> {
        self.edited_args().or(self.proposed_args.as_ref())
    }
    /// A member of the payload.
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.payload.as_ref()?.get(name)
    }
    /// The payload as a typed value.
    pub fn payload_as<T: DeserializeOwned>(&self) -> Result<T, AgentError> {
        let payload = self.payload.clone().unwrap_or(Value::Null);
        serde_json::from_value(payload).map_err(AgentError::from)
    }
}
