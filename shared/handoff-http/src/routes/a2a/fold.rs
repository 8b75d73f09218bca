//! From AG-UI events to an A2A task: the mapping the crate docs' "A2A" table shows, in
//! one place.

use std::collections::HashMap;

use a2a_types::{Artifact, Message, Part, Role, TaskState};
use agui_protocol::{Event, Interrupt, RunFinishedOutcome};
use serde_json::{Map, Value, json};

/// The AG-UI `CUSTOM` event whose value is an A2A artifact.
pub(crate) const ARTIFACT_EVENT: &str = "a2a.artifact";
/// The AG-UI `CUSTOM` event whose value is the A2A message to answer with.
pub(crate) const MESSAGE_EVENT: &str = "a2a.message";
/// The `RUN_ERROR` code that rejects a task rather than failing it.
pub(crate) const REJECTED_CODE: &str = "REJECTED";

/// What the runs of a task amount to.
#[derive(Debug, Clone, Default)]
pub(crate) struct Folded {
    /// Where the task stands (`Working` until a terminal event).
    pub state: Option<TaskState>,
    /// The status message (an interrupt's question, an error's text).
    pub status_parts: Vec<Part>,
    /// Outputs, in order of first appearance.
    pub artifacts: Vec<Artifact>,
    /// A direct reply instead of a task.
    pub reply: Option<Message>,
    /// The interrupts the last run ended with.
    pub interrupts: Vec<Interrupt>,
    state_value: Option<Value>,
    texts: HashMap<String, String>,
}

impl Folded {
    /// The task's state.
    pub(crate) fn task_state(&self) -> TaskState {
        self.state.unwrap_or(TaskState::Working)
    }

    /// Takes in one event of one of the task's runs (runs in order).
    pub(crate) fn push(&mut self, event: &Event) -> Option<Artifact> {
        match event {
            Event::RunStarted(_) => {
                self.state = None;
                self.status_parts.clear();
                self.interrupts.clear();
            }
            Event::TextMessageStart(e) => {
                self.texts.insert(e.message_id.to_string(), String::new());
            }
            Event::TextMessageContent(e) => {
                if let Some(text) = self.texts.get_mut(e.message_id.as_str()) {
                    text.push_str(&e.delta);
                }
            }
            Event::TextMessageEnd(e) => {
                let text = self.texts.remove(e.message_id.as_str())?;
                if !text.is_empty() {
                    return Some(
                        self.add(Artifact::new(e.message_id.as_str(), vec![Part::text(text)])),
                    );
                }
            }
            Event::Custom(e) if e.name == ARTIFACT_EVENT => {
                if let Ok(artifact) = serde_json::from_value::<Artifact>(e.value.clone()) {
                    return Some(self.add(artifact));
                }
            }
            Event::Custom(e) if e.name == MESSAGE_EVENT => {
                if let Ok(message) = serde_json::from_value::<Message>(e.value.clone()) {
                    self.reply = Some(message);
                }
            }
            Event::StateSnapshot(e) => self.state_value = Some(e.snapshot.clone()),
            Event::RunFinished(e) => self.finish(e.outcome.as_ref()),
            Event::RunError(e) => {
                let rejected = e.code.as_deref() == Some(REJECTED_CODE);
                self.state = Some(if rejected {
                    TaskState::Rejected
                } else {
                    TaskState::Failed
                });
                self.status_parts = vec![Part::text(e.message.clone())];
                if let Some(code) = &e.code {
                    self.status_parts.push(Part::data(json!({"code": code})));
                }
            }
            _ => {}
        }
        None
    }

    fn finish(&mut self, outcome: Option<&RunFinishedOutcome>) {
        self.state = Some(match outcome {
            Some(RunFinishedOutcome::Interrupt { interrupts }) => {
                self.interrupts = interrupts.clone();
                self.status_parts = interrupts.iter().flat_map(interrupt_parts).collect();
                TaskState::InputRequired
            }
            Some(RunFinishedOutcome::Cancelled) => TaskState::Canceled,
            _ => TaskState::Completed,
        });
    }

    /// Adds or replaces (same id) an artifact; returns it.
    fn add(&mut self, artifact: Artifact) -> Artifact {
        match self
            .artifacts
            .iter_mut()
            .find(|a| a.artifact_id == artifact.artifact_id)
        {
            Some(slot) => *slot = artifact.clone(),
            None => self.artifacts.push(artifact.clone()),
        }
        artifact
    }

    /// The artifacts with the final state as one more, when there is one to show.
    pub(crate) fn all_artifacts(&self) -> Vec<Artifact> {
        let mut artifacts = self.artifacts.clone();
        if let Some(artifact) = self.state_value.as_ref().and_then(state_artifact) {
            artifacts.push(artifact);
        }
        artifacts
    }
}

/// The `state` artifact: the shared state as one data part (none when empty).
pub(crate) fn state_artifact(state: &Value) -> Option<Artifact> {
    let empty = match state {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        _ => false,
    };
    (!empty).then(|| {
        let mut artifact = Artifact::new("state", vec![Part::data(state.clone())]);
        artifact.name = Some("state".to_owned());
        artifact
    })
}

/// An interrupt as status-message parts: its question as text, itself as data.
pub(crate) fn interrupt_parts(interrupt: &Interrupt) -> Vec<Part> {
    let mut data = Map::new();
    data.insert("interruptId".into(), json!(interrupt.id.as_str()));
    data.insert("reason".into(), json!(interrupt.reason));
    if let Some(message) = &interrupt.message {
        data.insert("message".into(), json!(message));
    }
    if let Some(id) = &interrupt.tool_call_id {
        data.insert("toolCallId".into(), json!(id.as_str()));
    }
    if let Some(schema) = &interrupt.response_schema {
        data.insert("responseSchema".into(), (**schema).clone());
    }
    if let Some(expires) = &interrupt.expires_at {
        data.insert("expiresAt".into(), json!(expires));
    }
    let text = interrupt
        .message
        .clone()
        .unwrap_or_else(|| interrupt.reason.clone());
    vec![Part::text(text), Part::data(Value::Object(data))]
}

/// An agent message with `parts` on the task.
pub(crate) fn agent_message(
    id: String,
    task_id: &str,
    context_id: &str,
    parts: Vec<Part>,
) -> Message {
    let mut message = Message::new(id, Role::Agent, parts);
    message.task_id = Some(task_id.to_owned());
    message.context_id = Some(context_id.to_owned());
    message
}
