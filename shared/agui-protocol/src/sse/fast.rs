//! SSE frames written without going through serde for the events that dominate a
//! stream (text and tool-argument deltas, state deltas and snapshots, lifecycle
//! events). The output is byte-identical to `serde_json::to_writer(event)` — field
//! order, skipped `None`s, the flattened envelope last — which `tests::*` and the
//! byte-identity check against the official encoder pin. Every other event (and
//! any shape with open extra members) goes through serde.

use super::json::{Sink, array, optional_object, optional_string, str_body, string, uint, value};
use super::message::message;
use crate::event::{EventBase, TextRole};
use crate::ids::SubagentRunId;
use crate::message::Content;
use crate::{Event, Interrupt, PatchOp, RunFinishedOutcome};

/// `[id: <id>\n]data: <json>\n\n`.
pub(super) fn frame<S: Sink>(out: &mut S, id: Option<u64>, event: &Event) {
    if let Some(id) = id {
        out.put(b"id: ");
        uint(out, id);
        out.put(b"\n");
    }
    out.put(b"data: ");
    json(out, event);
    out.put(b"\n\n");
}

/// The event as compact JSON.
pub(super) fn json<S: Sink>(out: &mut S, event: &Event) {
    match event {
        Event::TextMessageContent(e) => {
            out.put(b"{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"");
            str_body(out, e.message_id.as_str());
            out.put(b"\",\"delta\":\"");
            str_body(out, &e.delta);
            out.put(b"\"");
            tail(out, e.subagent_run_id.as_ref(), &e.base);
        }
        Event::ToolCallArgs(e) => {
            out.put(b"{\"type\":\"TOOL_CALL_ARGS\",\"toolCallId\":\"");
            str_body(out, e.tool_call_id.as_str());
            out.put(b"\",\"delta\":\"");
            str_body(out, &e.delta);
            out.put(b"\"");
            tail(out, e.subagent_run_id.as_ref(), &e.base);
        }
        Event::StateDelta(e) if e.delta.iter().all(plain_op) => {
            out.put(b"{\"type\":\"STATE_DELTA\",\"delta\":");
            array(out, &e.delta, patch_op);
            tail(out, e.subagent_run_id.as_ref(), &e.base);
        }
        Event::StateSnapshot(e) => {
            out.put(b"{\"type\":\"STATE_SNAPSHOT\",\"snapshot\":");
            value(out, &e.snapshot);
            tail(out, e.subagent_run_id.as_ref(), &e.base);
        }
        Event::TextMessageStart(e) => {
            out.put(b"{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"");
            str_body(out, e.message_id.as_str());
            out.put(b"\"");
            if let Some(role) = e.role {
                out.put(b",\"role\":");
                out.put(text_role(role));
            }
            optional_string(out, b",\"name\":", e.name.as_deref());
            tail(out, e.subagent_run_id.as_ref(), &e.base);
        }
        Event::TextMessageEnd(e) => {
            out.put(b"{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"");
            str_body(out, e.message_id.as_str());
            out.put(b"\"");
            tail(out, e.subagent_run_id.as_ref(), &e.base);
        }
        Event::ToolCallStart(e) => {
            out.put(b"{\"type\":\"TOOL_CALL_START\",\"toolCallId\":\"");
            str_body(out, e.tool_call_id.as_str());
            out.put(b"\",\"toolCallName\":\"");
            str_body(out, &e.tool_call_name);
            out.put(b"\"");
            optional_string(
                out,
                b",\"parentMessageId\":",
                e.parent_message_id.as_ref().map(|p| p.as_str()),
            );
            tail(out, e.subagent_run_id.as_ref(), &e.base);
        }
        Event::ToolCallEnd(e) => {
            out.put(b"{\"type\":\"TOOL_CALL_END\",\"toolCallId\":\"");
            str_body(out, e.tool_call_id.as_str());
            out.put(b"\"");
            tail(out, e.subagent_run_id.as_ref(), &e.base);
        }
        Event::ToolCallResult(e) if matches!(e.content, Content::Text(_)) => {
            out.put(b"{\"type\":\"TOOL_CALL_RESULT\",\"messageId\":\"");
            str_body(out, e.message_id.as_str());
            out.put(b"\",\"toolCallId\":\"");
            str_body(out, e.tool_call_id.as_str());
            out.put(b"\",\"content\":");
            if let Content::Text(text) = &e.content {
                string(out, text);
            }
            if e.role.is_some() {
                out.put(b",\"role\":\"tool\"");
            }
            tail(out, e.subagent_run_id.as_ref(), &e.base);
        }
        Event::StepStarted(e) => {
            out.put(b"{\"type\":\"STEP_STARTED\",\"stepName\":");
            string(out, &e.step_name);
            tail(out, e.subagent_run_id.as_ref(), &e.base);
        }
        Event::StepFinished(e) => {
            out.put(b"{\"type\":\"STEP_FINISHED\",\"stepName\":");
            string(out, &e.step_name);
            tail(out, e.subagent_run_id.as_ref(), &e.base);
        }
        Event::Custom(e) => {
            out.put(b"{\"type\":\"CUSTOM\",\"name\":");
            string(out, &e.name);
            out.put(b",\"value\":");
            value(out, &e.value);
            tail(out, e.subagent_run_id.as_ref(), &e.base);
        }
        Event::RunStarted(e) if e.input.is_none() => {
            out.put(b"{\"type\":\"RUN_STARTED\",\"threadId\":\"");
            str_body(out, e.thread_id.as_str());
            out.put(b"\",\"runId\":\"");
            str_body(out, e.run_id.as_str());
            out.put(b"\"");
            if let Some(version) = &e.protocol_version {
                out.put(b",\"protocolVersion\":");
                string(out, version);
            }
            if let Some(parent) = &e.parent_run_id {
                out.put(b",\"parentRunId\":");
                string(out, parent.as_str());
            }
            tail(out, None, &e.base);
        }
        Event::RunFinished(e) if e.usage.is_none() => {
            out.put(b"{\"type\":\"RUN_FINISHED\",\"threadId\":\"");
            str_body(out, e.thread_id.as_str());
            out.put(b"\",\"runId\":\"");
            str_body(out, e.run_id.as_str());
            out.put(b"\"");
            if let Some(result) = &e.result {
                out.put(b",\"result\":");
                value(out, result);
            }
            if let Some(outcome) = &e.outcome {
                out.put(b",\"outcome\":");
                run_outcome(out, outcome);
            }
            tail(out, None, &e.base);
        }
        Event::MessagesSnapshot(e) => {
            out.put(b"{\"type\":\"MESSAGES_SNAPSHOT\",\"messages\":");
            array(out, &e.messages, message);
            tail(out, None, &e.base);
        }
        other => out.put_serde(other),
    }
}

/// `RUN_FINISHED.outcome`, tag first as serde's internally tagged enum writes it.
fn run_outcome<S: Sink>(out: &mut S, outcome: &RunFinishedOutcome) {
    match outcome {
        RunFinishedOutcome::Success {
            pending_tool_call_ids,
        } => {
            out.put(b"{\"type\":\"success\"");
            if let Some(ids) = pending_tool_call_ids {
                out.put(b",\"pendingToolCallIds\":");
                array(out, ids, |out, id| string(out, id.as_str()));
            }
            out.put(b"}");
        }
        RunFinishedOutcome::Interrupt { interrupts } => {
            out.put(b"{\"type\":\"interrupt\",\"interrupts\":");
            array(out, interrupts, interrupt_json);
            out.put(b"}");
        }
        RunFinishedOutcome::Cancelled => out.put(b"{\"type\":\"cancelled\"}"),
    }
}

fn interrupt_json<S: Sink>(out: &mut S, interrupt: &Interrupt) {
    // Every field named: a new one stops the build until it is written here.
    let Interrupt {
        id,
        reason,
        message,
        tool_call_id,
        response_schema,
        expires_at,
        metadata,
        subagent_run_id,
    } = interrupt;
    out.put(b"{\"id\":");
    string(out, id.as_str());
    out.put(b",\"reason\":");
    string(out, reason);
    optional_string(out, b",\"message\":", message.as_deref());
    optional_string(
        out,
        b",\"toolCallId\":",
        tool_call_id.as_ref().map(|c| c.as_str()),
    );
    if let Some(schema) = response_schema {
        out.put(b",\"responseSchema\":");
        value(out, schema);
    }
    optional_string(out, b",\"expiresAt\":", expires_at.as_deref());
    optional_object(out, b",\"metadata\":", metadata.as_ref());
    optional_string(
        out,
        b",\"subagentRunId\":",
        subagent_run_id.as_ref().map(SubagentRunId::as_str),
    );
    out.put(b"}");
}

/// `,"subagentRunId":…`, the flattened envelope, and the closing brace.
#[inline]
fn tail<S: Sink>(out: &mut S, subagent: Option<&SubagentRunId>, base: &EventBase) {
    optional_string(
        out,
        b",\"subagentRunId\":",
        subagent.map(SubagentRunId::as_str),
    );
    if let Some(ts) = base.timestamp {
        out.put(b",\"timestamp\":");
        uint(out, ts);
    }
    if let Some(raw) = &base.raw_event {
        out.put(b",\"rawEvent\":");
        value(out, raw);
    }
    optional_object(out, b",\"metadata\":", base.metadata.as_ref());
    out.put(b"}");
}

fn text_role(role: TextRole) -> &'static [u8] {
    match role {
        TextRole::Developer => b"\"developer\"",
        TextRole::System => b"\"system\"",
        TextRole::Assistant => b"\"assistant\"",
        TextRole::User => b"\"user\"",
    }
}

/// An operation without extra members (those keep serde's flattening rules).
fn plain_op(op: &PatchOp) -> bool {
    match op {
        PatchOp::Add { extra, .. }
        | PatchOp::Remove { extra, .. }
        | PatchOp::Replace { extra, .. }
        | PatchOp::Move { extra, .. }
        | PatchOp::Copy { extra, .. }
        | PatchOp::Test { extra, .. } => extra.is_empty(),
    }
}

fn patch_op<S: Sink>(out: &mut S, op: &PatchOp) {
    let (name, from, path, val): (&[u8], _, _, _) = match op {
        PatchOp::Add { path, value, .. } => (b"add", None, path, Some(value)),
        PatchOp::Remove { path, .. } => (b"remove", None, path, None),
        PatchOp::Replace { path, value, .. } => (b"replace", None, path, Some(value)),
        PatchOp::Move { from, path, .. } => (b"move", Some(from), path, None),
        PatchOp::Copy { from, path, .. } => (b"copy", Some(from), path, None),
        PatchOp::Test { path, value, .. } => (b"test", None, path, Some(value)),
    };
    out.put(b"{\"op\":\"");
    out.put(name);
    out.put(b"\"");
    if let Some(from) = from {
        out.put(b",\"from\":");
        string(out, from);
    }
    out.put(b",\"path\":");
    string(out, path);
    if let Some(v) = val {
        out.put(b",\"value\":");
        value(out, v);
    }
    out.put(b"}");
}

/// A compile-time guard, never called: these patterns name every field of the events
/// written above, so a field added to one of them stops the build until `json` writes it.
#[allow(dead_code)]
fn every_field_written(event: &Event) {
    use crate::event::{
        Custom, RunFinished, RunStarted, StateDelta, StateSnapshot, StepFinished, StepStarted,
        TextMessageContent, TextMessageEnd, TextMessageStart, ToolCallArgs, ToolCallEnd,
        ToolCallResult, ToolCallStart,
    };
    let EventBase {
        timestamp: _,
        raw_event: _,
        metadata: _,
    } = match event {
        Event::TextMessageContent(TextMessageContent {
            message_id: _,
            delta: _,
            subagent_run_id: _,
            base,
        }) => base,
        Event::ToolCallArgs(ToolCallArgs {
            tool_call_id: _,
            delta: _,
            subagent_run_id: _,
            base,
        }) => base,
        Event::StateDelta(StateDelta {
            delta: _,
            subagent_run_id: _,
            base,
        }) => base,
        Event::StateSnapshot(StateSnapshot {
            snapshot: _,
            subagent_run_id: _,
            base,
        }) => base,
        Event::TextMessageStart(TextMessageStart {
            message_id: _,
            role: _,
            name: _,
            subagent_run_id: _,
            base,
        }) => base,
        Event::TextMessageEnd(TextMessageEnd {
            message_id: _,
            subagent_run_id: _,
            base,
        }) => base,
        Event::ToolCallStart(ToolCallStart {
            tool_call_id: _,
            tool_call_name: _,
            parent_message_id: _,
            subagent_run_id: _,
            base,
        }) => base,
        Event::ToolCallEnd(ToolCallEnd {
            tool_call_id: _,
            subagent_run_id: _,
            base,
        }) => base,
        Event::ToolCallResult(ToolCallResult {
            message_id: _,
            tool_call_id: _,
            content: _,
            role: _,
            subagent_run_id: _,
            base,
        }) => base,
        Event::StepStarted(StepStarted {
            step_name: _,
            subagent_run_id: _,
            base,
        }) => base,
        Event::StepFinished(StepFinished {
            step_name: _,
            subagent_run_id: _,
            base,
        }) => base,
        Event::Custom(Custom {
            name: _,
            value: _,
            subagent_run_id: _,
            base,
        }) => base,
        Event::RunStarted(RunStarted {
            thread_id: _,
            run_id: _,
            protocol_version: _,
            parent_run_id: _,
            input: _,
            base,
        }) => base,
        Event::RunFinished(RunFinished {
            thread_id: _,
            run_id: _,
            result: _,
            outcome: _,
            usage: _,
            base,
        }) => base,
        _ => return,
    };
}
