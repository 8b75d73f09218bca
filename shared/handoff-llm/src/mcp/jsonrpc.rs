//! JSON-RPC 2.0 as MCP's Streamable HTTP carries it, without I/O.
//!
//! A POST is answered either with `application/json` (the response object) or with
//! `text/event-stream`, whose `message` events each carry one JSON-RPC message: progress
//! or other notifications and server requests may come before the response. Both are
//! read the same way here: every message is looked at, the response with our id is kept,
//! and a `notifications/tools/list_changed` on the way is noted (the cached tool list is
//! then stale).

use agui_protocol::sse::SseDecoder;
use serde_json::{Value, json};

use super::result::truncate;

/// The server's answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// `result`, or the JSON-RPC `error` as `(code, message)`, the message cut to
    /// [`super::MAX_RESULT_BYTES`] like a result's text.
    pub outcome: Result<Value, (i64, String)>,
    /// The server said its tool list changed.
    pub tools_changed: bool,
}

/// The body of request `id`.
pub fn request(id: u64, method: &str, params: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
        .unwrap_or_default()
}

/// The body of a notification (no id, no answer).
pub fn notification(method: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({ "jsonrpc": "2.0", "method": method })).unwrap_or_default()
}

/// The response to request `id` in `body` (`content_type` says how it is framed); an
/// error says why the body is not an answer.
pub fn parse(content_type: &str, body: &[u8], id: u64) -> Result<Answer, String> {
    let mut messages = Vec::new();
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case("text/event-stream") {
        let mut decoder = SseDecoder::new();
        let mut frames = decoder.feed(body);
        // A stream closed right after its last event may lack the final blank line.
        frames.extend(decoder.feed(b"\n\n"));
        for frame in frames {
            if frame.event.as_deref().is_some_and(|e| e != "message") || frame.data.is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(&frame.data)
                .map_err(|e| format!("an event is not JSON: {e}"))?;
            messages.push(value);
        }
    } else {
        let value: Value =
            serde_json::from_slice(body).map_err(|e| format!("the answer is not JSON: {e}"))?;
        messages.push(value);
    }
    let mut tools_changed = false;
    let mut outcome = None;
    for message in messages.into_iter().flat_map(|m| match m {
        Value::Array(batch) => batch,
        single => vec![single],
    }) {
        let method = message.get("method").and_then(Value::as_str);
        if method == Some("notifications/tools/list_changed") {
            tools_changed = true;
        }
        if method.is_some() || message.get("id").and_then(Value::as_u64) != Some(id) {
            continue;
        }
        outcome = Some(match (message.get("result"), message.get("error")) {
            (Some(result), None) => Ok(result.clone()),
            // The message is the server's text and reaches the model and the thread's
            // history as a tool error: bounded like a result.
            (None, Some(error)) => Err((
                error.get("code").and_then(Value::as_i64).unwrap_or(0),
                truncate(
                    error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("no message")
                        .to_owned(),
                ),
            )),
            _ => return Err("a response with neither result nor error".to_owned()),
        });
    }
    let outcome = outcome.ok_or_else(|| format!("no response to request {id}"))?;
    Ok(Answer {
        outcome,
        tools_changed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_json_answers() {
        let answer = parse(
            "application/json",
            br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#,
            3,
        )
        .unwrap();
        assert_eq!(answer.outcome, Ok(json!({ "tools": [] })));
        assert!(!answer.tools_changed);
        let error = parse(
            "application/json; charset=utf-8",
            br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Tool x not found"}}"#,
            3,
        )
        .unwrap();
        assert_eq!(error.outcome, Err((-32602, "Tool x not found".into())));
    }

    #[test]
    fn an_error_message_over_a_mebibyte_is_cut_like_a_result() {
        let message = "e".repeat(super::super::MAX_RESULT_BYTES + 10);
        let body =
            json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32000, "message": message}});
        let answer = parse("application/json", body.to_string().as_bytes(), 4).unwrap();
        let (code, text) = answer.outcome.unwrap_err();
        assert_eq!(code, -32000);
        assert!(
            text.ends_with("\n[truncated: 10 bytes]"),
            "{}",
            &text[text.len() - 40..]
        );
        assert_eq!(text, truncate(message));
    }

    #[test]
    fn sse_framed_answers_skip_notifications_and_note_list_changes() {
        let body = concat!(
            "event: message\nid: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n",
            ": a comment\n\n",
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n",
            "data: {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"sampling/createMessage\",\"params\":{}}\n\n",
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\n",
            "data: \"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Echo: hi\"}]}}"
        );
        let answer = parse("text/event-stream", body.as_bytes(), 7).unwrap();
        assert_eq!(
            answer.outcome,
            Ok(json!({ "content": [{ "type": "text", "text": "Echo: hi" }] }))
        );
        assert!(answer.tools_changed);
    }

    #[test]
    fn garbage_and_missing_answers_are_errors() {
        assert!(parse("application/json", b"<html>", 1).is_err());
        assert!(parse("text/event-stream", b"data: {nope}\n\n", 1).is_err());
        let other = br#"{"jsonrpc":"2.0","id":2,"result":{}}"#;
        assert!(parse("application/json", other, 1).is_err());
        assert!(parse("text/event-stream", b"", 1).is_err());
    }
}
