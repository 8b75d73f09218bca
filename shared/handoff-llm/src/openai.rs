//! OpenAI-compatible Chat Completions with `stream: true`.
//!
//! The request asks for usage in the final chunk (`stream_options.include_usage`); the
//! answer is `data: {chunk}` frames ending with `data: [DONE]`. Tool calls arrive as
//! fragments keyed by `index`, several calls per turn, the id and name in the first
//! fragment of each and the arguments spread over later ones.

use std::collections::HashSet;

use agui_protocol::{Message, Tool};
use serde_json::{Value, json};

use agui_protocol::TokenUsage;

use crate::delta::{FinishReason, ModelDelta, Parsed};
use crate::error::ModelError;
use crate::sse::FrameParser;

/// The streamed request body for `POST {base}/chat/completions`.
pub fn request_body(
    model: &str,
    system: Option<&str>,
    messages: &[Message],
    tools: &[Tool],
) -> Value {
    let mut wire: Vec<Value> = system
        .map(|s| json!({ "role": "system", "content": s }))
        .into_iter()
        .collect();
    wire.extend(messages.iter().filter_map(message));
    let mut body = json!({
        "model": model,
        "messages": wire,
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    if !tools.is_empty() {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({ "type": "function", "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters.clone().unwrap_or_else(|| json!({ "type": "object" })),
                }})
            })
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

/// One AG-UI message as a chat message (activity and reasoning transcripts are not sent).
fn message(message: &Message) -> Option<Value> {
    Some(match message {
        Message::System(m) => json!({ "role": "system", "content": m.content }),
        Message::Developer(m) => json!({ "role": "developer", "content": m.content }),
        Message::User(m) => json!({ "role": "user", "content": m.content.text() }),
        Message::Assistant(m) => {
            let mut out = json!({ "role": "assistant", "content": m.content });
            if let Some(calls) = m.tool_calls.as_ref().filter(|c| !c.is_empty()) {
                let calls: Vec<Value> = calls
                    .iter()
                    .map(|c| {
                        json!({ "id": c.id, "type": "function", "function": {
                            "name": c.function.name, "arguments": c.function.arguments,
                        }})
                    })
                    .collect();
                out["tool_calls"] = Value::Array(calls);
            }
            out
        }
        Message::Tool(m) => {
            // Chat Completions has no error flag: a failed tool's message is its error.
            let content = m.error.clone().unwrap_or_else(|| m.content.text());
            json!({ "role": "tool", "tool_call_id": m.tool_call_id, "content": content })
        }
        _ => return None,
    })
}

/// Parses the `data:` of each chunk.
#[derive(Debug, Default)]
pub struct ChunkParser {
    started: HashSet<u32>,
}

impl ChunkParser {
    /// The deltas in one chunk (`[DONE]` has none); an error object is an error.
    pub fn parse(&mut self, data: &str) -> Parsed {
        let data = data.trim();
        if data == "[DONE]" || data.is_empty() {
            return Ok(Vec::new());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| ModelError::Malformed {
            detail: format!("chunk is not JSON: {e}"),
        })?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let kind = ["type", "code"]
                .iter()
                .find_map(|k| error.get(*k).and_then(Value::as_str))
                .unwrap_or("error");
            let message = error.get("message").and_then(Value::as_str).unwrap_or("");
            return Err(ModelError::from_frame(kind, message));
        }
        let mut deltas = Vec::new();
        // One choice is asked for (n = 1); providers number it 0.
        if let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        {
            let delta = &choice["delta"];
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta
                    .get(key)
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    deltas.push(ModelDelta::Reasoning(text.to_owned()));
                }
            }
            if let Some(text) = delta
                .get("content")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                deltas.push(ModelDelta::Text(text.to_owned()));
            }
            let calls = delta.get("tool_calls").and_then(Value::as_array);
            for (position, call) in calls.into_iter().flatten().enumerate() {
                self.tool_call(call, position, &mut deltas)?;
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                deltas.push(ModelDelta::Finish(FinishReason::parse(reason)));
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            // `prompt_tokens` includes the cached ones, `completion_tokens` the reasoning.
            let count = |path: &[&str]| {
                path.iter()
                    .try_fold(usage, |v, k| v.get(*k))
                    .and_then(Value::as_u64)
            };
            deltas.push(ModelDelta::Usage(TokenUsage {
                input_tokens: count(&["prompt_tokens"]),
                output_tokens: count(&["completion_tokens"]),
                reasoning_tokens: count(&["completion_tokens_details", "reasoning_tokens"]),
                cached_input_tokens: count(&["prompt_tokens_details", "cached_tokens"]),
                ..TokenUsage::default()
            }));
        }
        Ok(deltas)
    }

    fn tool_call(
        &mut self,
        call: &Value,
        position: usize,
        deltas: &mut Vec<ModelDelta>,
    ) -> Result<(), ModelError> {
        let index = call
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(position as u64) as u32;
        let function = &call["function"];
        if !self.started.contains(&index) {
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if name.is_empty() {
                return Err(ModelError::Malformed {
                    detail: format!("tool call {index} has arguments before its name"),
                });
            }
            let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
            self.started.insert(index);
            deltas.push(ModelDelta::ToolCallStart {
                index,
                id: id.to_owned(),
                name: name.to_owned(),
            });
        }
        if let Some(fragment) = function
            .get("arguments")
            .and_then(Value::as_str)
            .filter(|a| !a.is_empty())
        {
            deltas.push(ModelDelta::ToolCallArgs {
                index,
                fragment: fragment.to_owned(),
            });
        }
        Ok(())
    }
}

impl FrameParser for ChunkParser {
    fn frame(&mut self, _event: Option<&str>, data: &str) -> Parsed {
        self.parse(data)
    }
}
