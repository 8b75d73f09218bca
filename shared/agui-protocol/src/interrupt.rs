//! Run outcomes, interrupts, token usage and resume entries.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{InterruptId, SubagentRunId, ToolCallId};
use crate::message::Metadata;

/// How a run ended (`RUN_FINISHED.outcome`). Absent on the wire means success;
/// Handoff always sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[non_exhaustive]
pub enum RunFinishedOutcome {
    /// The run completed. Frontend-tool calls left unanswered are listed.
    #[serde(rename_all = "camelCase")]
    Success {
        /// Calls to application tools that the client must answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pending_tool_call_ids: Option<Vec<ToolCallId>>,
    },
    /// The run stopped to ask; at least one interrupt.
    Interrupt {
        /// The questions, ids unique within the run.
        interrupts: Vec<Interrupt>,
    },
    /// The run was stopped on purpose (user, application or a producer deadline).
    Cancelled,
}

impl RunFinishedOutcome {
    /// Plain success.
    pub fn success() -> Self {
        RunFinishedOutcome::Success {
            pending_tool_call_ids: None,
        }
    }
}

/// A question that ends a run and is answered by a later run's `resume`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interrupt {
    /// Unique within the run.
    pub id: InterruptId,
    /// `tool_call`, `input_required`, `confirmation` or a namespaced `<framework>:<name>`.
    pub reason: String,
    /// Human-readable prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The call this interrupt is about (set when `reason` is `tool_call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<ToolCallId>,
    /// JSON Schema (an object) the resume payload must satisfy. Shared, not copied: an
    /// interrupt is cloned into its pending record, its answer's decision and its
    /// `RUN_FINISHED`, and the schema is most of its bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Arc<Value>>,
    /// ISO 8601 UTC instant after which only `cancelled` is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Set when raised inside a subagent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
}

impl Interrupt {
    /// An interrupt with an id and a reason; fill the rest with the `with_*` helpers.
    pub fn new(id: impl Into<InterruptId>, reason: impl Into<String>) -> Self {
        Interrupt {
            id: id.into(),
            reason: reason.into(),
            message: None,
            tool_call_id: None,
            response_schema: None,
            expires_at: None,
            metadata: None,
            subagent_run_id: None,
        }
    }
    /// Sets the human-readable prompt.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
    /// Binds the interrupt to a tool call.
    pub fn with_tool_call(mut self, id: impl Into<ToolCallId>) -> Self {
        self.tool_call_id = Some(id.into());
        self
    }
    /// Sets the JSON Schema for the answer.
    pub fn with_response_schema(mut self, schema: Value) -> Self {
        self.response_schema = Some(Arc::new(schema));
        self
    }
    /// Sets the expiry (ISO 8601).
    pub fn with_expires_at(mut self, at: impl Into<String>) -> Self {
        self.expires_at = Some(at.into());
        self
    }
    /// Merges `metadata`'s keys into the interrupt's (a key given again is replaced;
    /// other keys stay). Merging, not replacing, so a later builder call cannot drop
    /// what an earlier one (or a library) set.
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        match &mut self.metadata {
            Some(own) => own.extend(metadata),
            None => self.metadata = Some(metadata),
        }
        self
    }
    /// Attributes the interrupt to a subagent invocation.
    pub fn with_subagent(mut self, id: impl Into<SubagentRunId>) -> Self {
        self.subagent_run_id = Some(id.into());
        self
    }
}

/// The answer to one interrupt (`RunAgentInput.resume[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeEntry {
    /// The interrupt answered.
    pub interrupt_id: InterruptId,
    /// `resolved` (payload is the answer, denials included) or `cancelled` (not executed).
    pub status: ResumeStatus,
    /// The answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    /// Envelope data (signatures, routing keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl ResumeEntry {
    /// A resolved entry with a payload.
    pub fn resolved(id: impl Into<InterruptId>, payload: Value) -> Self {
        ResumeEntry {
            interrupt_id: id.into(),
            status: ResumeStatus::Resolved,
            payload: Some(payload),
            metadata: None,
        }
    }
    /// A cancelled entry.
    pub fn cancelled(id: impl Into<InterruptId>) -> Self {
        ResumeEntry {
            interrupt_id: id.into(),
            status: ResumeStatus::Cancelled,
            payload: None,
            metadata: None,
        }
    }
}

/// Status of a resume entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResumeStatus {
    /// Answered; the payload carries the decision.
    Resolved,
    /// Abandoned; the interrupted action must not execute.
    Cancelled,
}

/// Token accounting for a run. Absent counts mean "not reported".
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Provider label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Model label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Total input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Total output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Input plus output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    /// Part of the output spent reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Part of the input read from cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// Part of the input written to cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_input_tokens: Option<u64>,
}

impl TokenUsage {
    /// Adds `more`'s counts to these, each summed where either reports it (a count
    /// neither reports stays absent, never 0); the labels are kept. One home for the sum,
    /// so a model call's frames and a run's calls add up alike.
    pub fn add(&mut self, more: &TokenUsage) {
        let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
        };
        self.input_tokens = sum(self.input_tokens, more.input_tokens);
        self.output_tokens = sum(self.output_tokens, more.output_tokens);
        self.total_tokens = sum(self.total_tokens, more.total_tokens);
        self.reasoning_tokens = sum(self.reasoning_tokens, more.reasoning_tokens);
        self.cached_input_tokens = sum(self.cached_input_tokens, more.cached_input_tokens);
        self.cache_write_input_tokens =
            sum(self.cache_write_input_tokens, more.cache_write_input_tokens);
    }
}

/// How a subagent invocation ended (`SUBAGENT_FINISHED.outcome`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[non_exhaustive]
pub enum SubagentOutcome {
    /// Completed.
    Success,
    /// Waiting on interrupts it raised (ids) or a descendant raised (no ids).
    #[serde(rename_all = "camelCase")]
    Suspended {
        /// Interrupts this invocation itself raised.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interrupt_ids: Option<Vec<InterruptId>>,
    },
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::{Interrupt, TokenUsage};

    #[test]
    fn a_cloned_interrupt_shares_its_schema_and_writes_the_same_json() {
        let schema = json!({"type": "object", "properties": {"approved": {"type": "boolean"}}});
        let asked = Interrupt::new("i1", "tool_call").with_response_schema(schema.clone());
        let pending = asked.clone();
        let (first, second) = (
            asked.response_schema.as_ref().expect("schema"),
            pending.response_schema.as_ref().expect("schema"),
        );
        assert!(Arc::ptr_eq(first, second));
        // On the wire the schema is the plain object, and it reads back equal.
        let wire = serde_json::to_value(&asked).expect("serializes");
        assert_eq!(wire["responseSchema"], schema);
        let read: Interrupt = serde_json::from_value(wire).expect("deserializes");
        assert_eq!(read, asked);
    }

    #[test]
    fn usage_adds_where_reported_and_keeps_absent_counts_absent() {
        let mut total = TokenUsage {
            provider: Some("openai".into()),
            input_tokens: Some(10),
            reasoning_tokens: Some(2),
            ..TokenUsage::default()
        };
        total.add(&TokenUsage {
            model: Some("other".into()),
            input_tokens: Some(5),
            output_tokens: Some(7),
            ..TokenUsage::default()
        });
        let expected = TokenUsage {
            provider: Some("openai".into()),
            input_tokens: Some(15),
            output_tokens: Some(7),
            reasoning_tokens: Some(2),
            ..TokenUsage::default()
        };
        assert_eq!(
            total, expected,
            "labels kept, never-reported counts stay None"
        );
        total.add(&TokenUsage {
            output_tokens: Some(u64::MAX),
            ..TokenUsage::default()
        });
        assert_eq!(total.output_tokens, Some(u64::MAX), "saturates");
    }
}
