//! `RunAgentInput`, the body of the POST that starts a run.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{RunId, ThreadId};
use crate::interrupt::ResumeEntry;
use crate::message::{Message, Metadata};

/// The POST body that starts (or resumes) a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunAgentInput {
    /// The conversation.
    pub thread_id: ThreadId,
    /// This run; never reused on the thread.
    pub run_id: RunId,
    /// The consumer's protocol version (`"1.0"`); absent from 0.x clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// The run this one branches from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<RunId>,
    /// Client-held state; absent means `{}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    /// The complete history.
    pub messages: Vec<Message>,
    /// Application (frontend) tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// Context entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Vec<Context>>,
    /// Opaque props intermediaries must not alter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forwarded_props: Option<Value>,
    /// Answers to the thread's pending interrupts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Vec<ResumeEntry>>,
}

impl RunAgentInput {
    /// Minimal input: ids and messages.
    pub fn new(
        thread_id: impl Into<ThreadId>,
        run_id: impl Into<RunId>,
        messages: Vec<Message>,
    ) -> Self {
        RunAgentInput {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            protocol_version: None,
            parent_run_id: None,
            state: None,
            messages,
            tools: None,
            context: None,
            forwarded_props: None,
            resume: None,
        }
    }
    /// Adds resume entries.
    pub fn with_resume(mut self, resume: Vec<ResumeEntry>) -> Self {
        self.resume = Some(resume);
        self
    }
    /// The resume entries, empty when absent.
    pub fn resume_entries(&self) -> &[ResumeEntry] {
        self.resume.as_deref().unwrap_or(&[])
    }
    /// The application tools, empty when absent.
    pub fn tool_list(&self) -> &[Tool] {
        self.tools.as_deref().unwrap_or(&[])
    }
}

/// An application (frontend) tool the agent may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// Tool name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of the arguments (opaque).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A context entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Context {
    /// What the value is.
    pub description: String,
    /// The value.
    pub value: String,
}
