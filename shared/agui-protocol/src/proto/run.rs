//! Run-level messages: the echoed input of `RUN_STARTED`, interrupts and
//! token usage of `RUN_FINISHED`/`RUN_ERROR`.

use serde_json::Value as Json;

use super::common::Message;
use super::value::{Fields, Struct, Value};

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RunAgentInput {
    #[prost(string, tag = "1")]
    pub(crate) thread_id: String,
    #[prost(string, tag = "2")]
    pub(crate) run_id: String,
    #[prost(string, optional, tag = "3")]
    pub(crate) parent_run_id: Option<String>,
    #[prost(message, optional, tag = "4")]
    pub(crate) state: Option<Value>,
    #[prost(message, repeated, tag = "5")]
    pub(crate) messages: Vec<Message>,
    #[prost(message, repeated, tag = "6")]
    pub(crate) tools: Vec<Tool>,
    #[prost(message, repeated, tag = "7")]
    pub(crate) context: Vec<Context>,
    #[prost(message, optional, tag = "8")]
    pub(crate) forwarded_props: Option<Value>,
    #[prost(message, repeated, tag = "9")]
    pub(crate) resume: Vec<ResumeEntry>,
    #[prost(string, optional, tag = "10")]
    pub(crate) protocol_version: Option<String>,
}

impl RunAgentInput {
    pub(crate) fn from_json(json: &Json) -> Self {
        let f = Fields::of(json);
        RunAgentInput {
            thread_id: f.string("threadId"),
            run_id: f.string("runId"),
            parent_run_id: f.opt("parentRunId"),
            state: f.value("state"),
            messages: f.list("messages").iter().map(Message::from_json).collect(),
            tools: f.list("tools").iter().map(Tool::from_json).collect(),
            context: f.list("context").iter().map(Context::from_json).collect(),
            forwarded_props: f.value("forwardedProps"),
            resume: f
                .list("resume")
                .iter()
                .map(ResumeEntry::from_json)
                .collect(),
            protocol_version: f.opt("protocolVersion"),
        }
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Tool {
    #[prost(string, tag = "1")]
    pub(crate) name: String,
    #[prost(string, tag = "2")]
    pub(crate) description: String,
    #[prost(message, optional, tag = "3")]
    pub(crate) parameters: Option<Value>,
    #[prost(message, optional, tag = "4")]
    pub(crate) metadata: Option<Struct>,
}

impl Tool {
    fn from_json(json: &Json) -> Self {
        let f = Fields::of(json);
        Tool {
            name: f.string("name"),
            description: f.string("description"),
            parameters: f.value("parameters"),
            metadata: f.object("metadata"),
        }
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Context {
    #[prost(string, tag = "1")]
    pub(crate) description: String,
    #[prost(string, tag = "2")]
    pub(crate) value: String,
}

impl Context {
    fn from_json(json: &Json) -> Self {
        let f = Fields::of(json);
        Context {
            description: f.string("description"),
            value: f.string("value"),
        }
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ResumeEntry {
    #[prost(string, tag = "1")]
    pub(crate) interrupt_id: String,
    #[prost(string, tag = "2")]
    pub(crate) status: String,
    #[prost(message, optional, tag = "3")]
    pub(crate) payload: Option<Value>,
    #[prost(message, optional, tag = "4")]
    pub(crate) metadata: Option<Struct>,
}

impl ResumeEntry {
    fn from_json(json: &Json) -> Self {
        let f = Fields::of(json);
        ResumeEntry {
            interrupt_id: f.string("interruptId"),
            status: f.string("status"),
            payload: f.value("payload"),
            metadata: f.object("metadata"),
        }
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Interrupt {
    #[prost(string, tag = "1")]
    pub(crate) id: String,
    #[prost(string, tag = "2")]
    pub(crate) reason: String,
    #[prost(string, optional, tag = "3")]
    pub(crate) message: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub(crate) tool_call_id: Option<String>,
    #[prost(message, optional, tag = "5")]
    pub(crate) response_schema: Option<Value>,
    #[prost(string, optional, tag = "6")]
    pub(crate) expires_at: Option<String>,
    /// A `Value` here, unlike the `Struct` metadata elsewhere.
    #[prost(message, optional, tag = "7")]
    pub(crate) metadata: Option<Value>,
    #[prost(string, optional, tag = "8")]
    pub(crate) subagent_run_id: Option<String>,
}

impl Interrupt {
    pub(crate) fn from_json(json: &Json) -> Self {
        let f = Fields::of(json);
        Interrupt {
            id: f.string("id"),
            reason: f.string("reason"),
            message: f.opt("message"),
            tool_call_id: f.opt("toolCallId"),
            response_schema: f.value("responseSchema"),
            expires_at: f.opt("expiresAt"),
            metadata: f.value("metadata"),
            subagent_run_id: f.opt("subagentRunId"),
        }
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Usage {
    #[prost(string, optional, tag = "1")]
    pub(crate) provider: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub(crate) model: Option<String>,
    #[prost(int64, optional, tag = "3")]
    pub(crate) input_tokens: Option<i64>,
    #[prost(int64, optional, tag = "4")]
    pub(crate) output_tokens: Option<i64>,
    #[prost(int64, optional, tag = "5")]
    pub(crate) total_tokens: Option<i64>,
    #[prost(int64, optional, tag = "6")]
    pub(crate) reasoning_tokens: Option<i64>,
    #[prost(int64, optional, tag = "7")]
    pub(crate) cached_input_tokens: Option<i64>,
    #[prost(int64, optional, tag = "8")]
    pub(crate) cache_write_input_tokens: Option<i64>,
}

impl Usage {
    pub(crate) fn list(f: Fields<'_>) -> Vec<Usage> {
        f.list("usage")
            .iter()
            .map(|u| {
                let u = Fields::of(u);
                Usage {
                    provider: u.opt("provider"),
                    model: u.opt("model"),
                    input_tokens: u.int64("inputTokens"),
                    output_tokens: u.int64("outputTokens"),
                    total_tokens: u.int64("totalTokens"),
                    reasoning_tokens: u.int64("reasoningTokens"),
                    cached_input_tokens: u.int64("cachedInputTokens"),
                    cache_write_input_tokens: u.int64("cacheWriteInputTokens"),
                }
            })
            .collect()
    }
}
