//! Which events open and close what, and rejoining a stream part-way through.
//!
//! AG-UI items come in pairs (`TEXT_MESSAGE_START` … `TEXT_MESSAGE_END`, steps, tool
//! calls, reasoning, sub-agents). A consumer must never see an item's content or end
//! without its start, so a client that reconnects to a run after the `last_id`-th event
//! first gets a **join prelude**: the run's `RUN_STARTED`, the latest state and messages
//! snapshots (with the state deltas since), and the start of everything still open at
//! that point, all with their original ids, then every later event.
//!
//! ```
//! use agui_protocol::event::{RunStarted, TextMessageContent, TextMessageStart};
//! use agui_protocol::{Event, span::rejoin};
//! let events: Vec<Event> = vec![
//!     RunStarted::new("t", "r").into(),
//!     TextMessageStart::new("m").into(),
//!     TextMessageContent::new("m", "Hel").into(),
//!     TextMessageContent::new("m", "lo").into(),
//! ];
//! let ids: Vec<u64> = rejoin(&events, 3).into_iter().map(|(id, _)| id).collect();
//! assert_eq!(ids, [1, 2, 4]); // RUN_STARTED and the open message's start, then the rest
//! ```

use crate::Event;

/// The kinds of paired items.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpanKind {
    /// `TEXT_MESSAGE_START` / `_END`, by message id.
    Text,
    /// `TOOL_CALL_START` / `_END`, by tool call id.
    ToolCall,
    /// `REASONING_MESSAGE_START` / `_END`, by message id.
    ReasoningMessage,
    /// `REASONING_START` / `_END`, by message id.
    Reasoning,
    /// `STEP_STARTED` / `_FINISHED`, by step name.
    Step,
    /// `SUBAGENT_STARTED` / `_FINISHED` or `_ERROR`, by sub-agent run id.
    Subagent,
}

/// What one event does to a paired item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanEdge<'a> {
    /// Opens the item `(kind, id)`.
    Open(SpanKind, &'a str),
    /// Closes it.
    Close(SpanKind, &'a str),
}

impl Event {
    /// Whether this event opens or closes a paired item.
    pub fn span_edge(&self) -> Option<SpanEdge<'_>> {
        use SpanEdge::{Close, Open};
        use SpanKind::*;
        Some(match self {
            Event::TextMessageStart(e) => Open(Text, e.message_id.as_str()),
            Event::TextMessageEnd(e) => Close(Text, e.message_id.as_str()),
            Event::ToolCallStart(e) => Open(ToolCall, e.tool_call_id.as_str()),
            Event::ToolCallEnd(e) => Close(ToolCall, e.tool_call_id.as_str()),
            Event::ReasoningMessageStart(e) => Open(ReasoningMessage, e.message_id.as_str()),
            Event::ReasoningMessageEnd(e) => Close(ReasoningMessage, e.message_id.as_str()),
            Event::ReasoningStart(e) => Open(Reasoning, e.message_id.as_str()),
            Event::ReasoningEnd(e) => Close(Reasoning, e.message_id.as_str()),
            Event::StepStarted(e) => Open(Step, &e.step_name),
            Event::StepFinished(e) => Close(Step, &e.step_name),
            Event::SubagentStarted(e) => Open(Subagent, e.subagent_run_id.as_str()),
            Event::SubagentFinished(e) => Close(Subagent, e.subagent_run_id.as_str()),
            Event::SubagentError(e) => Close(Subagent, e.subagent_run_id.as_str()),
            _ => return None,
        })
    }
}

/// The frames, with their 1-based ids, for a client that already has `events[..last_id]`:
/// the join prelude (`RUN_STARTED`, the snapshots as they stood, the starts of items open
/// after `last_id`, each under its original id, so a consumer that drops ids it has seen gets exactly the
/// uninterrupted stream), then `events[last_id..]`. With `last_id` 0 it is every event;
/// past the end, nothing.
pub fn rejoin(events: &[Event], last_id: u64) -> Vec<(u64, Event)> {
    let seen = usize::try_from(last_id).unwrap_or(usize::MAX);
    if seen >= events.len() {
        return Vec::new();
    }
    let mut prelude: Vec<usize> = Vec::new();
    if seen > 0 && matches!(events.first(), Some(Event::RunStarted(_))) {
        prelude.push(0);
    }
    let mut open: Vec<(SpanKind, &str, usize)> = Vec::new();
    for (index, event) in events[..seen].iter().enumerate() {
        match event.span_edge() {
            Some(SpanEdge::Open(kind, id)) => open.push((kind, id, index)),
            Some(SpanEdge::Close(kind, id)) => {
                if let Some(at) = open.iter().rposition(|(k, i, _)| *k == kind && *i == id) {
                    open.remove(at);
                }
            }
            None => {}
        }
    }
    prelude.extend(open.iter().map(|(_, _, index)| *index));
    // The state and history as they stood at the cut: the latest snapshots and the state
    // deltas since, so a consumer that joins fresh holds what the run's last frames build on.
    let before = &events[..seen];
    let state = before
        .iter()
        .rposition(|e| matches!(e, Event::StateSnapshot(_)));
    if let Some(at) = state {
        prelude.push(at);
    }
    let since = state.map_or(0, |at| at + 1);
    prelude.extend((since..seen).filter(|&i| matches!(before[i], Event::StateDelta(_))));
    if let Some(at) = before
        .iter()
        .rposition(|e| matches!(e, Event::MessagesSnapshot(_)))
    {
        prelude.push(at);
    }
    prelude.sort_unstable();
    let numbered = |index: usize| (index as u64 + 1, events[index].clone());
    prelude
        .into_iter()
        .chain(seen..events.len())
        .map(numbered)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{
        RunFinished, RunStarted, StepFinished, StepStarted, TextMessageContent, TextMessageEnd,
        TextMessageStart, ToolCallArgs, ToolCallEnd, ToolCallStart,
    };

    fn run() -> Vec<Event> {
        let mut started = RunStarted::new("t", "r");
        started.protocol_version = Some(crate::PROTOCOL_VERSION.to_owned());
        let mut finished = RunFinished::new("t", "r");
        finished.outcome = Some(crate::RunFinishedOutcome::success());
        vec![
            started.into(),                           // 1
            StepStarted::new("look").into(),          // 2
            TextMessageStart::new("m").into(),        // 3
            TextMessageContent::new("m", "a").into(), // 4
            TextMessageEnd::new("m").into(),          // 5
            ToolCallStart::new("c", "get").into(),    // 6
            ToolCallArgs::new("c", "{").into(),       // 7
            ToolCallArgs::new("c", "}").into(),       // 8
            ToolCallEnd::new("c").into(),             // 9
            StepFinished::new("look").into(),         // 10
            finished.into(),                          // 11
        ]
    }

    fn ids(frames: &[(u64, Event)]) -> Vec<u64> {
        frames.iter().map(|(id, _)| *id).collect()
    }

    #[test]
    fn a_cut_inside_tool_args_replays_the_open_step_and_call() {
        assert_eq!(ids(&rejoin(&run(), 7)), [1, 2, 6, 8, 9, 10, 11]);
    }

    #[test]
    fn a_cut_between_items_needs_only_the_open_step() {
        assert_eq!(ids(&rejoin(&run(), 5)), [1, 2, 6, 7, 8, 9, 10, 11]);
    }

    #[test]
    fn no_cut_is_everything_and_a_cut_past_the_end_is_nothing() {
        assert_eq!(ids(&rejoin(&run(), 0)), (1..=11).collect::<Vec<_>>());
        assert!(rejoin(&run(), 11).is_empty());
        assert!(rejoin(&run(), 99).is_empty());
    }

    #[test]
    fn every_rejoined_stream_is_valid_for_the_official_checks_from_its_first_frame() {
        use crate::verify::{VerifyOptions, verify_events};
        let all = run();
        for cut in 1..all.len() as u64 {
            let joined: Vec<Event> = rejoin(&all, cut).into_iter().map(|(_, e)| e).collect();
            for options in [VerifyOptions::official(), VerifyOptions::strict()] {
                if let Err(violation) = verify_events(&joined, options) {
                    panic!("cut after {cut}: {violation:?}");
                }
            }
        }
    }

    #[test]
    fn dropping_ids_already_seen_gives_the_uninterrupted_stream() {
        let all = run();
        for cut in 0..all.len() as u64 {
            let mut seen: Vec<(u64, Event)> =
                rejoin(&all, 0).into_iter().take(cut as usize).collect();
            let last = seen.last().map_or(0, |(id, _)| *id);
            seen.extend(rejoin(&all, last).into_iter().filter(|(id, _)| *id > last));
            let events: Vec<Event> = seen.into_iter().map(|(_, e)| e).collect();
            assert_eq!(events, all, "cut after {cut}");
        }
    }
}
