//! Tracks what a run has opened, so the engine can close it before a cancelled finish.

use agui_protocol::event::{
    ReasoningEnd, ReasoningMessageEnd, StepFinished, SubagentFinished, TextMessageEnd, ToolCallEnd,
};
use agui_protocol::{Event, SubagentRunId};

#[derive(Debug, Clone, PartialEq)]
enum Open {
    Text(String),
    Tool(String),
    ReasoningMessage(String),
    ReasoningSpan(String),
    Step(String),
    Subagent(String),
}

/// Items opened and not yet closed, with their owner, in opening order.
#[derive(Debug, Default)]
pub(crate) struct OpenItems {
    open: Vec<(Open, Option<SubagentRunId>)>,
}

impl OpenItems {
    pub(crate) fn observe(&mut self, event: &Event) {
        let owner = event.subagent_run_id().cloned();
        let (opened, closed) = match event {
            Event::TextMessageStart(e) => (Some(Open::Text(e.message_id.0.clone())), None),
            Event::TextMessageEnd(e) => (None, Some(Open::Text(e.message_id.0.clone()))),
            Event::ToolCallStart(e) => (Some(Open::Tool(e.tool_call_id.0.clone())), None),
            Event::ToolCallEnd(e) => (None, Some(Open::Tool(e.tool_call_id.0.clone()))),
            Event::ReasoningMessageStart(e) => {
                (Some(Open::ReasoningMessage(e.message_id.0.clone())), None)
            }
            Event::ReasoningMessageEnd(e) => {
                (None, Some(Open::ReasoningMessage(e.message_id.0.clone())))
            }
            Event::ReasoningStart(e) => (Some(Open::ReasoningSpan(e.message_id.0.clone())), None),
            Event::ReasoningEnd(e) => (None, Some(Open::ReasoningSpan(e.message_id.0.clone()))),
            Event::StepStarted(e) => (Some(Open::Step(e.step_name.clone())), None),
            Event::StepFinished(e) => (None, Some(Open::Step(e.step_name.clone()))),
            Event::SubagentStarted(e) => (Some(Open::Subagent(e.subagent_run_id.0.clone())), None),
            Event::SubagentFinished(e) => (None, Some(Open::Subagent(e.subagent_run_id.0.clone()))),
            Event::SubagentError(e) => (None, Some(Open::Subagent(e.subagent_run_id.0.clone()))),
            _ => (None, None),
        };
        if let Some(item) = opened {
            let owner = if matches!(item, Open::Subagent(_)) {
                None
            } else {
                owner
            };
            self.open.push((item, owner));
        } else if let Some(item) = closed
            && let Some(pos) = self.open.iter().rposition(|(o, _)| *o == item)
        {
            self.open.remove(pos);
        }
    }

    /// Closing events for everything open, innermost first.
    pub(crate) fn close_all(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Some((item, owner)) = self.open.pop() {
            let event: Event = match item {
                Open::Text(id) => tagged(TextMessageEnd::new(id), owner, |e, o| e.in_subagent(o)),
                Open::Tool(id) => tagged(ToolCallEnd::new(id), owner, |e, o| e.in_subagent(o)),
                Open::ReasoningMessage(id) => {
                    tagged(ReasoningMessageEnd::new(id), owner, |e, o| e.in_subagent(o))
                }
                Open::ReasoningSpan(id) => {
                    tagged(ReasoningEnd::new(id), owner, |e, o| e.in_subagent(o))
                }
                Open::Step(name) => tagged(StepFinished::new(name), owner, |e, o| e.in_subagent(o)),
                Open::Subagent(id) => SubagentFinished::new(id).into(),
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
