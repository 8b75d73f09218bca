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
    compact_fragments(events)
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
/// not one each). Each merged delta and its cuts are sized once, from a first pass over the
/// log, instead of growing fragment by fragment.
pub(crate) fn compact_fragments<T: LogEntry>(events: Vec<T>) -> (Vec<T>, Vec<DeltaCuts>) {
    let runs = fragment_runs(&events);
    if runs.is_empty() {
        return (events, Vec::new());
    }
    let merged_away: usize = runs.iter().map(|r| r.len - 1).sum();
    let mut out: Vec<T> = Vec::with_capacity(events.len() - merged_away);
    let mut cuts: Vec<DeltaCuts> = Vec::with_capacity(runs.len());
    let mut runs = runs.into_iter().peekable();
    // The run being merged: its end index, and its first fragment's timestamp.
    let mut open: Option<(usize, u64)> = None;
    for (at, mut entry) in events.into_iter().enumerate() {
        if let Some((end, first_at)) = open.filter(|&(end, _)| at < end) {
            let event: &Event = entry.borrow();
            let next = delta(event).unwrap_or_default();
            let offset = event
                .base()
                .timestamp
                .map_or(0, |ts| ts.saturating_sub(first_at));
            if let Some(prev) = out.last_mut().and_then(|p| delta_mut(p.event_mut())) {
                prev.push_str(next);
            }
            if let Some(c) = cuts.last_mut() {
                c.lengths.push(next.len() as u32);
                c.offsets_ms.push(offset);
            }
            if at + 1 == end {
                open = None;
            }
            continue;
        }
        if let Some(run) = runs.next_if(|r| r.start == at) {
            let event: &Event = entry.borrow();
            let first_len = delta(event).map_or(0, str::len);
            // The merged event keeps its first fragment's timestamp; later ones are offsets.
            open = Some((at + run.len, event.base().timestamp.unwrap_or(0)));
            let mut lengths = Vec::with_capacity(run.len);
            lengths.push(first_len as u32);
            let mut offsets_ms = Vec::with_capacity(run.len);
            offsets_ms.push(0);
            cuts.push(DeltaCuts {
                index: out.len() as u32,
                lengths,
                offsets_ms,
            });
            if let Some(first) = delta_mut(entry.event_mut()) {
                first.reserve_exact(run.bytes - first_len);
            }
        }
        out.push(entry);
    }
    for c in &mut cuts {
        if c.offsets_ms.iter().all(|&o| o == 0) {
            c.offsets_ms = Vec::new();
        }
    }
    (out, cuts)
}

/// Consecutive fragments of one item, two or more.
struct FragmentRun {
    start: usize,
    len: usize,
    /// The merged delta's length.
    bytes: usize,
}

/// The runs of fragments a compaction merges, in order.
fn fragment_runs<T: Borrow<Event>>(events: &[T]) -> Vec<FragmentRun> {
    let mut runs: Vec<FragmentRun> = Vec::new();
    for (at, pair) in events.windows(2).enumerate() {
        let (prev, next) = (pair[0].borrow(), pair[1].borrow());
        if !continues(prev, next) {
            continue;
        }
        let added = delta(next).map_or(0, str::len);
        match runs.last_mut() {
            Some(run) if run.start + run.len == at + 1 => {
                run.len += 1;
                run.bytes += added;
            }
            _ => runs.push(FragmentRun {
                start: at,
                len: 2,
                bytes: delta(prev).map_or(0, str::len) + added,
            }),
        }
    }
    runs
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
        let (compacted, cuts) = compact_fragments(live.clone());
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

    /// A long streamed answer is merged into a delta and cuts sized once, and runs of two
    /// items that follow each other stay apart.
    #[test]
    fn merged_deltas_and_their_cuts_are_sized_exactly() {
        let mut events: Vec<Event> = (0..40)
            .map(|n| Event::from(TextMessageContent::new("m", format!("w{n} "))).with_timestamp(n))
            .collect();
        events.extend((0..3).map(|n| Event::from(ToolCallArgs::new("c", format!("{n}")))));
        events.extend((0..2).map(|n| Event::from(ToolCallArgs::new("d", format!("{n}")))));
        let (compacted, cuts) = compact_with_cuts(events.clone());
        assert_eq!(compacted.len(), 3);
        let Event::TextMessageContent(text) = &compacted[0] else {
            panic!("text first")
        };
        assert_eq!(text.delta.capacity(), text.delta.len());
        assert_eq!(
            cuts.iter()
                .map(|c| (c.index, c.lengths.len()))
                .collect::<Vec<_>>(),
            [(0, 40), (1, 3), (2, 2)]
        );
        assert_eq!(cuts[0].lengths.capacity(), 40);
        assert_eq!(cuts[0].offsets_ms.capacity(), 40);
        assert_eq!(expand(compacted, &cuts), events);
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
