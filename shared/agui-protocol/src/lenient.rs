//! Lenient reading of what real clients and older producers send.
//!
//! Nulls in optional positions read as absent and unknown members are ignored
//! (plain serde behaviour for these types). Retired `THINKING_*` events are
//! translated to `REASONING_*` by [`EventReader`], which mints the span and
//! message ids the old events lacked. Malformed known values are errors that
//! name the JSON path.

use serde_json::{Map, Value};

use crate::error::{from_str_with_path, from_value_with_path};
use crate::{Event, EventType, ProtocolError, RunAgentInput};

/// Parses a `RunAgentInput` POST body.
///
/// ```
/// let input = agui_protocol::lenient::parse_input(
///     br#"{"threadId":"t","runId":"r","messages":[],"state":null,"tools":null}"#,
/// ).unwrap();
/// assert_eq!(input.thread_id, "t");
/// let err = agui_protocol::lenient::parse_input(br#"{"threadId":"t","runId":"r","messages":[{"role":"user"}]}"#)
///     .unwrap_err();
/// assert_eq!(err.path(), Some("messages[0]"));
/// ```
pub fn parse_input(body: &[u8]) -> Result<RunAgentInput, ProtocolError> {
    let text = std::str::from_utf8(body).map_err(|e| ProtocolError::Syntax {
        message: format!("body is not UTF-8: {e}"),
    })?;
    from_str_with_path(text)
}

fn object_type(frame: &Value) -> Option<EventType> {
    frame
        .get("type")
        .and_then(Value::as_str)
        .and_then(EventType::from_wire)
}

/// Reads events one at a time, translating retired 0.x shapes.
#[derive(Debug, Default)]
pub struct EventReader {
    minted: u64,
    open_span: Option<String>,
    open_message: Option<String>,
}

impl EventReader {
    /// A reader with no open legacy spans.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses one event's JSON text.
    pub fn read_str(&mut self, text: &str) -> Result<Event, ProtocolError> {
        let value: Value = serde_json::from_str(text).map_err(|e| ProtocolError::Syntax {
            message: e.to_string(),
        })?;
        self.read_value(value)
    }

    /// Parses one event from a JSON value.
    pub fn read_value(&mut self, value: Value) -> Result<Event, ProtocolError> {
        let Value::Object(mut object) = value else {
            return Err(ProtocolError::Frame(
                "the frame is not a JSON object".into(),
            ));
        };
        let kind = match object.get("type") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => {
                return Err(ProtocolError::Frame(
                    "the frame carries no event type".into(),
                ));
            }
        };
        if kind.starts_with("THINKING_") {
            self.translate_thinking(&kind, &mut object)?;
        }
        let frame = Value::Object(object);
        from_value_with_path(frame.clone()).map_err(|err| match (&err, object_type(&frame)) {
            (ProtocolError::Invalid { path, .. }, Some(ty)) if path == "." => {
                match ty.locate_error(&frame) {
                    Some((path, message)) => ProtocolError::Invalid { path, message },
                    None => err,
                }
            }
            _ => err,
        })
    }

    fn mint(&mut self, prefix: &str) -> String {
        self.minted += 1;
        format!("{prefix}-{}", self.minted)
    }

    fn translate_thinking(
        &mut self,
        kind: &str,
        object: &mut Map<String, Value>,
    ) -> Result<(), ProtocolError> {
        let (new_type, id) = match kind {
            "THINKING_START" => {
                object.remove("title");
                let id = self.mint("thinking");
                self.open_span = Some(id.clone());
                ("REASONING_START", id)
            }
            "THINKING_END" => (
                "REASONING_END",
                self.open_span
                    .take()
                    .unwrap_or_else(|| self.mint("thinking")),
            ),
            "THINKING_TEXT_MESSAGE_START" => {
                let id = self.mint("thinking-message");
                self.open_message = Some(id.clone());
                object.insert("role".into(), Value::from("reasoning"));
                ("REASONING_MESSAGE_START", id)
            }
            "THINKING_TEXT_MESSAGE_CONTENT" => (
                "REASONING_MESSAGE_CONTENT",
                self.open_message
                    .clone()
                    .unwrap_or_else(|| self.mint("thinking-message")),
            ),
            "THINKING_TEXT_MESSAGE_END" => (
                "REASONING_MESSAGE_END",
                self.open_message
                    .take()
                    .unwrap_or_else(|| self.mint("thinking-message")),
            ),
            other => {
                return Err(ProtocolError::Invalid {
                    path: "type".into(),
                    message: format!("unknown retired event type `{other}`"),
                });
            }
        };
        object.insert("type".into(), Value::from(new_type));
        object.insert("messageId".into(), Value::from(id));
        Ok(())
    }
}
