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

use crate::Event;
use crate::event::{
    EventBase, ReasoningMessageChunk, ReasoningMessageContent, ReasoningMessageEnd,
    ReasoningMessageStart, TextMessageChunk, TextMessageContent, TextMessageEnd, TextMessageStart,
    TextRole, ToolCallArgs, ToolCallChunk, ToolCallEnd, ToolCallStart,
};
use crate::ids::{MessageId, SubagentRunId, ToolCallId};
use crate::verify::Violation;

/// A lane key: the subagent invocation, or `None` for the parent agent.
type Lane = Option<SubagentRunId>;

/// The chunk-assembled item a lane holds open.
#[derive(Debug, Clone, PartialEq)]
enum Pending {
    Text {
        id: MessageId,
        role: TextRole,
        name: Option<String>,
    },
    Tool {
        id: ToolCallId,
        name: String,
        parent: Option<MessageId>,
    },
    Reasoning {
        id: MessageId,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Tool,
    Reasoning,
}

impl Kind {
    fn chunk_type(self) -> &'static str {
        match self {
            Kind::Text => "TEXT_MESSAGE_CHUNK",
            Kind::Tool => "TOOL_CALL_CHUNK",
            Kind::Reasoning => "REASONING_MESSAGE_CHUNK",
        }
    }

    fn item(self) -> &'static str {
        match self {
            Kind::Text => "text message",
            Kind::Tool => "tool call",
            Kind::Reasoning => "reasoning message",
        }
    }

    fn id_field(self) -> &'static str {
        match self {
            Kind::Tool => "toolCallId",
            Kind::Text | Kind::Reasoning => "messageId",
        }
    }
}

impl Pending {
    fn kind(&self) -> Kind {
        match self {
            Pending::Text { .. } => Kind::Text,
            Pending::Tool { .. } => Kind::Tool,
            Pending::Reasoning { .. } => Kind::Reasoning,
        }
    }

    fn id(&self) -> &str {
        match self {
            Pending::Text { id, .. } | Pending::Reasoning { id } => id.as_str(),
            Pending::Tool { id, .. } => id.as_str(),
        }
    }

    /// The synthesized `*_END` closing this item.
    fn end(&self, lane: &Lane) -> Event {
        let sub = lane.clone();
        match self {
            Pending::Text { id, .. } => TextMessageEnd {
                message_id: id.clone(),
                subagent_run_id: sub,
                base: EventBase::default(),
            }
            .into(),
            Pending::Tool { id, .. } => ToolCallEnd {
                tool_call_id: id.clone(),
                subagent_run_id: sub,
                base: EventBase::default(),
            }
            .into(),
            Pending::Reasoning { id } => ReasoningMessageEnd {
                message_id: id.clone(),
                subagent_run_id: sub,
                base: EventBase::default(),
            }
            .into(),
        }
    }
}

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

    fn close_for(&mut self, event: &Event, out: &mut Vec<Event>) {
        match event {
            Event::RunStarted(_)
            | Event::RunFinished(_)
            | Event::RunError(_)
            | Event::MessagesSnapshot(_) => {
                self.close_all(out);
            }
            Event::SubagentFinished(e) => self.close_lane(&Some(e.subagent_run_id.clone()), out),
            Event::SubagentError(e) => self.close_lane(&Some(e.subagent_run_id.clone()), out),
            Event::Raw(_)
            | Event::ActivitySnapshot(_)
            | Event::ActivityDelta(_)
            | Event::ReasoningEncryptedValue(_)
            | Event::SubagentStarted(_) => {}
            Event::StepStarted(_)
            | Event::StepFinished(_)
            | Event::TextMessageStart(_)
            | Event::TextMessageContent(_)
            | Event::TextMessageEnd(_)
            | Event::ToolCallStart(_)
            | Event::ToolCallArgs(_)
            | Event::ToolCallEnd(_)
            | Event::ToolCallResult(_)
            | Event::StateSnapshot(_)
            | Event::StateDelta(_)
            | Event::ReasoningStart(_)
            | Event::ReasoningMessageStart(_)
            | Event::ReasoningMessageContent(_)
            | Event::ReasoningMessageEnd(_)
            | Event::ReasoningEnd(_)
            | Event::Custom(_) => self.close_lane(&event.subagent_run_id().cloned(), out),
            // Chunks never reach here.
            Event::TextMessageChunk(_)
            | Event::ToolCallChunk(_)
            | Event::ReasoningMessageChunk(_) => {}
        }
    }

    fn close_all(&mut self, out: &mut Vec<Event>) {
        for (lane, pending) in self.lanes.drain(..) {
            out.push(pending.end(&lane));
        }
    }

    fn close_lane(&mut self, lane: &Lane, out: &mut Vec<Event>) {
        if let Some(pos) = self.lanes.iter().position(|(l, _)| l == lane) {
            let (lane, pending) = self.lanes.remove(pos);
            out.push(pending.end(&lane));
        }
    }

    fn pending(&self, lane: &Lane) -> Option<&Pending> {
        self.lanes.iter().find(|(l, _)| l == lane).map(|(_, p)| p)
    }

    /// Picks the lane a chunk belongs to. A tagged chunk goes to its lane. An
    /// untagged one goes to the parent lane when that lane holds an item of
    /// the kind (with the same id, if it carries one); otherwise to the sole
    /// other lane holding such an item; otherwise to the parent lane.
    fn lane_for(
        &self,
        kind: Kind,
        tag: Option<&SubagentRunId>,
        id: Option<&str>,
        index: usize,
    ) -> Result<Lane, Violation> {
        if let Some(tag) = tag {
            return Ok(Some(tag.clone()));
        }
        let matches = |p: &Pending| p.kind() == kind && id.is_none_or(|id| p.id() == id);
        if self.pending(&None).is_some_and(matches) {
            return Ok(None);
        }
        let candidates: Vec<&Lane> = self
            .lanes
            .iter()
            .filter(|(l, p)| l.is_some() && matches(p))
            .map(|(l, _)| l)
            .collect();
        match candidates.as_slice() {
            [] => Ok(None),
            [one] => Ok((*one).clone()),
            many => Err(Violation::new(
                "CHUNK-AMBIGUOUS",
                Some(index),
                format!(
                    "Ambiguous {}: it carries neither a {} nor a subagentRunId, but {} lanes have an open {}. \
                     Attribute the chunk to the subagent it belongs to.",
                    kind.chunk_type(),
                    kind.id_field(),
                    many.len(),
                    kind.item()
                ),
            )),
        }
    }

    /// Whether the lane's pending item is continued by a chunk of `kind` with `id`.
    fn continues(&self, lane: &Lane, kind: Kind, id: Option<&str>) -> bool {
        self.pending(lane)
            .is_some_and(|p| p.kind() == kind && id.is_none_or(|id| p.id() == id))
    }

    fn open(&mut self, lane: Lane, pending: Pending, out: &mut Vec<Event>) {
        self.close_lane(&lane, out);
        self.lanes.push((lane, pending));
    }

    fn text_chunk(
        &mut self,
        c: TextMessageChunk,
        index: usize,
        out: &mut Vec<Event>,
    ) -> Result<(), Violation> {
        let lane = self.lane_for(
            Kind::Text,
            c.subagent_run_id.as_ref(),
            c.message_id.as_deref(),
            index,
        )?;
        let id = if self.continues(&lane, Kind::Text, c.message_id.as_deref()) {
            let Some(Pending::Text { id, role, name }) = self.pending(&lane) else {
                return Ok(());
            };
            if let Some(r) = c.role.filter(|r| r != role) {
                return Err(conflict(
                    index,
                    "text message",
                    id,
                    "role",
                    role_str(r),
                    Some(role_str(*role)),
                ));
            }
            if let Some(n) = c.name.as_deref().filter(|n| name.as_deref() != Some(*n)) {
                return Err(conflict(
                    index,
                    "text message",
                    id,
                    "name",
                    n,
                    name.as_deref(),
                ));
            }
            let id = id.clone();
            if c.delta.is_none() && c.base.raw_event.is_none() && c.base.metadata.is_none() {
                return Ok(());
            }
            id
        } else {
            let Some(id) = c.message_id.clone() else {
                return Err(first_missing(index, Kind::Text, "messageId"));
            };
            let role = c.role.unwrap_or(TextRole::Assistant);
            self.open(
                lane.clone(),
                Pending::Text {
                    id: id.clone(),
                    role,
                    name: c.name.clone(),
                },
                out,
            );
            out.push(
                TextMessageStart {
                    message_id: id.clone(),
                    role: Some(role),
                    name: c.name.clone(),
                    subagent_run_id: lane.clone(),
                    base: EventBase {
                        metadata: c.base.metadata.clone(),
                        ..EventBase::default()
                    },
                }
                .into(),
            );
            if c.delta.is_none() && c.base.raw_event.is_none() {
                return Ok(());
            }
            id
        };
        out.push(
            TextMessageContent {
                message_id: id,
                delta: c.delta.unwrap_or_default(),
                subagent_run_id: lane,
                base: content_base(c.base),
            }
            .into(),
        );
        Ok(())
    }

    fn tool_chunk(
        &mut self,
        c: ToolCallChunk,
        index: usize,
        out: &mut Vec<Event>,
    ) -> Result<(), Violation> {
        let lane = self.lane_for(
            Kind::Tool,
            c.subagent_run_id.as_ref(),
            c.tool_call_id.as_deref(),
            index,
        )?;
        let id = if self.continues(&lane, Kind::Tool, c.tool_call_id.as_deref()) {
            let Some(Pending::Tool { id, name, parent }) = self.pending(&lane) else {
                return Ok(());
            };
            if let Some(n) = c.tool_call_name.as_deref().filter(|n| n != name) {
                return Err(conflict(
                    index,
                    "tool call",
                    id,
                    "toolCallName",
                    n,
                    Some(name),
                ));
            }
            if let Some(p) = c
                .parent_message_id
                .as_ref()
                .filter(|p| parent.as_ref() != Some(*p))
            {
                return Err(conflict(
                    index,
                    "tool call",
                    id,
                    "parentMessageId",
                    p,
                    parent.as_deref(),
                ));
            }
            let id = id.clone();
            if c.delta.is_none() && c.base.raw_event.is_none() && c.base.metadata.is_none() {
                return Ok(());
            }
            id
        } else {
            let Some(id) = c.tool_call_id.clone() else {
                return Err(first_missing(index, Kind::Tool, "toolCallId"));
            };
            let Some(name) = c.tool_call_name.clone() else {
                return Err(first_missing(index, Kind::Tool, "toolCallName"));
            };
            let parent = c.parent_message_id.clone();
            self.open(
                lane.clone(),
                Pending::Tool {
                    id: id.clone(),
                    name: name.clone(),
                    parent: parent.clone(),
                },
                out,
            );
            out.push(
                ToolCallStart {
                    tool_call_id: id.clone(),
                    tool_call_name: name,
                    parent_message_id: parent,
                    subagent_run_id: lane.clone(),
                    base: EventBase {
                        metadata: c.base.metadata.clone(),
                        ..EventBase::default()
                    },
                }
                .into(),
            );
            if c.delta.is_none() && c.base.raw_event.is_none() {
                return Ok(());
            }
            id
        };
        out.push(
            ToolCallArgs {
                tool_call_id: id,
                delta: c.delta.unwrap_or_default(),
                subagent_run_id: lane,
                base: content_base(c.base),
            }
            .into(),
        );
        Ok(())
    }

    fn reasoning_chunk(
        &mut self,
        c: ReasoningMessageChunk,
        index: usize,
        out: &mut Vec<Event>,
    ) -> Result<(), Violation> {
        let lane = self.lane_for(
            Kind::Reasoning,
            c.subagent_run_id.as_ref(),
            c.message_id.as_deref(),
            index,
        )?;
        let id = if self.continues(&lane, Kind::Reasoning, c.message_id.as_deref()) {
            let Some(Pending::Reasoning { id }) = self.pending(&lane) else {
                return Ok(());
            };
            let id = id.clone();
            if c.delta.is_none() && c.base.raw_event.is_none() && c.base.metadata.is_none() {
                return Ok(());
            }
            id
        } else {
            let Some(id) = c.message_id.clone() else {
                return Err(first_missing(index, Kind::Reasoning, "messageId"));
            };
            self.open(lane.clone(), Pending::Reasoning { id: id.clone() }, out);
            let mut start = ReasoningMessageStart::new(id.clone());
            start.subagent_run_id = lane.clone();
            start.base.metadata = c.base.metadata.clone();
            out.push(start.into());
            if c.delta.is_none() && c.base.raw_event.is_none() {
                return Ok(());
            }
            id
        };
        out.push(
            ReasoningMessageContent {
                message_id: id,
                delta: c.delta.unwrap_or_default(),
                subagent_run_id: lane,
                base: content_base(c.base),
            }
            .into(),
        );
        Ok(())
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

/// Chunk metadata and rawEvent go onto the content event; the timestamp does not.
fn content_base(base: EventBase) -> EventBase {
    EventBase {
        timestamp: None,
        raw_event: base.raw_event,
        metadata: base.metadata,
    }
}

fn role_str(role: TextRole) -> &'static str {
    match role {
        TextRole::Developer => "developer",
        TextRole::System => "system",
        TextRole::Assistant => "assistant",
        TextRole::User => "user",
    }
}

fn first_missing(index: usize, kind: Kind, field: &str) -> Violation {
    Violation::new(
        "CHUNK-ID",
        Some(index),
        format!("First {} must have a {field}", kind.chunk_type()),
    )
}

fn conflict(
    index: usize,
    item: &str,
    id: &str,
    field: &str,
    got: &str,
    open: Option<&str>,
) -> Violation {
    let open = open.map_or_else(|| String::from("(absent)"), |v| format!("'{v}'"));
    Violation::new(
        "CHUNK-CONFLICT",
        Some(index),
        format!(
            "Cannot continue {item} '{id}': chunk {field} '{got}' does not match the open stream's {field} {open}."
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{
        Custom, Raw, RunError, RunFinished, RunStarted, StateSnapshot, SubagentFinished,
        TextMessageEnd,
    };
    use crate::message::Metadata;
    use serde_json::json;

    fn text(id: Option<&str>, delta: Option<&str>) -> TextMessageChunk {
        let mut c = TextMessageChunk::new();
        c.message_id = id.map(MessageId::from);
        c.delta = delta.map(String::from);
        c
    }

    fn tool(id: Option<&str>, name: Option<&str>, delta: Option<&str>) -> ToolCallChunk {
        let mut c = ToolCallChunk::new();
        c.tool_call_id = id.map(ToolCallId::from);
        c.tool_call_name = name.map(String::from);
        c.delta = delta.map(String::from);
        c
    }

    fn reasoning(id: Option<&str>, delta: Option<&str>) -> ReasoningMessageChunk {
        let mut c = ReasoningMessageChunk::new();
        c.message_id = id.map(MessageId::from);
        c.delta = delta.map(String::from);
        c
    }

    /// `TYPE:id[@sub]` per event, for compact assertions.
    fn shape(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| {
                let v = serde_json::to_value(e).unwrap_or_default();
                let id = ["messageId", "toolCallId", "runId"]
                    .iter()
                    .find_map(|k| v.get(*k).and_then(|x| x.as_str()))
                    .unwrap_or("");
                let sub = e
                    .subagent_run_id()
                    .map(|s| format!("@{s}"))
                    .unwrap_or_default();
                format!("{}:{id}{sub}", e.event_type())
            })
            .collect()
    }

    #[test]
    fn text_chunks_expand_and_close_before_run_finished() {
        let out = expand([
            RunStarted::new("t", "r").into(),
            text(Some("m"), Some("He")).into(),
            text(None, Some("llo")).into(),
            text(Some("m"), None).into(),
            RunFinished::new("t", "r").into(),
        ])
        .unwrap();
        assert_eq!(
            shape(&out),
            [
                "RUN_STARTED:r",
                "TEXT_MESSAGE_START:m",
                "TEXT_MESSAGE_CONTENT:m",
                "TEXT_MESSAGE_CONTENT:m",
                "TEXT_MESSAGE_END:m",
                "RUN_FINISHED:r"
            ]
        );
        let Event::TextMessageStart(start) = &out[1] else {
            panic!("not a start")
        };
        assert_eq!(start.role, Some(TextRole::Assistant));
    }

    #[test]
    fn tool_and_reasoning_chunks_expand() {
        let out = expand([
            tool(Some("c"), Some("f"), Some("{")).into(),
            tool(None, Some("f"), Some("}")).into(),
            reasoning(Some("r1"), Some("hmm")).into(),
            Custom::new("x:y", json!(1)).into(),
        ])
        .unwrap();
        assert_eq!(
            shape(&out),
            [
                "TOOL_CALL_START:c",
                "TOOL_CALL_ARGS:c",
                "TOOL_CALL_ARGS:c",
                "TOOL_CALL_END:c",
                "REASONING_MESSAGE_START:r1",
                "REASONING_MESSAGE_CONTENT:r1",
                "REASONING_MESSAGE_END:r1",
                "CUSTOM:"
            ]
        );
    }

    #[test]
    fn new_id_closes_the_pending_item() {
        let out = expand([
            text(Some("a"), Some("1")).into(),
            text(Some("b"), Some("2")).into(),
        ])
        .unwrap();
        assert_eq!(
            shape(&out),
            [
                "TEXT_MESSAGE_START:a",
                "TEXT_MESSAGE_CONTENT:a",
                "TEXT_MESSAGE_END:a",
                "TEXT_MESSAGE_START:b",
                "TEXT_MESSAGE_CONTENT:b",
                "TEXT_MESSAGE_END:b"
            ]
        );
    }

    #[test]
    fn lanes_are_per_subagent() {
        let mut x = ChunkExpander::new();
        let mut out = Vec::new();
        out.extend(
            x.push(text(Some("s1"), Some("a")).in_subagent("sub").into())
                .unwrap(),
        );
        out.extend(x.push(text(Some("p1"), Some("b")).into()).unwrap());
        // A parent-lane event closes only the parent lane.
        out.extend(x.push(StateSnapshot::new(json!({})).into()).unwrap());
        out.extend(
            x.push(Raw::new(json!({})).in_subagent("sub").into())
                .unwrap(),
        );
        out.extend(x.push(SubagentFinished::new("sub").into()).unwrap());
        assert_eq!(
            shape(&out),
            [
                "TEXT_MESSAGE_START:s1@sub",
                "TEXT_MESSAGE_CONTENT:s1@sub",
                "TEXT_MESSAGE_START:p1",
                "TEXT_MESSAGE_CONTENT:p1",
                "TEXT_MESSAGE_END:p1",
                "STATE_SNAPSHOT:",
                "RAW:@sub",
                "TEXT_MESSAGE_END:s1@sub",
                "SUBAGENT_FINISHED:@sub"
            ]
        );
        assert!(!x.has_pending());
    }

    #[test]
    fn untagged_idless_chunk_goes_to_the_sole_open_lane() {
        let out = expand([
            text(Some("c"), Some("a")).in_subagent("s").into(),
            text(None, Some("b")).into(),
            RunError::new("boom").into(),
        ])
        .unwrap();
        assert_eq!(
            shape(&out),
            [
                "TEXT_MESSAGE_START:c@s",
                "TEXT_MESSAGE_CONTENT:c@s",
                "TEXT_MESSAGE_CONTENT:c@s",
                "TEXT_MESSAGE_END:c@s",
                "RUN_ERROR:"
            ]
        );
    }

    #[test]
    fn ambiguous_untagged_chunk_is_an_error() {
        let err = expand([
            text(Some("c"), Some("a")).in_subagent("s1").into(),
            text(Some("d"), Some("a")).in_subagent("s2").into(),
            text(None, Some("b")).into(),
        ])
        .unwrap_err();
        assert_eq!(err.rule, "CHUNK-AMBIGUOUS");
        assert_eq!(err.index, Some(2));
    }

    #[test]
    fn first_chunk_needs_its_ids() {
        assert_eq!(
            expand([text(None, Some("x")).into()]).unwrap_err().message,
            "First TEXT_MESSAGE_CHUNK must have a messageId"
        );
        assert_eq!(
            expand([tool(None, Some("f"), None).into()])
                .unwrap_err()
                .rule,
            "CHUNK-ID"
        );
        assert_eq!(
            expand([tool(Some("c"), None, None).into()])
                .unwrap_err()
                .message,
            "First TOOL_CALL_CHUNK must have a toolCallName"
        );
        assert_eq!(
            expand([reasoning(None, Some("x")).into()])
                .unwrap_err()
                .rule,
            "CHUNK-ID"
        );
    }

    #[test]
    fn conflicting_repeats_are_fatal() {
        let mut second = text(None, Some("b"));
        second.role = Some(TextRole::User);
        let err = expand([text(Some("c"), Some("a")).into(), second.into()]).unwrap_err();
        assert_eq!(err.rule, "CHUNK-CONFLICT");
        assert!(
            err.message
                .contains("chunk role 'user' does not match the open stream's role 'assistant'"),
            "{err}"
        );

        let mut named = text(None, None);
        named.name = Some("bob".into());
        let err = expand([text(Some("c"), Some("a")).into(), named.into()]).unwrap_err();
        assert!(err.message.contains("name (absent)"), "{err}");

        let err = expand([
            tool(Some("c"), Some("f"), None).into(),
            tool(None, Some("g"), None).into(),
        ])
        .unwrap_err();
        assert_eq!(err.rule, "CHUNK-CONFLICT");

        let mut same = text(None, Some("b"));
        same.role = Some(TextRole::Assistant);
        assert!(expand([text(Some("c"), Some("a")).into(), same.into()]).is_ok());
    }

    #[test]
    fn metadata_and_raw_event_placement() {
        let mut meta = Metadata::new();
        meta.insert("k".into(), json!(1));
        let mut first = text(Some("c"), None);
        first.base.metadata = Some(meta.clone());
        first.base.timestamp = Some(5);
        let mut cont = text(None, None);
        cont.base.metadata = Some(meta.clone());
        let bare = text(Some("c"), None);
        let mut raw = text(None, None);
        raw.base.raw_event = Some(json!({"r": 1}));
        let out = expand([first.into(), cont.into(), bare.into(), raw.into()]).unwrap();
        assert_eq!(
            shape(&out),
            [
                "TEXT_MESSAGE_START:c",
                "TEXT_MESSAGE_CONTENT:c",
                "TEXT_MESSAGE_CONTENT:c",
                "TEXT_MESSAGE_END:c"
            ]
        );
        assert_eq!(out[0].base().metadata, Some(meta.clone()));
        assert_eq!(out[0].base().timestamp, None);
        assert_eq!(out[1].base().metadata, Some(meta));
        assert_eq!(out[2].base().raw_event, Some(json!({"r": 1})));
        assert_eq!(out[3].base(), &EventBase::default());
    }

    #[test]
    fn explicit_end_closes_the_chunk_item_first() {
        let out = expand([
            text(Some("c"), Some("a")).into(),
            TextMessageEnd::new("c").into(),
        ])
        .unwrap();
        assert_eq!(
            shape(&out),
            [
                "TEXT_MESSAGE_START:c",
                "TEXT_MESSAGE_CONTENT:c",
                "TEXT_MESSAGE_END:c",
                "TEXT_MESSAGE_END:c"
            ]
        );
    }

    #[test]
    fn an_error_is_sticky_and_finish_is_empty_after_it() {
        let mut x = ChunkExpander::new();
        assert!(x.push(text(Some("c"), Some("a")).into()).is_ok());
        let err = x
            .push(text(Some("d"), None).in_subagent("s").into())
            .map(|_| ());
        assert!(err.is_ok());
        let bad = x.push(tool(None, None, None).into()).unwrap_err();
        assert_eq!(
            x.push(Custom::new("x", json!(null)).into()).unwrap_err(),
            bad
        );
        assert!(x.finish().is_empty());
    }
}
