//! Request bodies as a client sends them.
//!
//! - `minimal`: `threadId`, `runId`, the new message only (run 1) or none (the resume).
//! - `official`: what `@ag-ui/client`'s `HttpAgent` sends on every run: the whole history
//!   it holds (after run 1, the `MESSAGES_SNAPSHOT` it received: the user's message, the
//!   assistant's messages and tool calls, the tool result), the state it holds (the last
//!   `STATE_SNAPSHOT`), the front end's `tools` and `context`, and `forwardedProps`.

use serde_json::{Value, json};

/// Which client's bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Minimal,
    Official,
}

impl Shape {
    pub(crate) fn parse(name: &str) -> Shape {
        match name {
            "minimal" => Shape::Minimal,
            "official" => Shape::Official,
            other => panic!("--client {other}: expected official or minimal"),
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Shape::Minimal => "minimal",
            Shape::Official => "official",
        }
    }
}

/// A front-end tool and a context entry, as a CopilotKit page registers them.
fn front_end() -> (Value, Value) {
    let tools = json!([{
        "name": "showNotification",
        "description": "Show a short notification to the user in the page's corner.",
        "parameters": {
            "type": "object",
            "properties": {
                "message": { "type": "string", "description": "What to show" },
                "level": { "type": "string", "enum": ["info", "warning", "error"] }
            },
            "required": ["message"]
        }
    }]);
    let context = json!([
        { "description": "The signed-in user's locale and time zone", "value": "en-GB, Europe/London" }
    ]);
    (tools, context)
}

/// A run's body: `messages` is the history the client holds (the new message last).
pub(crate) fn run(
    shape: Shape,
    thread: &str,
    run: &str,
    messages: &[Value],
    state: &Value,
) -> String {
    let mut body = json!({ "threadId": thread, "runId": run });
    match shape {
        Shape::Minimal => {
            body["messages"] = Value::from(messages.last().cloned().into_iter().collect::<Vec<_>>())
        }
        Shape::Official => official(&mut body, messages, state),
    }
    body.to_string()
}

/// A resume's body answering `interrupt` with an approval.
pub(crate) fn resume(
    shape: Shape,
    thread: &str,
    run: &str,
    messages: &[Value],
    state: &Value,
    interrupt: &str,
) -> String {
    let mut body = json!({
        "threadId": thread,
        "runId": run,
        "messages": [],
        "resume": [{ "interruptId": interrupt, "status": "resolved", "payload": { "approved": true } }],
    });
    if shape == Shape::Official {
        official(&mut body, messages, state);
    }
    body.to_string()
}

fn official(body: &mut Value, messages: &[Value], state: &Value) {
    let (tools, context) = front_end();
    body["messages"] = Value::from(messages.to_vec());
    body["state"] = state.clone();
    body["tools"] = tools;
    body["context"] = context;
    body["forwardedProps"] = json!({});
}

/// What a client holds after a stream, as `HttpAgent` applies it: the last
/// `MESSAGES_SNAPSHOT` replaces the history, else the text messages streamed are appended;
/// the last `STATE_SNAPSHOT` replaces the state.
pub(crate) fn apply_stream(stream: &str, messages: &mut Vec<Value>, state: &mut Value) {
    let mut text: Option<(String, String)> = None;
    for data in stream.lines().filter_map(|l| l.strip_prefix("data: ")) {
        let Ok(event) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        match event["type"].as_str() {
            Some("MESSAGES_SNAPSHOT") => {
                if let Some(all) = event["messages"].as_array() {
                    *messages = all.clone();
                }
            }
            Some("STATE_SNAPSHOT") => *state = event["snapshot"].clone(),
            Some("TEXT_MESSAGE_START") => {
                let id = event["messageId"].as_str().unwrap_or_default().to_owned();
                text = Some((id, String::new()));
            }
            Some("TEXT_MESSAGE_CONTENT") => {
                if let Some((_, content)) = text.as_mut() {
                    content.push_str(event["delta"].as_str().unwrap_or_default());
                }
            }
            Some("TEXT_MESSAGE_END") => {
                if let Some((id, content)) = text.take()
                    && !messages.iter().any(|m| m["id"] == id.as_str())
                {
                    messages.push(json!({ "id": id, "role": "assistant", "content": content }));
                }
            }
            _ => {}
        }
    }
}
