//! A2UI, Superagent Base's named-SSE encoding, as an alternative rendering of AG-UI runs.
//!
//! Every frame is `event: <type>\ndata: {"type","timestamp","data"}\n\n`. The
//! [`A2uiEncoder`] is stateful: it accumulates text and reasoning so `text` and
//! `thinking` frames carry the full `content` along with the `delta`, collects
//! streamed tool arguments into one `tool_call` frame, and splits fenced code
//! out of text into `code_block` frames.
//!
//! | AG-UI event | A2UI frame |
//! |---|---|
//! | `TEXT_MESSAGE_CONTENT` (outside a code fence) | `text {content, delta}` |
//! | `TEXT_MESSAGE_CONTENT` (inside a ```` ```lang ```` fence) | `code_block {language, code, delta}` |
//! | `REASONING_MESSAGE_CONTENT` | `thinking {content, delta}` |
//! | `TOOL_CALL_END` (after START/ARGS) | `tool_call {id, name, arguments, status:"calling"}` |
//! | `TOOL_CALL_RESULT` | `tool_result {id, name, result, is_error:false}` |
//! | `RUN_FINISHED` with interrupts | one `interrupt {id, reason, fields}` per interrupt, then `done` |
//! | `RUN_FINISHED` (success, cancelled) | `done` (`data: null`) |
//! | `RUN_ERROR` | `error {code, message}` then `done` |
//! | `STEP_STARTED` | `progress {agent_name, step, current[, total]}` |
//! | `SUBAGENT_STARTED` / `SUBAGENT_FINISHED` / `SUBAGENT_ERROR` | `agent_switch {from_agent, to_agent, reason}` |
//! | everything else | nothing (A2UI has no frame for it) |
//!
//! Interrupt `fields` come from the interrupt's `responseSchema`: a boolean
//! property is a `confirm` field, a property with `enum` a `select` with
//! `options`, anything else `text`; `required` follows the schema. An interrupt
//! without a schema gets one required `confirm` field.
//!
//! [`A2uiEncoder::encode_legacy`] is the compatible mode used when A2UI is not requested:
//! `data: <raw text>` for text, `data: [DONE]` at the end, and
//! `data: {"type","data"}` JSON for the other frame types.

mod code;
mod fields;

use bytes::{BufMut, Bytes, BytesMut};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

use crate::Event;
use crate::ids::{MessageId, ToolCallId};
use crate::interrupt::RunFinishedOutcome;

pub use fields::{InterruptField, fields_from_schema};

/// Header that selects A2UI framing (`X-A2UI: true`).
pub const HEADER: &str = "x-a2ui";
/// Query parameter that selects A2UI framing (`?a2ui=true`).
pub const QUERY_PARAM: &str = "a2ui";

/// Whether a request asks for A2UI: header `X-A2UI: true` or query `a2ui=true`.
///
/// ```
/// assert!(agui_protocol::a2ui::requested(Some("true"), None));
/// assert!(agui_protocol::a2ui::requested(None, Some("x=1&a2ui=true")));
/// assert!(!agui_protocol::a2ui::requested(Some("false"), Some("a2ui=0")));
/// ```
pub fn requested(header: Option<&str>, query: Option<&str>) -> bool {
    let truthy = |v: &str| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes");
    header.is_some_and(truthy)
        || query.is_some_and(|q| {
            q.split('&')
                .filter_map(|pair| pair.split_once('='))
                .any(|(k, v)| k == QUERY_PARAM && truthy(v))
        })
}

/// One A2UI frame before encoding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Frame {
    /// Frame type: `text`, `thinking`, `tool_call`, `tool_result`, `code_block`,
    /// `interrupt`, `error`, `done`, `progress` or `agent_switch`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Unix milliseconds.
    pub timestamp: u64,
    /// Type-specific data (`null` for `done`).
    pub data: Value,
}

impl Frame {
    /// Encodes as a named SSE frame.
    pub fn to_sse(&self) -> Bytes {
        let mut buf = BytesMut::with_capacity(96);
        buf.put_slice(b"event: ");
        buf.put_slice(self.kind.as_bytes());
        buf.put_slice(b"\ndata: ");
        let mut w = buf.writer();
        serde_json::to_writer(&mut w, self).expect("A2UI frames always serialize");
        let mut buf = w.into_inner();
        buf.put_slice(b"\n\n");
        buf.freeze()
    }

    /// Encodes in the legacy compatible mode.
    pub fn to_legacy(&self) -> Bytes {
        let mut buf = BytesMut::new();
        match self.kind {
            "text" => {
                let delta = self.data.get("delta").and_then(Value::as_str).unwrap_or("");
                // A raw token may hold line breaks; each line needs its own `data:` line.
                // SSE ends a line at CR, LF or CRLF: a payload CR left in place would end
                // the line early and let text such as "\r\rdata: [DONE]" forge frames.
                for line in lines(delta) {
                    buf.put_slice(b"data: ");
                    buf.put_slice(line.as_bytes());
                    buf.put_u8(b'\n');
                }
                buf.put_u8(b'\n');
            }
            "done" => buf.put_slice(b"data: [DONE]\n\n"),
            _ => {
                #[derive(Serialize)]
                struct Legacy<'a> {
                    #[serde(rename = "type")]
                    kind: &'a str,
                    data: &'a Value,
                }
                buf.put_slice(b"data: ");
                let mut w = buf.writer();
                serde_json::to_writer(
                    &mut w,
                    &Legacy {
                        kind: self.kind,
                        data: &self.data,
                    },
                )
                .expect("A2UI frames always serialize");
                buf = w.into_inner();
                buf.put_slice(b"\n\n");
            }
        }
        buf.freeze()
    }
}

/// `text` split at every line break SSE knows (CRLF, CR, LF), CRLF counting once.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        match current.find(['\r', '\n']) {
            Some(at) => {
                let skip = if current[at..].starts_with("\r\n") {
                    2
                } else {
                    1
                };
                rest = Some(&current[at + skip..]);
                Some(&current[..at])
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

#[derive(Debug, Default)]
struct ToolCallDraft {
    name: String,
    args: String,
}

/// Maps AG-UI events to A2UI frames, keeping the accumulation state A2UI needs.
#[derive(Debug, Default)]
pub struct A2uiEncoder {
    // Keyed by the events' own ids: inserting one is a count increment, not a copy.
    text: HashMap<MessageId, code::TextSplitter>,
    thinking: HashMap<MessageId, String>,
    tools: HashMap<ToolCallId, ToolCallDraft>,
    tool_names: HashMap<ToolCallId, String>,
    agents: Vec<String>,
    steps: u64,
    agent_name: String,
}

impl A2uiEncoder {
    /// An encoder for an agent called `agent_name` (used in `progress` and `agent_switch`).
    pub fn new(agent_name: impl Into<String>) -> Self {
        Self {
            agent_name: agent_name.into(),
            ..Self::default()
        }
    }

    /// The frames one AG-UI event maps to; `now_ms` stamps frames whose event has no timestamp.
    pub fn frames(&mut self, event: &Event, now_ms: u64) -> Vec<Frame> {
        let ts = event.base().timestamp.unwrap_or(now_ms);
        let frame = |kind: &'static str, data: Value| Frame {
            kind,
            timestamp: ts,
            data,
        };
        match event {
            Event::TextMessageContent(e) => {
                let splitter = self.text.entry(e.message_id.clone()).or_default();
                splitter
                    .push(&e.delta)
                    .into_iter()
                    .map(|piece| frame(piece.kind, piece.data))
                    .collect()
            }
            Event::TextMessageEnd(e) => match self.text.remove(e.message_id.as_str()) {
                Some(mut splitter) => splitter
                    .finish()
                    .into_iter()
                    .map(|p| frame(p.kind, p.data))
                    .collect(),
                None => Vec::new(),
            },
            Event::ReasoningMessageContent(e) => {
                let content = self.thinking.entry(e.message_id.clone()).or_default();
                content.push_str(&e.delta);
                vec![frame(
                    "thinking",
                    json!({"content": content, "delta": e.delta}),
                )]
            }
            Event::ReasoningMessageEnd(e) => {
                self.thinking.remove(e.message_id.as_str());
                Vec::new()
            }
            Event::ToolCallStart(e) => {
                self.tool_names
                    .insert(e.tool_call_id.clone(), e.tool_call_name.clone());
                self.tools.insert(
                    e.tool_call_id.clone(),
                    ToolCallDraft {
                        name: e.tool_call_name.clone(),
                        args: String::new(),
                    },
                );
                Vec::new()
            }
            Event::ToolCallArgs(e) => {
                if let Some(draft) = self.tools.get_mut(e.tool_call_id.as_str()) {
                    draft.args.push_str(&e.delta);
                }
                Vec::new()
            }
            Event::ToolCallEnd(e) => match self.tools.remove(e.tool_call_id.as_str()) {
                Some(draft) => vec![frame(
                    "tool_call",
                    json!({"id": e.tool_call_id, "name": draft.name, "arguments": arguments_map(&draft.args), "status": "calling"}),
                )],
                None => Vec::new(),
            },
            Event::ToolCallResult(e) => {
                let name = self
                    .tool_names
                    .get(e.tool_call_id.as_str())
                    .cloned()
                    .unwrap_or_default();
                vec![frame(
                    "tool_result",
                    json!({"id": e.tool_call_id, "name": name, "result": e.content.text(), "is_error": false}),
                )]
            }
            Event::RunFinished(e) => {
                let mut out = Vec::new();
                if let Some(RunFinishedOutcome::Interrupt { interrupts }) = &e.outcome {
                    for interrupt in interrupts {
                        let reason = interrupt
                            .message
                            .clone()
                            .unwrap_or_else(|| interrupt.reason.clone());
                        let fields = fields_from_schema(interrupt.response_schema.as_deref());
                        out.push(frame(
                            "interrupt",
                            json!({"id": interrupt.id, "reason": reason, "fields": fields}),
                        ));
                    }
                }
                out.push(frame("done", Value::Null));
                out
            }
            Event::RunError(e) => vec![
                frame(
                    "error",
                    json!({"code": e.code.as_deref().unwrap_or("RUN_ERROR"), "message": e.message}),
                ),
                frame("done", Value::Null),
            ],
            Event::StepStarted(e) => {
                self.steps += 1;
                let mut data = Map::new();
                data.insert("agent_name".into(), Value::from(self.current_agent()));
                data.insert("step".into(), Value::from(e.step_name.clone()));
                data.insert("current".into(), Value::from(self.steps));
                if let Some(total) = e
                    .base
                    .metadata
                    .as_ref()
                    .and_then(|m| m.get("handoff.totalSteps"))
                    .and_then(Value::as_u64)
                {
                    data.insert("total".into(), Value::from(total));
                }
                vec![frame("progress", Value::Object(data))]
            }
            Event::SubagentStarted(e) => {
                let from = self.current_agent();
                self.agents.push(e.name.clone());
                let reason = e.description.clone().unwrap_or_default();
                vec![frame(
                    "agent_switch",
                    json!({"from_agent": from, "to_agent": e.name, "reason": reason}),
                )]
            }
            Event::SubagentFinished(_) | Event::SubagentError(_) => {
                let from = self.current_agent();
                self.agents.pop();
                let reason = if matches!(event, Event::SubagentError(_)) {
                    "subagent failed"
                } else {
                    "subagent finished"
                };
                vec![frame(
                    "agent_switch",
                    json!({"from_agent": from, "to_agent": self.current_agent(), "reason": reason}),
                )]
            }
            _ => Vec::new(),
        }
    }

    /// Teaches the encoder a tool call's name from earlier runs, so a resumed
    /// run's `tool_result` (whose `TOOL_CALL_START` is not in this stream) names its tool.
    pub fn remember_tool_call(&mut self, id: impl Into<ToolCallId>, name: impl Into<String>) {
        self.tool_names.insert(id.into(), name.into());
    }

    fn current_agent(&self) -> String {
        self.agents
            .last()
            .cloned()
            .unwrap_or_else(|| self.agent_name.clone())
    }

    /// Encodes one event as named A2UI SSE frames.
    pub fn encode(&mut self, event: &Event, now_ms: u64) -> Bytes {
        concat(self.frames(event, now_ms).iter().map(Frame::to_sse))
    }

    /// Encodes one event in the legacy compatible mode.
    pub fn encode_legacy(&mut self, event: &Event, now_ms: u64) -> Bytes {
        concat(self.frames(event, now_ms).iter().map(Frame::to_legacy))
    }
}

fn concat(parts: impl Iterator<Item = Bytes>) -> Bytes {
    let mut buf = BytesMut::new();
    for part in parts {
        buf.put_slice(&part);
    }
    buf.freeze()
}

/// Tool arguments as an object: parsed JSON when the text is a JSON object,
/// otherwise `{"input": <text>}` so the field stays a map.
fn arguments_map(args: &str) -> Value {
    match serde_json::from_str::<Value>(args) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ if args.trim().is_empty() => Value::Object(Map::new()),
        _ => json!({"input": args}),
    }
}
