//! Lifecycle events.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::EventBase;
use crate::ids::{RunId, SubagentRunId, ThreadId};
use crate::input::RunAgentInput;
use crate::interrupt::{RunFinishedOutcome, TokenUsage};

/// `RUN_STARTED`: A run began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStarted {
    /// The thread.
    pub thread_id: ThreadId,
    /// This run.
    pub run_id: RunId,
    /// The producer's protocol version (`"1.0"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// The run this one branches from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<RunId>,
    /// Echo of the input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Box<RunAgentInput>>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl RunStarted {
    /// Builds the event from its required fields.
    pub fn new(thread_id: impl Into<ThreadId>, run_id: impl Into<RunId>) -> Self {
        RunStarted {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            protocol_version: None,
            parent_run_id: None,
            input: None,
            base: EventBase::default(),
        }
    }
}

/// `RUN_FINISHED`: A run ended; the outcome says how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunFinished {
    /// The thread.
    pub thread_id: ThreadId,
    /// The run.
    pub run_id: RunId,
    /// Result value (success only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// How it ended; absent means success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<RunFinishedOutcome>,
    /// Token usage of this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Vec<TokenUsage>>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl RunFinished {
    /// Builds the event from its required fields.
    pub fn new(thread_id: impl Into<ThreadId>, run_id: impl Into<RunId>) -> Self {
        RunFinished {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            result: None,
            outcome: None,
            usage: None,
            base: EventBase::default(),
        }
    }
}

/// `RUN_ERROR`: A run failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunError {
    /// Human-readable, redacted message.
    pub message: String,
    /// Stable machine-readable code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Token usage so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Vec<TokenUsage>>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl RunError {
    /// Builds the event from its required fields.
    pub fn new(message: impl Into<String>) -> Self {
        RunError {
            message: message.into(),
            code: None,
            usage: None,
            base: EventBase::default(),
        }
    }
}

/// `STEP_STARTED`: A named step began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepStarted {
    /// Step name.
    pub step_name: String,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl StepStarted {
    /// Builds the event from its required fields.
    pub fn new(step_name: impl Into<String>) -> Self {
        StepStarted {
            step_name: step_name.into(),
            subagent_run_id: None,
            base: EventBase::default(),
        }
    }
    /// Attributes the event to a subagent invocation.
    pub fn in_subagent(mut self, id: impl Into<SubagentRunId>) -> Self {
        self.subagent_run_id = Some(id.into());
        self
    }
}

/// `STEP_FINISHED`: A named step ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepFinished {
    /// Step name.
    pub step_name: String,
    /// Attribution to a subagent invocation; absent means the parent agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<SubagentRunId>,
    /// Envelope: timestamp, rawEvent, metadata.
    #[serde(flatten)]
    pub base: EventBase,
}

impl StepFinished {
    /// Builds the event from its required fields.
    pub fn new(step_name: impl Into<String>) -> Self {
        StepFinished {
            step_name: step_name.into(),
            subagent_run_id: None,
            base: EventBase::default(),
        }
    }
    /// Attributes the event to a subagent invocation.
    pub fn in_subagent(mut self, id: impl Into<SubagentRunId>) -> Self {
        self.subagent_run_id = Some(id.into());
        self
    }
}
