//! Lane bookkeeping: closing lanes on explicit and lifecycle events, and picking,
//! continuing and opening a chunk's lane.

use super::pending::{Kind, Pending};
use super::{ChunkExpander, Lane};
use crate::Event;
use crate::ids::SubagentRunId;
use crate::verify::Violation;

impl ChunkExpander {
    pub(super) fn close_for(&mut self, event: &Event, out: &mut Vec<Event>) {
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

    pub(super) fn close_all(&mut self, out: &mut Vec<Event>) {
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

    pub(super) fn pending(&self, lane: &Lane) -> Option<&Pending> {
        self.lanes.iter().find(|(l, _)| l == lane).map(|(_, p)| p)
    }

    /// Picks the lane a chunk belongs to. A tagged chunk goes to its lane. An
    /// untagged one goes to the parent lane when that lane holds an item of
    /// the kind (with the same id, if it carries one); otherwise to the sole
    /// other lane holding such an item; otherwise to the parent lane.
    pub(super) fn lane_for(
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
    pub(super) fn continues(&self, lane: &Lane, kind: Kind, id: Option<&str>) -> bool {
        self.pending(lane)
            .is_some_and(|p| p.kind() == kind && id.is_none_or(|id| p.id() == id))
    }

    pub(super) fn open(&mut self, lane: Lane, pending: Pending, out: &mut Vec<Event>) {
        self.close_lane(&lane, out);
        self.lanes.push((lane, pending));
    }
}
