//! Compaction of a run's event log: consecutive deltas of one item are merged.

use agui_protocol::Event;

/// Merges consecutive `TEXT_MESSAGE_CONTENT`, `TOOL_CALL_ARGS` and
/// `REASONING_MESSAGE_CONTENT` events of the same item, keeping the first
/// fragment's envelope. Replaying the compacted log yields the same messages.
pub fn compact(events: Vec<Event>) -> Vec<Event> {
    let mut out: Vec<Event> = Vec::with_capacity(events.len());
    for event in events {
        let merged = match (out.last_mut(), &event) {
            (Some(Event::TextMessageContent(prev)), Event::TextMessageContent(next))
                if prev.message_id == next.message_id
                    && prev.subagent_run_id == next.subagent_run_id =>
            {
                prev.delta.push_str(&next.delta);
                true
            }
            (Some(Event::ToolCallArgs(prev)), Event::ToolCallArgs(next))
                if prev.tool_call_id == next.tool_call_id
                    && prev.subagent_run_id == next.subagent_run_id =>
            {
                prev.delta.push_str(&next.delta);
                true
            }
            (Some(Event::ReasoningMessageContent(prev)), Event::ReasoningMessageContent(next))
                if prev.message_id == next.message_id
                    && prev.subagent_run_id == next.subagent_run_id =>
            {
                prev.delta.push_str(&next.delta);
                true
            }
            _ => false,
        };
        if !merged {
            out.push(event);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use agui_protocol::event::{TextMessageContent, TextMessageEnd, TextMessageStart};

    #[test]
    fn merges_text_deltas_of_one_message_only() {
        let events: Vec<Event> = vec![
            TextMessageStart::new("m").into(),
            TextMessageContent::new("m", "Hel").into(),
            TextMessageContent::new("m", "lo").into(),
            TextMessageEnd::new("m").into(),
            TextMessageStart::new("n").into(),
            TextMessageContent::new("n", "x").into(),
        ];
        let compacted = compact(events);
        assert_eq!(compacted.len(), 5);
        assert_eq!(compacted[1], TextMessageContent::new("m", "Hello").into());
    }
}
