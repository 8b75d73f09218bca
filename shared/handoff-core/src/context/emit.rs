//! Typed helpers so agent code never writes event JSON by hand.

use agui_protocol::event::{
    ActivityDelta, ActivitySnapshot, Custom, MessagesSnapshot, ReasoningEnd,
    ReasoningMessageContent, ReasoningMessageEnd, ReasoningMessageStart, ReasoningStart,
    StateDelta, StateSnapshot, StepFinished, StepStarted, SubagentFinished, SubagentStarted,
    TextMessageContent, TextMessageEnd, TextMessageStart, ToolCallArgs, ToolCallEnd,
    ToolCallResult, ToolCallStart,
};
use agui_protocol::{
    Content, Message, MessageId, PatchOp, SubagentOutcome, SubagentRunId, ToolCallId,
};
use serde_json::{Map, Value};

use super::RunContext;
use super::state::apply_patch;
use crate::error::AgentError;

impl RunContext {
    /// Opens an assistant text message and returns its id.
    pub fn text_start(&mut self) -> MessageId {
        let id = MessageId::new(self.new_id("msg"));
        self.emit(TextMessageStart::new(id.clone()));
        id
    }
    /// Appends to an open text message.
    pub fn text_delta(&mut self, id: &MessageId, delta: &str) {
        self.emit(TextMessageContent::new(id.clone(), delta));
    }
    /// Closes a text message.
    pub fn text_end(&mut self, id: &MessageId) {
        self.emit(TextMessageEnd::new(id.clone()));
    }
    /// A whole assistant message in one go (START, CONTENT, END).
    pub fn say(&mut self, text: &str) -> MessageId {
        let id = self.text_start();
        self.text_delta(&id, text);
        self.text_end(&id);
        id
    }

    /// A reasoning span with one reasoning message (START, MESSAGE_*, END).
    pub fn think(&mut self, text: &str) -> MessageId {
        let span = MessageId::new(self.new_id("reasoning"));
        let id = MessageId::new(self.new_id("msg"));
        self.emit(ReasoningStart::new(span.clone()));
        self.emit(ReasoningMessageStart::new(id.clone()));
        self.emit(ReasoningMessageContent::new(id.clone(), text));
        self.emit(ReasoningMessageEnd::new(id.clone()));
        self.emit(ReasoningEnd::new(span));
        id
    }

    /// Opens a tool call; stream its arguments with [`RunContext::tool_call_args`].
    pub fn tool_call_start(&mut self, name: &str, parent: Option<&MessageId>) -> ToolCallId {
        let id = ToolCallId::new(self.new_id("tc"));
        let mut start = ToolCallStart::new(id.clone(), name);
        start.parent_message_id = parent.cloned();
        self.emit(start);
        id
    }
    /// Appends a fragment of the argument text.
    pub fn tool_call_args(&mut self, id: &ToolCallId, delta: &str) {
        self.emit(ToolCallArgs::new(id.clone(), delta));
    }
    /// Closes a tool call (arguments complete).
    pub fn tool_call_end(&mut self, id: &ToolCallId) {
        self.emit(ToolCallEnd::new(id.clone()));
    }
    /// A whole tool call with JSON arguments (START, ARGS, END).
    pub fn tool_call(&mut self, name: &str, args: &Value) -> ToolCallId {
        let id = self.tool_call_start(name, None);
        // serde_json's writer, not `Display`: the same compact text without the formatter.
        let args = serde_json::to_string(args).unwrap_or_default();
        self.tool_call_args(&id, &args);
        self.tool_call_end(&id);
        id
    }
    /// The result of a backend-executed call; returns the tool message id.
    pub fn tool_result(&mut self, id: &ToolCallId, content: impl Into<Content>) -> MessageId {
        let message_id = MessageId::new(self.new_id("msg"));
        self.emit(ToolCallResult::new(message_id.clone(), id.clone(), content));
        message_id
    }

    /// The result of a backend-executed call that failed (e.g. an MCP `isError` result):
    /// `TOOL_CALL_RESULT` with `content`, then the tool message's `error`. AG-UI 1.0's
    /// `TOOL_CALL_RESULT` has no `error` field, so a `MESSAGES_SNAPSHOT` follows with the
    /// message's `error` set: the client's copy of the conversation (which it resends)
    /// stays the one the thread stores. Returns the tool message id.
    pub fn tool_error(
        &mut self,
        id: &ToolCallId,
        content: impl Into<Content>,
        error: &str,
    ) -> MessageId {
        let message_id = self.tool_result(id, content);
        let mut messages = self.messages().to_vec();
        let failed = messages.iter_mut().rev().find_map(|m| match m {
            Message::Tool(tool) if tool.id == message_id => Some(tool),
            _ => None,
        });
        if let Some(tool) = failed {
            tool.error = Some(error.to_owned());
        }
        self.emit(MessagesSnapshot::new(messages));
        message_id
    }

    /// Opens a named step.
    pub fn step_start(&mut self, name: &str) {
        self.emit(StepStarted::new(name));
    }
    /// Closes a named step.
    pub fn step_end(&mut self, name: &str) {
        self.emit(StepFinished::new(name));
    }

    /// Replaces the shared state and emits `STATE_SNAPSHOT`.
    pub fn set_state(&mut self, state: Value) {
        self.state = state.clone();
        self.emit(StateSnapshot::new(state));
    }
    /// Applies a JSON Patch to the authoritative state and emits `STATE_DELTA`.
    /// A patch that does not apply changes nothing and emits nothing.
    pub fn patch_state(&mut self, ops: Vec<PatchOp>) -> Result<(), AgentError> {
        apply_patch(&mut self.state, &ops)
            .map_err(|e| AgentError(format!("state patch failed: {e}")))?;
        self.emit(StateDelta::new(ops));
        Ok(())
    }

    /// Creates or replaces an activity message; returns its id.
    pub fn activity(&mut self, activity_type: &str, content: Map<String, Value>) -> MessageId {
        let id = MessageId::new(self.new_id("activity"));
        self.emit(ActivitySnapshot::new(id.clone(), activity_type, content));
        id
    }
    /// Patches an activity message.
    pub fn activity_patch(&mut self, id: &MessageId, activity_type: &str, ops: Vec<PatchOp>) {
        self.emit(ActivityDelta::new(id.clone(), activity_type, ops));
    }

    /// Starts a subagent invocation; tag its events with the returned id.
    pub fn subagent_start(&mut self, name: &str, description: Option<&str>) -> SubagentRunId {
        let id = SubagentRunId::new(self.new_id("sub"));
        let mut start = SubagentStarted::new(id.clone(), name);
        start.description = description.map(str::to_owned);
        self.emit(start);
        id
    }
    /// Finishes a subagent invocation (`Suspended` when it raised interrupts).
    pub fn subagent_finish(&mut self, id: &SubagentRunId, outcome: Option<SubagentOutcome>) {
        let mut finish = SubagentFinished::new(id.clone());
        finish.outcome = outcome;
        self.emit(finish);
    }

    /// An application event; names should be vendor-prefixed.
    pub fn custom(&mut self, name: &str, value: Value) {
        self.emit(Custom::new(name, value));
    }
}
