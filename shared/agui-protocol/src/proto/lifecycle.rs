//! Run, step, state, messages and activity events (`events.proto`).

use super::BaseEvent;
use super::common::{JsonPatchOperation, Message};
use super::run::{Interrupt, RunAgentInput, Usage};
use super::value::{Fields, Struct, Value};

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RunStarted {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, tag = "2")]
    pub(crate) thread_id: String,
    #[prost(string, tag = "3")]
    pub(crate) run_id: String,
    #[prost(string, optional, tag = "4")]
    pub(crate) parent_run_id: Option<String>,
    #[prost(message, optional, tag = "5")]
    pub(crate) input: Option<RunAgentInput>,
    #[prost(string, optional, tag = "6")]
    pub(crate) protocol_version: Option<String>,
}

/// The outcome object is flattened: its `type` string, then the interrupts
/// or pending calls it carried.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RunFinished {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, tag = "2")]
    pub(crate) thread_id: String,
    #[prost(string, tag = "3")]
    pub(crate) run_id: String,
    #[prost(message, optional, tag = "4")]
    pub(crate) result: Option<Value>,
    #[prost(string, tag = "5")]
    pub(crate) outcome: String,
    #[prost(message, repeated, tag = "6")]
    pub(crate) interrupts: Vec<Interrupt>,
    #[prost(message, repeated, tag = "7")]
    pub(crate) usage: Vec<Usage>,
    #[prost(string, repeated, tag = "8")]
    pub(crate) pending_tool_call_ids: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RunError {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, optional, tag = "2")]
    pub(crate) code: Option<String>,
    #[prost(string, tag = "3")]
    pub(crate) message: String,
    #[prost(message, repeated, tag = "4")]
    pub(crate) usage: Vec<Usage>,
}

/// `STEP_STARTED` and `STEP_FINISHED`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Step {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, tag = "2")]
    pub(crate) step_name: String,
    #[prost(string, optional, tag = "3")]
    pub(crate) subagent_run_id: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct StateSnapshot {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(message, optional, tag = "2")]
    pub(crate) snapshot: Option<Value>,
    #[prost(string, optional, tag = "3")]
    pub(crate) subagent_run_id: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct StateDelta {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) delta: Vec<JsonPatchOperation>,
    #[prost(string, optional, tag = "3")]
    pub(crate) subagent_run_id: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct MessagesSnapshot {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) messages: Vec<Message>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ActivitySnapshot {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, optional, tag = "2")]
    pub(crate) subagent_run_id: Option<String>,
    #[prost(string, tag = "3")]
    pub(crate) message_id: String,
    #[prost(string, tag = "4")]
    pub(crate) activity_type: String,
    #[prost(message, optional, tag = "5")]
    pub(crate) content: Option<Struct>,
    #[prost(bool, optional, tag = "6")]
    pub(crate) replace: Option<bool>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ActivityDelta {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, optional, tag = "2")]
    pub(crate) subagent_run_id: Option<String>,
    #[prost(string, tag = "3")]
    pub(crate) message_id: String,
    #[prost(string, tag = "4")]
    pub(crate) activity_type: String,
    #[prost(message, repeated, tag = "5")]
    pub(crate) patch: Vec<JsonPatchOperation>,
}

pub(crate) fn run_started(base: BaseEvent, f: Fields<'_>) -> RunStarted {
    RunStarted {
        base_event: Some(base),
        thread_id: f.string("threadId"),
        run_id: f.string("runId"),
        parent_run_id: f.opt("parentRunId"),
        input: f.get("input").map(RunAgentInput::from_json),
        protocol_version: f.opt("protocolVersion"),
    }
}

pub(crate) fn run_finished(base: BaseEvent, f: Fields<'_>) -> RunFinished {
    let outcome = f.nested("outcome");
    let kind = outcome.string("type");
    let (interrupts, pending) = match kind.as_str() {
        "interrupt" => (outcome.list("interrupts"), Vec::new()),
        "success" => (&[][..], outcome.strings("pendingToolCallIds")),
        _ => (&[][..], Vec::new()),
    };
    RunFinished {
        base_event: Some(base),
        thread_id: f.string("threadId"),
        run_id: f.string("runId"),
        result: f.value("result"),
        outcome: kind,
        interrupts: interrupts.iter().map(Interrupt::from_json).collect(),
        usage: Usage::list(f),
        pending_tool_call_ids: pending,
    }
}

pub(crate) fn run_error(base: BaseEvent, f: Fields<'_>) -> RunError {
    RunError {
        base_event: Some(base),
        code: f.opt("code"),
        message: f.string("message"),
        usage: Usage::list(f),
    }
}

pub(crate) fn step(base: BaseEvent, f: Fields<'_>) -> Step {
    Step {
        base_event: Some(base),
        step_name: f.string("stepName"),
        subagent_run_id: f.opt("subagentRunId"),
    }
}

pub(crate) fn state_snapshot(base: BaseEvent, f: Fields<'_>) -> StateSnapshot {
    StateSnapshot {
        base_event: Some(base),
        snapshot: f.payload("snapshot"),
        subagent_run_id: f.opt("subagentRunId"),
    }
}

pub(crate) fn state_delta(base: BaseEvent, f: Fields<'_>) -> StateDelta {
    StateDelta {
        base_event: Some(base),
        delta: patch(f, "delta"),
        subagent_run_id: f.opt("subagentRunId"),
    }
}

pub(crate) fn messages_snapshot(base: BaseEvent, f: Fields<'_>) -> MessagesSnapshot {
    MessagesSnapshot {
        base_event: Some(base),
        messages: f.list("messages").iter().map(Message::from_json).collect(),
    }
}

pub(crate) fn activity_snapshot(base: BaseEvent, f: Fields<'_>) -> ActivitySnapshot {
    ActivitySnapshot {
        base_event: Some(base),
        subagent_run_id: f.opt("subagentRunId"),
        message_id: f.string("messageId"),
        activity_type: f.string("activityType"),
        content: f.get("content").map(Struct::from_json),
        replace: f.bool("replace"),
    }
}

pub(crate) fn activity_delta(base: BaseEvent, f: Fields<'_>) -> ActivityDelta {
    ActivityDelta {
        base_event: Some(base),
        subagent_run_id: f.opt("subagentRunId"),
        message_id: f.string("messageId"),
        activity_type: f.string("activityType"),
        patch: patch(f, "patch"),
    }
}

fn patch(f: Fields<'_>, key: &str) -> Vec<JsonPatchOperation> {
    f.list(key)
        .iter()
        .map(JsonPatchOperation::from_json)
        .collect()
}
