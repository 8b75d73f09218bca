//! Anthropic Messages streaming.
//!
//! Named events: `message_start` (input usage), `content_block_start` (a text, tool use or
//! thinking block at an index), `content_block_delta` (`text_delta`, `input_json_delta`,
//! `thinking_delta`), `content_block_stop`, `message_delta` (stop reason, output usage),
//! `message_stop`, `ping`, and `error`.

use agui_protocol::{Message, Tool};
use serde_json::{Value, json};

use agui_protocol::TokenUsage;

use crate::delta::{FinishReason, ModelDelta, Parsed};
use crate::error::ModelError;
use crate::sse::FrameParser;

/// The streamed request body for `POST {base}/v1/messages`. System and developer
/// messages join `system`; consecutive tool results share one user turn.
pub fn request_body(
    model: &str,
    system: Option<&str>,
    messages: &[Message],
    tools: &[Tool],
    max_tokens: u32,
) -> Value {
    let mut prompts: Vec<&str> = system.into_iter().collect();
    let mut turns: Vec<Value> = Vec::new();
    for message in messages {
        match message {
            Message::System(m) | Message::Developer(m) => prompts.push(&m.content),
            Message::User(m) => turns.push(json!({ "role": "user", "content": m.content.text() })),
            Message::Assistant(m) => {
                let mut blocks: Vec<Value> = Vec::new();
                if let Some(text) = m.content.as_deref().filter(|t| !t.is_empty()) {
                    blocks.push(json!({ "type": "text", "text": text }));
                }
                for call in m.tool_calls.iter().flatten() {
                    let input: Value = serde_json::from_str(&call.function.arguments)
                        .unwrap_or_else(|_| json!({}));
                    blocks.push(json!({ "type": "tool_use", "id": call.id, "name": call.function.name, "input": input }));
                }
                if !blocks.is_empty() {
                    turns.push(json!({ "role": "assistant", "content": blocks }));
                }
            }
            Message::Tool(m) => {
                let mut result = json!({ "type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content.text() });
                if let Some(error) = &m.error {
                    // The tool failed: Anthropic's own flag, with the error as the content.
                    result["is_error"] = json!(true);
                    result["content"] = json!(error);
                }
                match turns.last_mut() {
                    Some(last) if last["role"] == "user" && last["content"].is_array() => {
                        if let Some(blocks) = last["content"].as_array_mut() {
                            blocks.push(result);
                        }
                    }
                    _ => turns.push(json!({ "role": "user", "content": [result] })),
                }
            }
            _ => {}
        }
    }
    let mut body = json!({
        "model": model,
        "max_tokens": max_tokens,
        "messages": turns,
        "stream": true,
    });
    if !prompts.is_empty() {
        body["system"] = Value::String(prompts.join("\n\n"));
    }
    if !tools.is_empty() {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| json!({
                "name": t.name,
                "description": t.description,
                "input_schema": t.parameters.clone().unwrap_or_else(|| json!({ "type": "object" })),
            }))
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

/// Parses named Messages events.
#[derive(Debug, Default)]
pub struct EventParser;

impl EventParser {
    /// The deltas of one event (`event` from its `event:` line, else its `type`).
    pub fn parse(&mut self, event: Option<&str>, data: &str) -> Parsed {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let body: Value = serde_json::from_str(data).map_err(|e| ModelError::Malformed {
            detail: format!("event is not JSON: {e}"),
        })?;
        let name = event
            .or_else(|| body.get("type").and_then(Value::as_str))
            .unwrap_or_default();
        let text = |v: &Value, k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let index = body.get("index").and_then(Value::as_u64).unwrap_or(0) as u32;
        Ok(match name {
            "message_start" => {
                // Anthropic counts uncached input apart from cache reads and writes;
                // AG-UI's input total includes both.
                let usage = &body["message"]["usage"];
                let count = |k: &str| usage.get(k).and_then(Value::as_u64);
                let (read, written) = (
                    count("cache_read_input_tokens"),
                    count("cache_creation_input_tokens"),
                );
                let input = count("input_tokens")
                    .map(|uncached| uncached + read.unwrap_or(0) + written.unwrap_or(0));
                vec![ModelDelta::Usage(TokenUsage {
                    input_tokens: input,
                    cached_input_tokens: read,
                    cache_write_input_tokens: written,
                    ..TokenUsage::default()
                })]
            }
            "content_block_start" => {
                let block = &body["content_block"];
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") => vec![ModelDelta::ToolCallStart {
                        index,
                        id: text(block, "id"),
                        name: text(block, "name"),
                    }],
                    Some("text") => non_empty(text(block, "text"), ModelDelta::Text),
                    Some("thinking") => non_empty(text(block, "thinking"), ModelDelta::Reasoning),
                    _ => Vec::new(),
                }
            }
            "content_block_delta" => {
                let delta = &body["delta"];
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => non_empty(text(delta, "text"), ModelDelta::Text),
                    Some("thinking_delta") => {
                        non_empty(text(delta, "thinking"), ModelDelta::Reasoning)
                    }
                    Some("input_json_delta") => {
                        non_empty(text(delta, "partial_json"), |fragment| {
                            ModelDelta::ToolCallArgs { index, fragment }
                        })
                    }
                    _ => Vec::new(),
                }
            }
            "message_delta" => {
                let mut deltas = Vec::new();
                if let Some(reason) = body["delta"].get("stop_reason").and_then(Value::as_str) {
                    deltas.push(ModelDelta::Finish(FinishReason::parse(reason)));
                }
                if let Some(output) = body["usage"].get("output_tokens").and_then(Value::as_u64) {
                    deltas.push(ModelDelta::Usage(TokenUsage {
                        output_tokens: Some(output),
                        ..TokenUsage::default()
                    }));
                }
                deltas
            }
            "error" => {
                let error = &body["error"];
                return Err(ModelError::from_frame(
                    error.get("type").and_then(Value::as_str).unwrap_or("error"),
                    error.get("message").and_then(Value::as_str).unwrap_or(""),
                ));
            }
            // ping, content_block_stop, message_stop, and events added later.
            _ => Vec::new(),
        })
    }
}

fn non_empty(text: String, wrap: impl FnOnce(String) -> ModelDelta) -> Vec<ModelDelta> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![wrap(text)]
    }
}

impl FrameParser for EventParser {
    fn frame(&mut self, event: Option<&str>, data: &str) -> Parsed {
        self.parse(event, data)
    }
}
