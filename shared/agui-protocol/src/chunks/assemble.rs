//! Chunk handling: each `*_CHUNK` kind expanded into START/CONTENT/END events, and the
//! helpers building their events and errors.

use super::ChunkExpander;
use super::pending::{Kind, Pending};
use crate::Event;
use crate::event::{
    EventBase, ReasoningMessageChunk, ReasoningMessageContent, ReasoningMessageStart,
    TextMessageChunk, TextMessageContent, TextMessageStart, TextRole, ToolCallArgs, ToolCallChunk,
    ToolCallStart,
};
use crate::verify::Violation;

impl ChunkExpander {
    pub(super) fn text_chunk(
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

    pub(super) fn tool_chunk(
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

    pub(super) fn reasoning_chunk(
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
