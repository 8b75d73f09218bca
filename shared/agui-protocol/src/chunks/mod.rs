//! Chunk expansion: `TEXT_MESSAGE_CHUNK`, `TOOL_CALL_CHUNK` and
//! `REASONING_MESSAGE_CHUNK` turned into the START/CONTENT/END triads, the way
//! the official client expands them before it verifies a stream.
//!
//! Each lane (keyed by `subagentRunId`, absent = the parent agent) holds at most
//! one pending chunk-assembled item. A chunk continues its lane's item when it
//! repeats the id or carries none; otherwise the pending item is closed (its
//! `*_END` is synthesized) and a new one opens, which needs an id (and, for a
//! tool call, a name). Explicit events of the same lane close the pending item
//! first; `RUN_*` and `MESSAGES_SNAPSHOT` close every lane and
//! `SUBAGENT_FINISHED` / `SUBAGENT_ERROR` close their subagent's lane.
//!
//! ```
//! use agui_protocol::chunks::expand;
//! use agui_protocol::event::{RunFinished, RunStarted, TextMessageChunk};
//! use agui_protocol::EventType;
//!
//! let mut chunk = TextMessageChunk::new();
//! chunk.message_id = Some("m1".into());
//! chunk.delta = Some("Hello".into());
//! let out = expand([
//!     RunStarted::new("t", "r").into(),
//!     chunk.into(),
//!     RunFinished::new("t", "r").into(),
//! ])
//! .unwrap();
//! let types: Vec<_> = out.iter().map(|e| e.event_type()).collect();
//! assert_eq!(types, [
//!     EventType::RunStarted,
//!     EventType::TextMessageStart,
//!     EventType::TextMessageContent,
//!     EventType::TextMessageEnd,
//!     EventType::RunFinished,
//! ]);
//! ```

mod assemble;
mod lanes;
mod pending;
#[cfg(test)]
mod tests;

use crate::Event;
use crate::ids::SubagentRunId;
use crate::verify::Violation;

use pending::Pending;

/// A lane key: the subagent invocation, or `None` for the parent agent.
type Lane = Option<SubagentRunId>;

/// Expands `*_CHUNK` events into START/CONTENT/END triads (official semantics).
///
/// Errors are [`Violation`]s with rule `CHUNK-ID` (a first chunk without its id
/// or tool name), `CHUNK-CONFLICT` (a continuation repeating `role`, `name`,
/// `toolCallName` or `parentMessageId` with another value) or `CHUNK-AMBIGUOUS`
/// (an id-less, untagged chunk while several subagent lanes hold an item of
/// that kind). Their `index` counts the events pushed so far (0-based). After
/// an error the expander keeps returning it.
#[derive(Debug, Clone, Default)]
pub struct ChunkExpander {
    /// Open items in the order they were opened.
    lanes: Vec<(Lane, Pending)>,
    pushed: usize,
    failed: Option<Violation>,
}

impl ChunkExpander {
    /// An expander with no pending items.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one event; returns the events to pass on, in order.
    pub fn push(&mut self, event: Event) -> Result<Vec<Event>, Violation> {
        if let Some(v) = &self.failed {
            return Err(v.clone());
        }
        let index = self.pushed;
        self.pushed += 1;
        let mut out = Vec::new();
        let result = match event {
            Event::TextMessageChunk(c) => self.text_chunk(c, index, &mut out),
            Event::ToolCallChunk(c) => self.tool_chunk(c, index, &mut out),
            Event::ReasoningMessageChunk(c) => self.reasoning_chunk(c, index, &mut out),
            other => {
                self.close_for(&other, &mut out);
                out.push(other);
                Ok(())
            }
        };
        match result {
            Ok(()) => Ok(out),
            Err(v) => {
                self.failed = Some(v.clone());
                Err(v)
            }
        }
    }

    /// Closes every pending item (end of stream); returns the synthesized ENDs.
    ///
    /// The official client does not do this for a truncated stream; closing is
    /// harmless for verification and gives complete triads to other consumers.
    pub fn finish(&mut self) -> Vec<Event> {
        if self.failed.is_some() {
            return Vec::new();
        }
        let mut out = Vec::new();
        self.close_all(&mut out);
        out
    }

    /// Whether any lane holds a chunk-assembled item.
    pub fn has_pending(&self) -> bool {
        !self.lanes.is_empty()
    }
}

/// Expands a whole stream, closing whatever is pending at its end.
pub fn expand(events: impl IntoIterator<Item = Event>) -> Result<Vec<Event>, Violation> {
    let mut expander = ChunkExpander::new();
    let mut out = Vec::new();
    for event in events {
        out.extend(expander.push(event)?);
    }
    out.extend(expander.finish());
    Ok(out)
}
