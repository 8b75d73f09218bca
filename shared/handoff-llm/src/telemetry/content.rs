//! Opt-in capture of message contents on the GenAI spans
//! (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`).
//!
//! Off by default: prompts, answers and tool arguments are the users' data. A host reads
//! the variable once ([`capture_setting`]) and switches capture for the process
//! ([`set_capture_message_content`]), so agents an application builds itself follow the
//! same setting. When on, `chat` spans carry `gen_ai.system_instructions`,
//! `gen_ai.input.messages` and `gen_ai.output.messages`, and `execute_tool` spans
//! `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`, as JSON in the
//! conventions' message shape (`{role, parts: [{type, …}]}`).

use std::sync::atomic::{AtomicBool, Ordering};

use agui_protocol::Message;
use serde_json::{Value, json};

use crate::emit::ModelTurn;

/// The variable that opts in, as OpenTelemetry's GenAI instrumentations name it.
pub const CAPTURE_MESSAGE_CONTENT: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

static CAPTURE: AtomicBool = AtomicBool::new(false);

/// Whether spans record message contents from now on (process-wide; default off).
pub fn set_capture_message_content(on: bool) {
    CAPTURE.store(on, Ordering::Relaxed);
}

/// Whether spans record message contents.
pub fn capture_message_content() -> bool {
    CAPTURE.load(Ordering::Relaxed)
}

/// The setting a value of [`CAPTURE_MESSAGE_CONTENT`] asks for: `true` (any case) opts
/// in; unset, empty or `false` does not; anything else is refused by name.
pub fn capture_setting(value: Option<&str>) -> Result<bool, String> {
    match value.map(str::trim) {
        None | Some("") => Ok(false),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(other) => Err(format!(
            "{CAPTURE_MESSAGE_CONTENT}={other} is not true or false"
        )),
    }
}

/// `gen_ai.system_instructions`.
pub(crate) fn system_instructions(system: &str) -> String {
    json!([{ "type": "text", "content": system }]).to_string()
}

/// `gen_ai.input.messages`: the conversation sent to the model.
pub(crate) fn input_messages(messages: &[Message]) -> String {
    Value::Array(messages.iter().filter_map(message).collect()).to_string()
}

/// `gen_ai.output.messages`: what the model answered.
pub(crate) fn output_messages(turn: &ModelTurn, finish_reason: Option<&str>) -> String {
    let mut parts = Vec::new();
    if !turn.text.is_empty() {
        parts.push(json!({ "type": "text", "content": turn.text }));
    }
    for call in &turn.tool_calls {
        parts.push(tool_call(call.id.as_str(), &call.name, &call.arguments));
    }
    let mut out = json!({ "role": "assistant", "parts": parts });
    if let Some(reason) = finish_reason {
        out["finish_reason"] = json!(reason);
    }
    Value::Array(vec![out]).to_string()
}

fn message(message: &Message) -> Option<Value> {
    let parts = match message {
        Message::Assistant(m) => {
            let mut parts: Vec<Value> = m
                .content
                .iter()
                .filter(|text| !text.is_empty())
                .map(|text| json!({ "type": "text", "content": text }))
                .collect();
            for call in m.tool_calls.iter().flatten() {
                parts.push(tool_call(
                    call.id.as_str(),
                    &call.function.name,
                    &call.function.arguments,
                ));
            }
            parts
        }
        Message::Tool(m) => {
            let response = m.error.clone().unwrap_or_else(|| m.content.text());
            vec![json!({
                "type": "tool_call_response",
                "id": m.tool_call_id.as_str(),
                "response": response,
            })]
        }
        Message::Activity(_) | Message::Reasoning(_) => return None,
        other => vec![json!({ "type": "text", "content": other.text().unwrap_or_default() })],
    };
    Some(json!({ "role": message.role(), "parts": parts }))
}

fn tool_call(id: &str, name: &str, arguments: &str) -> Value {
    // Arguments as JSON when they parse (they are the model's text otherwise).
    let arguments = serde_json::from_str::<Value>(arguments).unwrap_or_else(|_| json!(arguments));
    json!({ "type": "tool_call", "id": id, "name": name, "arguments": arguments })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_true_or_false_is_a_setting() {
        assert_eq!(capture_setting(None), Ok(false));
        assert_eq!(capture_setting(Some("")), Ok(false));
        assert_eq!(capture_setting(Some("TRUE")), Ok(true));
        assert_eq!(capture_setting(Some("false")), Ok(false));
        let error = capture_setting(Some("yes")).unwrap_err();
        assert!(error.contains(CAPTURE_MESSAGE_CONTENT), "{error}");
    }

    #[test]
    fn messages_take_the_conventions_shape() {
        let messages: Vec<Message> = serde_json::from_value(json!([
            { "id": "u1", "role": "user", "content": "Refund A1" },
            { "id": "a1", "role": "assistant", "toolCalls": [{ "id": "c1", "type": "function",
              "function": { "name": "lookup", "arguments": "{\"orderId\":\"A1\"}" } }] },
            { "id": "t1", "role": "tool", "toolCallId": "c1", "content": "{\"total\":5}" }
        ]))
        .unwrap();
        let value: Value = serde_json::from_str(&input_messages(&messages)).unwrap();
        assert_eq!(
            value,
            json!([
                { "role": "user", "parts": [{ "type": "text", "content": "Refund A1" }] },
                { "role": "assistant", "parts": [{ "type": "tool_call", "id": "c1",
                  "name": "lookup", "arguments": { "orderId": "A1" } }] },
                { "role": "tool", "parts": [{ "type": "tool_call_response", "id": "c1",
                  "response": "{\"total\":5}" }] }
            ])
        );
    }
}
