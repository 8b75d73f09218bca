//! Tracks what a run has opened, so the engine can close it before a cancelled finish.

use agui_protocol::event::{
    ReasoningEnd, ReasoningMessageEnd, StepFinished, SubagentFinished, TextMessageEnd, ToolCallEnd,
};
use agui_protocol::span::{SpanEdge, SpanKind};
use agui_protocol::{Event, SubagentRunId};

/// Items opened and not yet closed, with their owner, in opening order.
#[derive(Debug, Default)]
pub(crate) struct OpenItems {
    open: Vec<(SpanKind, String, Option<SubagentRunId>)>,
}

impl OpenItems {
    pub(crate) fn observe(&mut self, event: &Event) {
        match event.span_edge() {
            Some(SpanEdge::Open(kind, id)) => {
                // A sub-agent's own start is not owned by the sub-agent.
                let owner = match kind {
                    SpanKind::Subagent => None,
                    _ => event.subagent_run_id().cloned(),
                };
                self.open.push((kind, id.to_owned(), owner));
            }
            Some(SpanEdge::Close(kind, id)) => {
                if let Some(pos) = self
                    .open
                    .iter()
                    .rposition(|(k, i, _)| *k == kind && i == id)
                {
                    self.open.remove(pos);
                }
            }
            None => {}
        }
    }

    /// Closing events for everything open, innermost first.
    pub(crate) fn close_all(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Some((kind, id, owner)) = self.open.pop() {
            let event: Event = match kind {
                SpanKind::Text => tagged(TextMessageEnd::new(id), owner, |e, o| e.in_subagent(o)),
                SpanKind::ToolCall => tagged(ToolCallEnd::new(id), owner, |e, o| e.in_subagent(o)),
                SpanKind::ReasoningMessage => {
                    tagged(ReasoningMessageEnd::new(id), owner, |e, o| e.in_subagent(o))
                }
                SpanKind::Reasoning => {
                    tagged(ReasoningEnd::new(id), owner, |e, o| e.in_subagent(o))
                }
                SpanKind::Step => tagged(StepFinished::new(id), owner, |e, o| e.in_subagent(o)),
                SpanKind::Subagent => SubagentFinished::new(id).into(),
            };
            out.push(event);
        }
        out
    }
}

fn tagged<E: Into<Event>>(
    event: E,
    owner: Option<SubagentRunId>,
    tag: impl FnOnce(E, SubagentRunId) -> E,
) -> Event {
    match owner {
        Some(owner) => tag(event, owner).into(),
        None => event.into(),
    }
}
