//! A `tools/call` result as the text the model and the client get.
//!
//! The result is the server's, so untrusted: it only ever becomes a tool message (never
//! part of the system prompt), and it is bounded before it reaches the model or the
//! store, so a server cannot flood the context window or the thread's history.

use serde_json::{Map, Value};

/// Largest result text passed on; the rest is cut with a `[truncated: N bytes]` note.
pub const MAX_RESULT_BYTES: usize = 1024 * 1024;

/// What a call answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutcome {
    /// The result's text (bounded by [`MAX_RESULT_BYTES`]).
    pub text: String,
    /// The server's `isError`: the tool ran and failed.
    pub is_error: bool,
}

/// A `tools/call` answer: done, or waiting for input (2026-07-28's `resultType`; a
/// result without one, from an older server, is complete).
#[derive(Debug, Clone, PartialEq)]
pub enum Called {
    /// `resultType: "complete"`: the tool ran.
    Complete(CallOutcome),
    /// `resultType: "input_required"`: nothing ran yet; the server asks.
    InputRequired(InputRequired),
}

/// What an `input_required` result asks for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InputRequired {
    /// `inputRequests`: by key, `{"method": "elicitation/create", "params": …}`.
    pub input_requests: Map<String, Value>,
    /// `requestState`, echoed unchanged on the retry.
    pub request_state: Option<String>,
}

/// The answers a retry carries: `inputResponses` by the requests' keys, and the
/// `requestState` of the result it answers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InputAnswers {
    /// By key: `{"action": "accept" | "decline" | "cancel", "content"?: {…}}`.
    pub input_responses: Map<String, Value>,
    /// As the server sent it.
    pub request_state: Option<String>,
}

/// Reads a `tools/call` result by its `resultType`; the error says why it is unusable.
pub fn classify(result: &Value) -> Result<Called, String> {
    match result.get("resultType").and_then(Value::as_str) {
        None | Some("complete") => Ok(Called::Complete(render(result))),
        Some("input_required") => {
            let input_requests = match result.get("inputRequests") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(requests)) => requests.clone(),
                Some(_) => return Err("inputRequests is not an object".to_owned()),
            };
            let request_state = match result.get("requestState") {
                None | Some(Value::Null) => None,
                Some(Value::String(state)) => Some(state.clone()),
                Some(_) => return Err("requestState is not a string".to_owned()),
            };
            if input_requests.is_empty() && request_state.is_none() {
                return Err("input_required with neither inputRequests nor requestState".into());
            }
            Ok(Called::InputRequired(InputRequired {
                input_requests,
                request_state,
            }))
        }
        Some(other) => Err(format!("unknown resultType {other:?}")),
    }
}

/// Renders a `CallToolResult`: `structuredContent` as JSON text when present (servers
/// repeat it as a text part only for older clients), else the content parts joined by
/// newlines (text as is; a resource's text; other parts as a short `[kind …]` note, as a
/// chat model cannot see images or blobs through a tool message).
pub fn render(result: &Value) -> CallOutcome {
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let text = match result.get("structuredContent") {
        Some(structured) if !structured.is_null() && !is_error => structured.to_string(),
        _ => result
            .get("content")
            .and_then(Value::as_array)
            .map(|parts| parts.iter().map(part).collect::<Vec<_>>().join("\n"))
            .unwrap_or_default(),
    };
    CallOutcome {
        text: truncate(text),
        is_error,
    }
}

fn part(part: &Value) -> String {
    let str_of = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    match part.get("type").and_then(Value::as_str).unwrap_or("") {
        "text" => str_of(part, "text").unwrap_or_default(),
        "resource" => {
            let resource = part.get("resource").unwrap_or(&Value::Null);
            str_of(resource, "text").unwrap_or_else(|| {
                format!("[resource {}]", str_of(resource, "uri").unwrap_or_default())
            })
        }
        "resource_link" => format!(
            "[resource_link {}]",
            str_of(part, "uri").unwrap_or_default()
        ),
        kind => format!(
            "[{kind} {}]",
            str_of(part, "mimeType").unwrap_or_else(|| "content".to_owned())
        ),
    }
}

/// `text` cut to [`MAX_RESULT_BYTES`] (on a character boundary) with a note of how many
/// bytes were left out.
pub fn truncate(mut text: String) -> String {
    if text.len() <= MAX_RESULT_BYTES {
        return text;
    }
    let mut cut = MAX_RESULT_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let dropped = text.len() - cut;
    text.truncate(cut);
    text.push_str(&format!("\n[truncated: {dropped} bytes]"));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_parts_are_joined_and_structured_content_wins() {
        let plain = json!({ "content": [{ "type": "text", "text": "Echo: hi" },
            { "type": "image", "data": "AAAA", "mimeType": "image/png" },
            { "type": "text", "text": "more" }] });
        assert_eq!(
            render(&plain),
            CallOutcome {
                text: "Echo: hi\n[image image/png]\nmore".into(),
                is_error: false
            }
        );
        let structured = json!({ "content": [{ "type": "text", "text": "{\"t\": 1}" }],
            "structuredContent": { "t": 1 } });
        assert_eq!(render(&structured).text, r#"{"t":1}"#);
        let failed = json!({ "content": [{ "type": "text", "text": "bad id" }], "isError": true });
        assert_eq!(
            render(&failed),
            CallOutcome {
                text: "bad id".into(),
                is_error: true
            }
        );
    }

    #[test]
    fn result_types_are_read_and_a_missing_one_is_complete() {
        let plain = json!({ "content": [{ "type": "text", "text": "ok" }] });
        assert!(matches!(classify(&plain), Ok(Called::Complete(c)) if c.text == "ok"));
        let asked = json!({ "resultType": "input_required", "requestState": "s1",
            "inputRequests": { "a": { "method": "elicitation/create", "params": {} } } });
        let Ok(Called::InputRequired(input)) = classify(&asked) else {
            panic!("input_required");
        };
        assert_eq!(input.request_state.as_deref(), Some("s1"));
        assert!(input.input_requests.contains_key("a"));
        assert!(classify(&json!({ "resultType": "input_required" })).is_err());
        assert!(classify(&json!({ "resultType": "later" })).is_err());
    }

    #[test]
    fn results_over_a_mebibyte_are_cut_with_a_note() {
        let small = "x".repeat(MAX_RESULT_BYTES);
        assert_eq!(truncate(small.clone()), small);
        let big = format!("{}é{}", "x".repeat(MAX_RESULT_BYTES - 1), "y".repeat(99));
        let cut = truncate(big.clone());
        // The two-byte 'é' straddles the limit: it goes whole.
        let kept = MAX_RESULT_BYTES - 1;
        assert!(cut.starts_with(&"x".repeat(kept)));
        assert!(
            cut.ends_with(&format!("\n[truncated: {} bytes]", big.len() - kept)),
            "{}",
            &cut[kept..]
        );
        let result =
            json!({ "content": [{ "type": "text", "text": "z".repeat(MAX_RESULT_BYTES + 10) }] });
        assert!(render(&result).text.ends_with("[truncated: 10 bytes]"));
    }
}
