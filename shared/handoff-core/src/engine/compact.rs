//! Compaction of a run's event log: consecutive deltas of one item are merged, and
//! where they were cut is remembered, so a replay streams the very same events (and
//! the same SSE ids) as the live run did.

use std::borrow::Borrow;
use std::sync::Arc;

use agui_protocol::Event;

use crate::records::DeltaCuts;

/// Merges consecutive `TEXT_MESSAGE_CONTENT`, `TOOL_CALL_ARGS` and
/// `REASONING_MESSAGE_CONTENT` events of the same item, keeping the first
/// fragment's envelope. Replaying the compacted log yields the same messages.
pub fn compact(events: Vec<Event>) -> Vec<Event> {
    compact_with_cuts(events).0
}

/// [`compact`], plus the byte length of every fragment of each merged event, for
/// [`expand`].
pub fn compact_with_cuts(events: Vec<Event>) -> (Vec<Event>, Vec<DeltaCuts>) {
    let capacity = events.len();
    compact_fragments(events.into_iter(), capacity)
}

/// An entry of a log being compacted: an event owned, or shared with the run's live log
/// (copied only if a later fragment is merged into it).
pub(crate) trait LogEntry: Borrow<Event> {
    fn event_mut(&mut self) -> &mut Event;
}

impl LogEntry for Event {
    fn event_mut(&mut self) -> &mut Event {
        self
    }
}

impl LogEntry for Arc<Event> {
    fn event_mut(&mut self) -> &mut Event {
        Arc::make_mut(self)
    }
}

/// [`compact_with_cuts`] of events owned or shared: an event kept as it is is not copied,
/// and a merged fragment is appended to its first one (a run's text deltas cost one copy,
/// not one each).
pub(crate) fn compact_fragments<T: LogEntry>(
    events: impl Iterator<Item = T>,
    capacity: usize,
) -> (Vec<T>, Vec<DeltaCuts>) {
    let mut out: Vec<T> = Vec::with_capacity(capacity);
    let mut cuts: Vec<DeltaCuts> = Vec::new();
    for entry in events {
        let event: &Event = entry.borrow();
        let last = out.last().map(Borrow::<Event>::borrow);
        let previous_len = last.and_then(delta).map(str::len);
        let previous_at = last.and_then(|e| e.base().timestamp);
        let merged = match out.last_mut() {
            Some(prev) if continues(Borrow::<Event>::borrow(&*prev), event) => {
                let next = delta(event).unwrap_or_default();
                if let Some(prev) = delta_mut(prev.event_mut()) {
                    prev.push_str(next);
                }
                true
            }
            _ => false,
        };
        if !merged {
            out.push(entry);
            continue;
        }
        let index = (out.len() - 1) as u32;
        let added = delta(event).map_or(0, str::len) as u32;
        // The merged event keeps its first fragment's timestamp; later ones are offsets.
        let first_at = previous_at.unwrap_or(0);
        let offset = event
            .base()
            .timestamp
            .map_or(0, |at| at.saturating_sub(first_at));
        match cuts.last_mut() {
            Some(c) if c.index == index => {
                c.lengths.push(added);
                c.offsets_ms.push(offset);
            }
            _ => cuts.push(DeltaCuts {
                index,
                lengths: vec![previous_len.unwrap_or(0) as u32, added],
                offsets_ms: vec![0, offset],
            }),
        }
    }
    for c in &mut cuts {
        if c.offsets_ms.iter().all(|&o| o == 0) {
            c.offsets_ms.clear();
        }
    }
    (out, cuts)
}

/// Undoes [`compact_with_cuts`]: each merged event is split back into the fragments it
/// streamed as (each with the merged event's envelope). Cuts that do not fit the event
/// (a record from another version) leave it whole.
pub fn expand(events: Vec<Event>, cuts: &[DeltaCuts]) -> Vec<Event> {
    if cuts.is_empty() {
        return events;
    }
    let extra: usize = cuts.iter().map(|c| c.lengths.len()).sum();
    let mut out = Vec::with_capacity(events.len() + extra);
    let mut cuts = cuts.iter().peekable();
    for (index, event) in events.into_iter().enumerate() {
        let here = cuts.next_if(|c| c.index as usize == index);
        match here.and_then(|c| split(&event, c)) {
            Some(pieces) => out.extend(pieces),
            None => out.push(event),
        }
    }
    out
}

/// Whether `next` is a further fragment of the delta `prev` streams (same kind, same item).
fn continues(prev: &Event, next: &Event) -> bool {
    match (prev, next) {
        (Event::TextMessageContent(prev), Event::TextMessageContent(next)) => {
            prev.message_id == next.message_id && prev.subagent_run_id == next.subagent_run_id
        }
        (Event::ToolCallArgs(prev), Event::ToolCallArgs(next)) => {
            prev.tool_call_id == next.tool_call_id && prev.subagent_run_id == next.subagent_run_id
        }
        (Event::ReasoningMessageContent(prev), Event::ReasoningMessageContent(next)) => {
            prev.message_id == next.message_id && prev.subagent_run_id == next.subagent_run_id
        }
        _ => false,
    }
}

fn delta_mut(event: &mut Event) -> Option<&mut String> {
    match event {
        Event::TextMessageContent(e) => Some(&mut e.delta),
        Event::ToolCallArgs(e) => Some(&mut e.delta),
        Event::ReasoningMessageContent(e) => Some(&mut e.delta),
        _ => None,
    }
}

fn delta(event: &Event) -> Option<&str> {
    match event {
        Event::TextMessageContent(e) => Some(&e.delta),
        Event::ToolCallArgs(e) => Some(&e.delta),
        Event::ReasoningMessageContent(e) => Some(&e.delta),
        _ => None,
    }
}

fn split(event: &Event, cuts: &DeltaCuts) -> Option<Vec<Event>> {
    let whole = delta(event)?;
    let lengths = &cuts.lengths;
    let fits = lengths.iter().map(|&l| l as usize).sum::<usize>() == whole.len()
        && (cuts.offsets_ms.is_empty() || cuts.offsets_ms.len() == lengths.len());
    if !fits {
        return None;
    }
    let first_at = event.base().timestamp;
    let mut pieces = Vec::with_capacity(lengths.len());
    let mut start = 0;
    for (n, &length) in lengths.iter().enumerate() {
        let end = start + length as usize;
        let piece = whole.get(start..end)?.to_owned();
        let mut fragment = event.clone();
        match &mut fragment {
            Event::TextMessageContent(e) => e.delta = piece,
            Event::ToolCallArgs(e) => e.delta = piece,
            Event::ReasoningMessageContent(e) => e.delta = piece,
            _ => return None,
        }
        if let (Some(at), Some(offset)) = (first_at, cuts.offsets_ms.get(n)) {
            fragment.base_mut().timestamp = Some(at + offset);
        }
        pieces.push(fragment);
        start = end;
    }
    Some(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agui_protocol::event::{
        TextMessageContent, TextMessageEnd, TextMessageStart, ToolCallArgs,
    };

    fn stream() -> Vec<Event> {
        vec![
            TextMessageStart::new("m").into(),
            Event::from(TextMessageContent::new("m", "Hel")).with_timestamp(1_000),
            Event::from(TextMessageContent::new("m", "lo, ")).with_timestamp(1_040),
            Event::from(TextMessageContent::new("m", "世界")).with_timestamp(1_090),
            TextMessageEnd::new("m").into(),
            TextMessageStart::new("n").into(),
            TextMessageContent::new("n", "x").into(),
            ToolCallArgs::new("c", "{\"a\":").into(),
            ToolCallArgs::new("c", "1}").into(),
        ]
    }

    #[test]
    fn merges_text_deltas_of_one_message_only() {
        let compacted = compact(stream());
        assert_eq!(compacted.len(), 6);
        let merged = Event::from(TextMessageContent::new("m", "Hello, 世界")).with_timestamp(1_000);
        assert_eq!(compacted[1], merged);
        assert_eq!(compacted[5], ToolCallArgs::new("c", "{\"a\":1}").into());
    }

    #[test]
    fn expanding_the_compacted_log_gives_back_the_stream() {
        let (compacted, cuts) = compact_with_cuts(stream());
        assert_eq!(cuts.len(), 2);
        assert_eq!(cuts[0].lengths, vec![3, 4, 6]);
        assert_eq!(cuts[0].offsets_ms, vec![0, 40, 90]);
        assert!(
            cuts[1].offsets_ms.is_empty(),
            "equal timestamps need no offsets"
        );
        assert_eq!(expand(compacted, &cuts), stream());
    }

    /// A live log's events are compacted without copying the ones kept as they are, and
    /// merging fragments never changes the live log (its clients still replay them).
    #[test]
    fn a_shared_log_is_compacted_without_copies_or_changes() {
        let live: Vec<Arc<Event>> = stream().into_iter().map(Arc::new).collect();
        let (compacted, cuts) = compact_fragments(live.iter().cloned(), live.len());
        let (owned, owned_cuts) = compact_with_cuts(stream());
        assert_eq!(cuts, owned_cuts);
        let events: Vec<Event> = compacted.iter().map(|e| (**e).clone()).collect();
        assert_eq!(events, owned);
        for (kept, original) in [(0, 0), (2, 4), (3, 5), (4, 6)] {
            assert!(Arc::ptr_eq(&compacted[kept], &live[original]), "{kept}");
        }
        assert!(
            !Arc::ptr_eq(&compacted[1], &live[1]),
            "the merged event is a copy"
        );
        let live_now: Vec<Event> = live.iter().map(|e| (**e).clone()).collect();
        assert_eq!(live_now, stream(), "the live log is unchanged");
    }

    #[test]
    fn cuts_that_do_not_fit_leave_the_event_whole() {
        let (compacted, mut cuts) = compact_with_cuts(stream());
        cuts[0].lengths = vec![3, 5, 5]; // inside a multi-byte character
        let expanded = expand(compacted.clone(), &cuts);
        assert_eq!(expanded[1], compacted[1]);
        assert_eq!(expanded.len(), stream().len() - 2);
    }
}
