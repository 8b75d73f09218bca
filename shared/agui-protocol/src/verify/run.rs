//! Per-run tracking of streamed items, steps, subagents and owners
//! (rules T1–T2, C1–C3, R1–R2, S1–S2, A2–A8).

use std::collections::{HashMap, HashSet};

use super::Violation;
use crate::event::EncryptedSubtype;
use crate::ids::{RunId, SubagentRunId, ThreadId, ToolCallId};
use crate::message::Message;
use crate::{Event, EventType};

/// Who an item belongs to: a subagent invocation, or `None` for the parent agent.
type Owner = Option<SubagentRunId>;

/// Per-run tracking, reset by every `RUN_STARTED` (L5).
#[derive(Debug, Clone, Default)]
pub(super) struct Run {
    pub(super) run_id: Option<RunId>,
    pub(super) thread_id: Option<ThreadId>,
    steps: Vec<(Owner, String)>,
    texts: Vec<String>,
    reasoning_messages: Vec<String>,
    spans: Vec<String>,
    tools: Vec<String>,
    subagents: Vec<SubagentRunId>,
    closed_subagents: HashSet<SubagentRunId>,
    /// Owners by id: text and tool-result messages (and snapshot messages of other roles).
    message_owners: HashMap<String, Owner>,
    reasoning_owners: HashMap<String, Owner>,
    span_owners: HashMap<String, Owner>,
    tool_owners: HashMap<String, Owner>,
    activity_owners: HashMap<String, Owner>,
    /// Tool calls started in this run, first start order.
    pub(super) started_tools: Vec<ToolCallId>,
    pub(super) answered_tools: HashSet<ToolCallId>,
    pub(super) saw_state_snapshot: bool,
    pub(super) saw_messages_snapshot: bool,
}

impl Run {
    /// Fresh tracking for the run `RUN_STARTED` opened.
    pub(super) fn new(run_id: RunId, thread_id: ThreadId) -> Self {
        Run {
            run_id: Some(run_id),
            thread_id: Some(thread_id),
            ..Run::default()
        }
    }

    /// Records the owners a message carries: by role bucket, plus its tool calls.
    pub(super) fn seed_message(
        &mut self,
        message: &Message,
        overwrite: bool,
        known_tools: &mut HashSet<ToolCallId>,
    ) {
        let owner = message_owner(message);
        let id = message.id().to_string();
        let run = self;
        let bucket = match message {
            Message::Reasoning(_) => &mut run.reasoning_owners,
            Message::Activity(_) => &mut run.activity_owners,
            _ => &mut run.message_owners,
        };
        set_owner(bucket, id, owner.clone(), overwrite);
        if let Message::Assistant(m) = message {
            for call in m.tool_calls.iter().flatten() {
                set_owner(
                    &mut run.tool_owners,
                    call.id.to_string(),
                    owner.clone(),
                    overwrite,
                );
                known_tools.insert(call.id.clone());
            }
        }
    }

    /// L6: the first kind of item still open, with the open ids, in the client's order.
    pub(super) fn still_open(&self) -> Option<(&'static str, Vec<String>)> {
        let open: [(&'static str, Vec<String>); 6] = [
            (
                "steps",
                self.steps.iter().map(|(o, n)| step_label(o, n)).collect(),
            ),
            ("text messages", self.texts.clone()),
            ("reasoning messages", self.reasoning_messages.clone()),
            ("reasoning spans", self.spans.clone()),
            ("tool calls", self.tools.clone()),
            (
                "subagents",
                self.subagents.iter().map(|s| s.to_string()).collect(),
            ),
        ];
        open.into_iter().find(|(_, ids)| !ids.is_empty())
    }

    /// Applies an event inside an active run (everything but `RUN_*`).
    pub(super) fn apply(
        &mut self,
        event: &Event,
        index: usize,
        known_tools: &mut HashSet<ToolCallId>,
    ) -> Result<(), Violation> {
        let tag = event.subagent_run_id();
        let ty = event.event_type();
        let run = self;
        match event {
            Event::StepStarted(e) => {
                let key = (tag.cloned(), e.step_name.clone());
                if run.steps.contains(&key) {
                    return Err(Violation::new(
                        "S1",
                        Some(index),
                        format!(
                            "Step \"{}\" is already active for 'STEP_STARTED'",
                            e.step_name
                        ),
                    ));
                }
                run.steps.push(key);
            }
            Event::StepFinished(e) => {
                let key = (tag.cloned(), e.step_name.clone());
                if let Some(pos) = run.steps.iter().position(|k| *k == key) {
                    run.steps.remove(pos);
                } else if let Some((other, _)) = run.steps.iter().find(|(_, n)| *n == e.step_name) {
                    return Err(Violation::new(
                        "S2",
                        Some(index),
                        format!(
                            "Cannot send 'STEP_FINISHED' for step \"{}\" attributed to {}: that step is open under {}. A step must be finished by whoever started it.",
                            e.step_name,
                            owner_label(&tag.cloned()),
                            owner_label(other)
                        ),
                    ));
                } else {
                    return Err(Violation::new(
                        "S2",
                        Some(index),
                        format!(
                            "Cannot send 'STEP_FINISHED' for step \"{}\" that was not started",
                            e.step_name
                        ),
                    ));
                }
            }
            Event::TextMessageStart(e) => open(
                &mut run.texts,
                &mut run.message_owners,
                Item::Text,
                &e.message_id,
                tag,
                index,
            )?,
            Event::TextMessageContent(e) => cont(
                &run.texts,
                &run.message_owners,
                Item::Text,
                ty,
                &e.message_id,
                tag,
                index,
            )?,
            Event::TextMessageEnd(e) => {
                cont(
                    &run.texts,
                    &run.message_owners,
                    Item::Text,
                    ty,
                    &e.message_id,
                    tag,
                    index,
                )?;
                remove(&mut run.texts, &e.message_id);
            }
            Event::ToolCallStart(e) => {
                if let (Some(t), Some(parent)) = (tag, &e.parent_message_id)
                    && let Some(owner) = run
                        .message_owners
                        .get(parent.as_str())
                        .filter(|o| o.as_ref() != Some(t))
                {
                    return Err(Violation::new(
                        "A6",
                        Some(index),
                        format!(
                            "Cannot send 'TOOL_CALL_START': subagentRunId '{t}' does not match its parent message '{parent}' owner '{}'. A tool call belongs to the message that carries it.",
                            owner_name(owner)
                        ),
                    ));
                }
                open(
                    &mut run.tools,
                    &mut run.tool_owners,
                    Item::Tool,
                    &e.tool_call_id,
                    tag,
                    index,
                )?;
                if !run.started_tools.contains(&e.tool_call_id) {
                    run.started_tools.push(e.tool_call_id.clone());
                }
                known_tools.insert(e.tool_call_id.clone());
            }
            Event::ToolCallArgs(e) => cont(
                &run.tools,
                &run.tool_owners,
                Item::Tool,
                ty,
                &e.tool_call_id,
                tag,
                index,
            )?,
            Event::ToolCallEnd(e) => {
                cont(
                    &run.tools,
                    &run.tool_owners,
                    Item::Tool,
                    ty,
                    &e.tool_call_id,
                    tag,
                    index,
                )?;
                remove(&mut run.tools, &e.tool_call_id);
            }
            Event::ToolCallResult(e) => {
                // C3: no sequence check; the minted message takes the result's owner.
                run.message_owners
                    .insert(e.message_id.to_string(), tag.cloned());
                run.answered_tools.insert(e.tool_call_id.clone());
            }
            Event::ReasoningStart(e) => open(
                &mut run.spans,
                &mut run.span_owners,
                Item::Span,
                &e.message_id,
                tag,
                index,
            )?,
            Event::ReasoningEnd(e) => {
                cont(
                    &run.spans,
                    &run.span_owners,
                    Item::Span,
                    ty,
                    &e.message_id,
                    tag,
                    index,
                )?;
                remove(&mut run.spans, &e.message_id);
            }
            Event::ReasoningMessageStart(e) => {
                open(
                    &mut run.reasoning_messages,
                    &mut run.reasoning_owners,
                    Item::Reasoning,
                    &e.message_id,
                    tag,
                    index,
                )?;
            }
            Event::ReasoningMessageContent(e) => {
                cont(
                    &run.reasoning_messages,
                    &run.reasoning_owners,
                    Item::Reasoning,
                    ty,
                    &e.message_id,
                    tag,
                    index,
                )?;
            }
            Event::ReasoningMessageEnd(e) => {
                cont(
                    &run.reasoning_messages,
                    &run.reasoning_owners,
                    Item::Reasoning,
                    ty,
                    &e.message_id,
                    tag,
                    index,
                )?;
                remove(&mut run.reasoning_messages, &e.message_id);
            }
            Event::ReasoningEncryptedValue(e) => {
                let (owner, what) = match e.subtype {
                    EncryptedSubtype::Message => (
                        run.message_owners
                            .get(&e.entity_id)
                            .or_else(|| run.reasoning_owners.get(&e.entity_id)),
                        "message",
                    ),
                    EncryptedSubtype::ToolCall => (run.tool_owners.get(&e.entity_id), "tool call"),
                };
                check_owner(owner, tag, ty, what, &e.entity_id, index)?;
            }
            Event::ActivitySnapshot(e) => {
                run.activity_owners
                    .insert(e.message_id.to_string(), tag.cloned());
            }
            Event::ActivityDelta(e) => check_owner(
                run.activity_owners.get(e.message_id.as_str()),
                tag,
                ty,
                "activity",
                &e.message_id,
                index,
            )?,
            Event::MessagesSnapshot(e) => {
                for message in &e.messages {
                    run.seed_message(message, true, known_tools);
                }
                run.saw_messages_snapshot = true;
            }
            Event::StateSnapshot(_) => run.saw_state_snapshot = true,
            Event::SubagentStarted(e) => {
                let id = &e.subagent_run_id;
                let err = |msg: String| {
                    Err(Violation::new(
                        "A2",
                        Some(index),
                        format!("Cannot send 'SUBAGENT_STARTED': {msg}"),
                    ))
                };
                if run.subagents.contains(id) {
                    return err(format!(
                        "subagent '{id}' is already active. Finish it with 'SUBAGENT_FINISHED' first."
                    ));
                }
                if run.closed_subagents.contains(id) {
                    return err(format!(
                        "subagent '{id}' has already finished in this run. Subagent IDs are per-invocation and cannot be reused."
                    ));
                }
                if let Some(parent) = &e.parent_subagent_run_id
                    && !run.subagents.contains(parent)
                    && !run.closed_subagents.contains(parent)
                {
                    return err(format!(
                        "parentSubagentRunId '{parent}' has not been started in this run."
                    ));
                }
                run.subagents.push(id.clone());
            }
            Event::SubagentFinished(_) | Event::SubagentError(_) => {
                let id = tag.cloned().unwrap_or_default();
                let Some(pos) = run.subagents.iter().position(|s| *s == id) else {
                    return Err(Violation::new(
                        "A3",
                        Some(index),
                        format!(
                            "Cannot send '{ty}': no active subagent found with ID '{id}'. A 'SUBAGENT_STARTED' event must be sent first."
                        ),
                    ));
                };
                run.subagents.remove(pos);
                run.closed_subagents.insert(id);
            }
            // A8: attribution on state, custom and raw events is provenance only.
            Event::StateDelta(_) | Event::Custom(_) | Event::Raw(_) => {}
            // Handled by `check`.
            Event::RunStarted(_)
            | Event::RunFinished(_)
            | Event::RunError(_)
            | Event::TextMessageChunk(_)
            | Event::ToolCallChunk(_)
            | Event::ReasoningMessageChunk(_) => {}
        }
        Ok(())
    }
}

/// The kinds of streamed item, for rule names and messages.
#[derive(Debug, Clone, Copy)]
enum Item {
    Text,
    Tool,
    Reasoning,
    Span,
}

impl Item {
    fn name(self) -> &'static str {
        match self {
            Item::Text => "text message",
            Item::Tool => "tool call",
            Item::Reasoning => "reasoning message",
            Item::Span => "reasoning span",
        }
    }
    fn start(self) -> &'static str {
        match self {
            Item::Text => "TEXT_MESSAGE_START",
            Item::Tool => "TOOL_CALL_START",
            Item::Reasoning => "REASONING_MESSAGE_START",
            Item::Span => "REASONING_START",
        }
    }
    fn end(self) -> &'static str {
        match self {
            Item::Text => "TEXT_MESSAGE_END",
            Item::Tool => "TOOL_CALL_END",
            Item::Reasoning => "REASONING_MESSAGE_END",
            Item::Span => "REASONING_END",
        }
    }
    /// (rule for a START of an open id, rule for a continuation without an open id)
    fn rules(self) -> (&'static str, &'static str) {
        match self {
            Item::Text => ("T1", "T2"),
            Item::Tool => ("C1", "C2"),
            Item::Reasoning | Item::Span => ("R1", "R2"),
        }
    }
    /// The owner noun used in ownership messages.
    fn owner_noun(self) -> &'static str {
        match self {
            Item::Text => "message",
            other => other.name(),
        }
    }
}

/// START: T1/C1/R1 (not already open) and A5 (a tagged reopen must agree with the first owner).
fn open(
    open: &mut Vec<String>,
    owners: &mut HashMap<String, Owner>,
    item: Item,
    id: &str,
    tag: Option<&SubagentRunId>,
    index: usize,
) -> Result<(), Violation> {
    if open.iter().any(|o| o == id) {
        return Err(Violation::new(
            item.rules().0,
            Some(index),
            format!(
                "Cannot send '{}' event: A {} with ID '{id}' is already in progress. Complete it with '{}' first.",
                item.start(),
                item.name(),
                item.end()
            ),
        ));
    }
    if let Some(t) = tag
        && let Some(owner) = owners.get(id).filter(|o| o.as_ref() != Some(t))
    {
        return Err(Violation::new(
            "A5",
            Some(index),
            format!(
                "Cannot send '{}': subagentRunId '{t}' does not match the {} '{id}' opener's subagent '{}'.",
                item.start(),
                item.owner_noun(),
                owner_name(owner)
            ),
        ));
    }
    owners.entry(id.to_owned()).or_insert_with(|| tag.cloned());
    open.push(id.to_owned());
    Ok(())
}

/// CONTENT/END: T2/C2/R2 (must be open) and A4 (a tagged continuation must agree with the owner).
fn cont(
    open: &[String],
    owners: &HashMap<String, Owner>,
    item: Item,
    ty: EventType,
    id: &str,
    tag: Option<&SubagentRunId>,
    index: usize,
) -> Result<(), Violation> {
    if !open.iter().any(|o| o == id) {
        return Err(Violation::new(
            item.rules().1,
            Some(index),
            format!(
                "Cannot send '{ty}' event: No active {} found with ID '{id}'. A '{}' event must be sent first.",
                item.name(),
                item.start()
            ),
        ));
    }
    check_owner(owners.get(id), tag, ty, item.owner_noun(), id, index)
}

/// A4: an untagged event is always accepted; a tagged one must match a known owner.
fn check_owner(
    owner: Option<&Owner>,
    tag: Option<&SubagentRunId>,
    ty: EventType,
    what: &str,
    id: &str,
    index: usize,
) -> Result<(), Violation> {
    match (owner, tag) {
        (Some(owner), Some(t)) if owner.as_ref() != Some(t) => Err(Violation::new(
            "A4",
            Some(index),
            format!(
                "Cannot send '{ty}': subagentRunId '{t}' does not match the {what} '{id}' opener's subagent '{}'.",
                owner_name(owner)
            ),
        )),
        _ => Ok(()),
    }
}

fn remove(open: &mut Vec<String>, id: &str) {
    open.retain(|o| o != id);
}

fn set_owner(bucket: &mut HashMap<String, Owner>, id: String, owner: Owner, overwrite: bool) {
    if overwrite {
        bucket.insert(id, owner);
    } else {
        bucket.entry(id).or_insert(owner);
    }
}

fn message_owner(message: &Message) -> Owner {
    match message {
        Message::Developer(m) | Message::System(m) => m.subagent_run_id.clone(),
        Message::Assistant(m) => m.subagent_run_id.clone(),
        Message::User(m) => m.subagent_run_id.clone(),
        Message::Tool(m) => m.subagent_run_id.clone(),
        Message::Activity(m) => m.subagent_run_id.clone(),
        Message::Reasoning(m) => m.subagent_run_id.clone(),
    }
}

fn owner_name(owner: &Owner) -> String {
    owner
        .as_ref()
        .map_or_else(|| "(the parent agent)".to_owned(), |s| s.to_string())
}

fn owner_label(owner: &Owner) -> String {
    owner.as_ref().map_or_else(
        || "the parent agent".to_owned(),
        |s| format!("subagent '{s}'"),
    )
}

fn step_label(owner: &Owner, name: &str) -> String {
    match owner {
        Some(s) => format!("{name} (subagent '{s}')"),
        None => name.to_owned(),
    }
}
