#![doc = include_str!("../README.md")]

pub mod a2ui;
#[cfg(feature = "bench-corpus")]
#[doc(hidden)]
pub mod bench_corpus;
pub mod chunks;
mod error;
pub mod event;
pub mod ids;
pub mod input;
pub mod interrupt;
pub mod lenient;
pub mod message;
pub mod patch;
pub mod proto;
pub mod span;
pub mod sse;
pub mod verify;

pub use error::ProtocolError;
pub use event::{Event, EventBase, EventType};
pub use ids::{InterruptId, MessageId, RunId, SubagentRunId, ThreadId, ToolCallId};
pub use input::{Context, RunAgentInput, Tool};
pub use interrupt::{
    Interrupt, ResumeEntry, ResumeStatus, RunFinishedOutcome, SubagentOutcome, TokenUsage,
};
pub use message::{Content, ContentPart, Message, Metadata, ToolCall};
pub use patch::PatchOp;

/// The protocol version Handoff speaks and declares on `RUN_STARTED`.
pub const PROTOCOL_VERSION: &str = "1.0";
