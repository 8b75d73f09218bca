//! Folds emitted events into the conversation history the engine persists.

use std::collections::HashSet;

use agui_protocol::event::TextRole;
use agui_protocol::message::{
    ActivityMessage, AssistantMessage, ReasoningMessage, TextOnlyMessage, ToolMessage, UserMessage,
};
use agui_protocol::{Content, Event, Message, ToolCall};
use serde_json::Value;

use crate::message_ids::Ids;

/// The history, updated event by event.
#[derive(Debug, Clone, Default)]
pub(crate) struct MessageLog {
    messages: Vec<Message>,
    /// How many leading messages the thread already stores (events append after them and
    /// never reorder them, so they stay the prefix until a snapshot replaces the history).
    stored: usize,
    /// The stored ids, kept once a `MESSAGES_SNAPSHOT` replaced the history.
    stored_ids_after_snapshot: Option<HashSet<String>>,
}

impl MessageLog {
    /// A history whose first `stored` messages the thread already stores.
    pub(crate) fn new(messages: Vec<Message>, stored: usize) -> Self {
        Self {
            stored: stored.min(messages.len()),
            messages,
            stored_ids_after_snapshot: None,
        }
    }

    pub(crate) fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The messages the thread does not store yet (by id), in order: what the finish pages.
    pub(crate) fn added(&self) -> Vec<&Message> {
        if let Some(stored) = &self.stored_ids_after_snapshot {
            return self
                .messages
                .iter()
                .filter(|m| !stored.contains(m.id().as_str()))
                .collect();
        }
        let (stored, tail) = self.messages.split_at(self.stored);
        let stored = Ids::of(stored, tail.len());
        tail.iter().filter(|m| !stored.contains(m.id())).collect()
    }

    fn find(&mut self, id: &str) -> Option<&mut Message> {
        self.messages
            .iter_mut()
            .rev()
            .find(|m| m.id().as_str() == id)
    }

    pub(crate) fn apply(&mut self, event: &Event) {
        match event {
            Event::TextMessageStart(e) => {
                if self.find(&e.message_id).is_some() {
                    return; // Reopening a closed id appends to it.
                }
                let id = e.message_id.clone();
                let message = match e.role.unwrap_or(TextRole::Assistant) {
                    TextRole::Assistant => Message::Assistant(AssistantMessage {
                        id,
                        content: Some(String::new()),
                        name: e.name.clone(),
                        subagent_run_id: e.subagent_run_id.clone(),
                        ..AssistantMessage::default()
                    }),
                    TextRole::User => Message::User(UserMessage {
                        id,
                        content: Content::Text(String::new()),
                        name: e.name.clone(),
                        encrypted_value: None,
                        metadata: None,
                        subagent_run_id: e.subagent_run_id.clone(),
                    }),
                    role => {
                        let inner = TextOnlyMessage {
                            id,
                            name: e.name.clone(),
                            subagent_run_id: e.subagent_run_id.clone(),
                            ..TextOnlyMessage::default()
                        };
                        if role == TextRole::System {
                            Message::System(inner)
                        } else {
                            Message::Developer(inner)
                        }
                    }
                };
                self.messages.push(message);
            }
            Event::TextMessageContent(e) => match self.find(&e.message_id) {
                Some(Message::Assistant(m)) => {
                    append(m.content.get_or_insert_with(String::new), &e.delta)
                }
                Some(Message::User(m)) => {
                    if let Content::Text(text) = &mut m.content {
                        append(text, &e.delta);
                    }
                }
                Some(Message::System(m) | Message::Developer(m)) => {
                    append(&mut m.content, &e.delta)
                }
                _ => {}
            },
            Event::ToolCallStart(e) => {
                let call = ToolCall::function(e.tool_call_id.clone(), e.tool_call_name.clone(), "");
                let parent = e.parent_message_id.as_ref().map(|p| p.to_string());
                if let Some(Message::Assistant(m)) = parent.as_deref().and_then(|p| self.find(p)) {
                    m.tool_calls.get_or_insert_with(Vec::new).push(call);
                    return;
                }
                self.messages.push(Message::Assistant(AssistantMessage {
                    id: parent.unwrap_or_else(|| e.tool_call_id.to_string()).into(),
                    tool_calls: Some(vec![call]),
                    subagent_run_id: e.subagent_run_id.clone(),
                    ..AssistantMessage::default()
                }));
            }
            Event::ToolCallArgs(e) => {
                let call = self.messages.iter_mut().rev().find_map(|m| match m {
                    Message::Assistant(a) => a
                        .tool_calls
                        .as_mut()?
                        .iter_mut()
                        .find(|c| c.id == e.tool_call_id),
                    _ => None,
                });
                if let Some(call) = call {
                    append(&mut call.function.arguments, &e.delta);
                }
            }
            Event::ToolCallResult(e) => self.messages.push(Message::Tool(ToolMessage {
                id: e.message_id.clone(),
                content: e.content.clone(),
                tool_call_id: e.tool_call_id.clone(),
                error: None,
                encrypted_value: None,
                metadata: None,
                subagent_run_id: e.subagent_run_id.clone(),
            })),
            Event::ReasoningMessageStart(e) if self.find(&e.message_id).is_none() => {
                self.messages.push(Message::Reasoning(ReasoningMessage {
                    id: e.message_id.clone(),
                    content: String::new(),
                    encrypted_value: None,
                    metadata: None,
                    subagent_run_id: e.subagent_run_id.clone(),
                }));
            }
            Event::ReasoningMessageContent(e) => {
                if let Some(Message::Reasoning(m)) = self.find(&e.message_id) {
                    append(&mut m.content, &e.delta);
                }
            }
            Event::ActivitySnapshot(e) => {
                let replace = e.replace.unwrap_or(true);
                match self.find(&e.message_id) {
                    Some(Message::Activity(m)) => {
                        m.activity_type = e.activity_type.clone();
                        if replace {
                            m.content = e.content.clone();
                        } else {
                            m.content.extend(e.content.clone());
                        }
                    }
                    Some(_) => {}
                    None => self.messages.push(Message::Activity(ActivityMessage {
                        id: e.message_id.clone(),
                        activity_type: e.activity_type.clone(),
                        content: e.content.clone(),
                        metadata: None,
                        subagent_run_id: e.subagent_run_id.clone(),
                    })),
                }
            }
            Event::ActivityDelta(e) => {
                if let Some(Message::Activity(m)) = self.find(&e.message_id) {
                    let mut doc = Value::Object(std::mem::take(&mut m.content));
                    // A failing activity patch is skipped as the official client does; content stays as it was.
                    let _ = crate::context::state::apply_patch(&mut doc, &e.patch);
                    if let Value::Object(map) = doc {
                        m.content = map;
                    }
                    m.activity_type = e.activity_type.clone();
                }
            }
            Event::MessagesSnapshot(e) => {
                if self.stored_ids_after_snapshot.is_none() {
                    let stored = self.messages[..self.stored].iter();
                    let ids = stored.map(|m| m.id().to_string()).collect();
                    self.stored_ids_after_snapshot = Some(ids);
                }
                self.messages = e.messages.clone();
            }
            _ => {}
        }
    }
}

/// Room a streamed text or argument string starts with: a short answer then takes one
/// allocation instead of doubling through 8, 16, 32, 64 and 128 bytes as its words arrive.
const FIRST_TEXT_CAPACITY: usize = 128;

/// Appends one streamed fragment to `text`.
fn append(text: &mut String, delta: &str) {
    if text.capacity() == 0 {
        text.reserve(delta.len().max(FIRST_TEXT_CAPACITY));
    }
    text.push_str(delta);
}

#[cfg(test)]
mod tests {
    use agui_protocol::event::{
        MessagesSnapshot, TextMessageContent, TextMessageStart, ToolCallArgs, ToolCallStart,
    };
    use agui_protocol::{Event, Message};

    use super::{FIRST_TEXT_CAPACITY, MessageLog};

    #[test]
    fn streamed_words_fill_one_allocation() {
        let mut log = MessageLog::default();
        log.apply(&TextMessageStart::new("m1").into());
        log.apply(&ToolCallStart::new("c1", "search").into());
        let words = ["Order ", "B100 ", "was ", "paid ", "319.09 ", "USD."];
        for word in words {
            log.apply(&TextMessageContent::new("m1", word).into());
            log.apply(&Event::from(ToolCallArgs::new("c1", word)));
        }
        let text = words.concat();
        let [Message::Assistant(answer), Message::Assistant(call)] = log.messages() else {
            panic!("{:?}", log.messages());
        };
        let content = answer.content.as_ref().expect("text");
        assert_eq!(*content, text);
        assert_eq!(content.capacity(), FIRST_TEXT_CAPACITY);
        let arguments = &call.tool_calls.as_ref().expect("calls")[0]
            .function
            .arguments;
        assert_eq!(*arguments, text);
        assert_eq!(arguments.capacity(), FIRST_TEXT_CAPACITY);
    }

    fn ids(messages: Vec<&Message>) -> Vec<&str> {
        messages.into_iter().map(|m| m.id().as_str()).collect()
    }

    #[test]
    fn added_is_what_follows_the_stored_prefix_under_an_id_it_does_not_hold() {
        let history = vec![
            Message::user("u1", "Refund A1"),
            Message::assistant("a1", "Done"),
            Message::user("u2", "Thanks"),
        ];
        let mut log = MessageLog::new(history, 2);
        log.apply(&TextMessageStart::new("a2").into());
        // A tool result the agent files under a stored id is the stored message's.
        log.apply(&Event::from(agui_protocol::event::ToolCallResult::new(
            "a1", "c1", "late",
        )));
        assert_eq!(ids(log.added()), ["u2", "a2"]);
        // Ten more (past the scans' limit, so the stored ids go into a set): same rule.
        for n in 0..10 {
            log.apply(&TextMessageStart::new(format!("x{n}")).into());
        }
        log.apply(&Event::from(agui_protocol::event::ToolCallResult::new(
            "u1", "c2", "late",
        )));
        assert_eq!(log.added().len(), 12);
        assert!(!ids(log.added()).contains(&"u1"));
    }

    #[test]
    fn after_a_snapshot_the_stored_ids_still_decide_what_is_added() {
        let history = vec![Message::user("u1", "Hi"), Message::assistant("a1", "Hello")];
        let mut log = MessageLog::new(history, 2);
        let replaced = vec![
            Message::assistant("a1", "Hello (edited)"),
            Message::user("u2", "New"),
        ];
        log.apply(&MessagesSnapshot::new(replaced).into());
        assert_eq!(ids(log.added()), ["u2"]);
        // A second snapshot keeps the first one's notion of what is stored.
        log.apply(&MessagesSnapshot::new(vec![Message::user("u1", "Hi")]).into());
        assert!(log.added().is_empty());
    }
}
