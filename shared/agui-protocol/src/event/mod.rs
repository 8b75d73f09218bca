//! The 31 AG-UI 1.0 event types as one `#[serde(tag = "type")]` enum.

mod lifecycle;
mod special;
mod state;
mod text;
mod tool;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use lifecycle::*;
pub use special::*;
pub use state::*;
pub use text::*;
pub use tool::*;

use crate::ids::SubagentRunId;
use crate::message::Metadata;

/// Envelope fields every event may carry.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventBase {
    /// Integer milliseconds since the epoch; informational only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u64>,
    /// The upstream event this was derived from (never a whole `null`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_event: Option<Value>,
    /// Metadata; the `"ag-ui"` key is reserved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// One AG-UI event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
#[allow(missing_docs)]
pub enum Event {
    RunStarted(RunStarted),
    RunFinished(RunFinished),
    RunError(RunError),
    StepStarted(StepStarted),
    StepFinished(StepFinished),
    TextMessageStart(TextMessageStart),
    TextMessageContent(TextMessageContent),
    TextMessageEnd(TextMessageEnd),
    TextMessageChunk(TextMessageChunk),
    ToolCallStart(ToolCallStart),
    ToolCallArgs(ToolCallArgs),
    ToolCallEnd(ToolCallEnd),
    ToolCallChunk(ToolCallChunk),
    ToolCallResult(ToolCallResult),
    StateSnapshot(StateSnapshot),
    StateDelta(StateDelta),
    MessagesSnapshot(MessagesSnapshot),
    ActivitySnapshot(ActivitySnapshot),
    ActivityDelta(ActivityDelta),
    ReasoningStart(ReasoningStart),
    ReasoningMessageStart(ReasoningMessageStart),
    ReasoningMessageContent(ReasoningMessageContent),
    ReasoningMessageEnd(ReasoningMessageEnd),
    ReasoningMessageChunk(ReasoningMessageChunk),
    ReasoningEnd(ReasoningEnd),
    ReasoningEncryptedValue(ReasoningEncryptedValue),
    SubagentStarted(SubagentStarted),
    SubagentFinished(SubagentFinished),
    SubagentError(SubagentError),
    Raw(Raw),
    Custom(Custom),
}

macro_rules! event_types {
    ($($variant:ident => $wire:literal),* $(,)?) => {
        /// The `type` discriminator of an event.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum EventType { $($variant),* }

        impl EventType {
            /// Every event type of protocol 1.0, in spec order.
            pub const ALL: [EventType; 31] = [$(EventType::$variant),*];

            /// The wire spelling, e.g. `"RUN_STARTED"`.
            pub fn as_str(self) -> &'static str {
                match self { $(EventType::$variant => $wire),* }
            }

            /// Parses a wire spelling.
            pub fn from_wire(s: &str) -> Option<Self> {
                match s { $($wire => Some(EventType::$variant),)* _ => None }
            }

            /// Where (JSON path) and why `frame` fails as this type. The tagged
            /// [`Event`] enum buffers its content and so loses the path; the
            /// concrete struct keeps it.
            pub(crate) fn locate_error(self, frame: &Value) -> Option<(String, String)> {
                fn at<T: serde::de::DeserializeOwned>(frame: &Value) -> Option<(String, String)> {
                    serde_path_to_error::deserialize::<_, T>(frame.clone())
                        .err()
                        .map(|e| (e.path().to_string(), e.into_inner().to_string()))
                        .filter(|(path, _)| path != ".")
                }
                let found = match self { $(EventType::$variant => at::<$variant>(frame),)* };
                // Envelope fields are flattened, which hides their path too.
                found.or_else(|| at::<EventBase>(frame))
            }
        }

        impl Event {
            /// This event's type.
            pub fn event_type(&self) -> EventType {
                match self { $(Event::$variant(_) => EventType::$variant),* }
            }

            /// The envelope (timestamp, rawEvent, metadata).
            pub fn base(&self) -> &EventBase {
                match self { $(Event::$variant(e) => &e.base),* }
            }

            /// The envelope, mutably.
            pub fn base_mut(&mut self) -> &mut EventBase {
                match self { $(Event::$variant(e) => &mut e.base),* }
            }
        }

        $(impl From<$variant> for Event {
            fn from(e: $variant) -> Self { Event::$variant(e) }
        })*
    };
}

event_types! {
    RunStarted => "RUN_STARTED",
    RunFinished => "RUN_FINISHED",
    RunError => "RUN_ERROR",
    StepStarted => "STEP_STARTED",
    StepFinished => "STEP_FINISHED",
    TextMessageStart => "TEXT_MESSAGE_START",
    TextMessageContent => "TEXT_MESSAGE_CONTENT",
    TextMessageEnd => "TEXT_MESSAGE_END",
    TextMessageChunk => "TEXT_MESSAGE_CHUNK",
    ToolCallStart => "TOOL_CALL_START",
    ToolCallArgs => "TOOL_CALL_ARGS",
    ToolCallEnd => "TOOL_CALL_END",
    ToolCallChunk => "TOOL_CALL_CHUNK",
    ToolCallResult => "TOOL_CALL_RESULT",
    StateSnapshot => "STATE_SNAPSHOT",
    StateDelta => "STATE_DELTA",
    MessagesSnapshot => "MESSAGES_SNAPSHOT",
    ActivitySnapshot => "ACTIVITY_SNAPSHOT",
    ActivityDelta => "ACTIVITY_DELTA",
    ReasoningStart => "REASONING_START",
    ReasoningMessageStart => "REASONING_MESSAGE_START",
    ReasoningMessageContent => "REASONING_MESSAGE_CONTENT",
    ReasoningMessageEnd => "REASONING_MESSAGE_END",
    ReasoningMessageChunk => "REASONING_MESSAGE_CHUNK",
    ReasoningEnd => "REASONING_END",
    ReasoningEncryptedValue => "REASONING_ENCRYPTED_VALUE",
    SubagentStarted => "SUBAGENT_STARTED",
    SubagentFinished => "SUBAGENT_FINISHED",
    SubagentError => "SUBAGENT_ERROR",
    Raw => "RAW",
    Custom => "CUSTOM",
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Event {
    /// The `subagentRunId` attribution (or, on `SUBAGENT_*`, the invocation id).
    pub fn subagent_run_id(&self) -> Option<&SubagentRunId> {
        match self {
            Event::RunStarted(_)
            | Event::RunFinished(_)
            | Event::RunError(_)
            | Event::MessagesSnapshot(_) => None,
            Event::StepStarted(e) => e.subagent_run_id.as_ref(),
            Event::StepFinished(e) => e.subagent_run_id.as_ref(),
            Event::TextMessageStart(e) => e.subagent_run_id.as_ref(),
            Event::TextMessageContent(e) => e.subagent_run_id.as_ref(),
            Event::TextMessageEnd(e) => e.subagent_run_id.as_ref(),
            Event::TextMessageChunk(e) => e.subagent_run_id.as_ref(),
            Event::ToolCallStart(e) => e.subagent_run_id.as_ref(),
            Event::ToolCallArgs(e) => e.subagent_run_id.as_ref(),
            Event::ToolCallEnd(e) => e.subagent_run_id.as_ref(),
            Event::ToolCallChunk(e) => e.subagent_run_id.as_ref(),
            Event::ToolCallResult(e) => e.subagent_run_id.as_ref(),
            Event::StateSnapshot(e) => e.subagent_run_id.as_ref(),
            Event::StateDelta(e) => e.subagent_run_id.as_ref(),
            Event::ActivitySnapshot(e) => e.subagent_run_id.as_ref(),
            Event::ActivityDelta(e) => e.subagent_run_id.as_ref(),
            Event::ReasoningStart(e) => e.subagent_run_id.as_ref(),
            Event::ReasoningMessageStart(e) => e.subagent_run_id.as_ref(),
            Event::ReasoningMessageContent(e) => e.subagent_run_id.as_ref(),
            Event::ReasoningMessageEnd(e) => e.subagent_run_id.as_ref(),
            Event::ReasoningMessageChunk(e) => e.subagent_run_id.as_ref(),
            Event::ReasoningEnd(e) => e.subagent_run_id.as_ref(),
            Event::ReasoningEncryptedValue(e) => e.subagent_run_id.as_ref(),
            Event::SubagentStarted(e) => Some(&e.subagent_run_id),
            Event::SubagentFinished(e) => Some(&e.subagent_run_id),
            Event::SubagentError(e) => Some(&e.subagent_run_id),
            Event::Raw(e) => e.subagent_run_id.as_ref(),
            Event::Custom(e) => e.subagent_run_id.as_ref(),
        }
    }

    /// Sets the timestamp (integer milliseconds).
    pub fn with_timestamp(mut self, millis: u64) -> Self {
        self.base_mut().timestamp = Some(millis);
        self
    }

    /// Serializes to compact JSON (infallible for these types).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }
}
