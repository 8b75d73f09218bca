//! Subagent, raw and custom events (`events.proto`).

use super::BaseEvent;
use super::value::{Fields, Value};

/// `RAW` (field 2 `event`, 3 `source`) and `CUSTOM` (2 `name`, 3 `value`)
/// differ in field order, so each has its own message.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Raw {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(message, optional, tag = "2")]
    pub(crate) event: Option<Value>,
    #[prost(string, optional, tag = "3")]
    pub(crate) source: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub(crate) subagent_run_id: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Custom {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, tag = "2")]
    pub(crate) name: String,
    #[prost(message, optional, tag = "3")]
    pub(crate) value: Option<Value>,
    #[prost(string, optional, tag = "4")]
    pub(crate) subagent_run_id: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SubagentStarted {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, tag = "2")]
    pub(crate) subagent_run_id: String,
    #[prost(string, tag = "3")]
    pub(crate) name: String,
    #[prost(string, optional, tag = "4")]
    pub(crate) description: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub(crate) parent_subagent_run_id: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub(crate) parent_tool_call_id: Option<String>,
    #[prost(string, optional, tag = "7")]
    pub(crate) parent_message_id: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SubagentFinished {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, tag = "2")]
    pub(crate) subagent_run_id: String,
    #[prost(message, optional, tag = "3")]
    pub(crate) result: Option<Value>,
    #[prost(string, tag = "4")]
    pub(crate) outcome: String,
    #[prost(string, repeated, tag = "5")]
    pub(crate) interrupt_ids: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SubagentError {
    #[prost(message, optional, tag = "1")]
    pub(crate) base_event: Option<BaseEvent>,
    #[prost(string, tag = "2")]
    pub(crate) subagent_run_id: String,
    #[prost(string, tag = "3")]
    pub(crate) message: String,
    #[prost(string, optional, tag = "4")]
    pub(crate) code: Option<String>,
}

pub(crate) fn raw(base: BaseEvent, f: Fields<'_>) -> Raw {
    Raw {
        base_event: Some(base),
        event: f.payload("event"),
        source: f.opt("source"),
        subagent_run_id: f.opt("subagentRunId"),
    }
}

pub(crate) fn custom(base: BaseEvent, f: Fields<'_>) -> Custom {
    Custom {
        base_event: Some(base),
        name: f.string("name"),
        value: f.payload("value"),
        subagent_run_id: f.opt("subagentRunId"),
    }
}

pub(crate) fn subagent_started(base: BaseEvent, f: Fields<'_>) -> SubagentStarted {
    SubagentStarted {
        base_event: Some(base),
        subagent_run_id: f.string("subagentRunId"),
        name: f.string("name"),
        description: f.opt("description"),
        parent_subagent_run_id: f.opt("parentSubagentRunId"),
        parent_tool_call_id: f.opt("parentToolCallId"),
        parent_message_id: f.opt("parentMessageId"),
    }
}

pub(crate) fn subagent_finished(base: BaseEvent, f: Fields<'_>) -> SubagentFinished {
    let outcome = f.nested("outcome");
    let kind = outcome.string("type");
    let interrupt_ids = match kind.as_str() {
        "suspended" => outcome.strings("interruptIds"),
        _ => Vec::new(),
    };
    SubagentFinished {
        base_event: Some(base),
        subagent_run_id: f.string("subagentRunId"),
        result: f.value("result"),
        outcome: kind,
        interrupt_ids,
    }
}

pub(crate) fn subagent_error(base: BaseEvent, f: Fields<'_>) -> SubagentError {
    SubagentError {
        base_event: Some(base),
        subagent_run_id: f.string("subagentRunId"),
        message: f.string("message"),
        code: f.opt("code"),
    }
}
