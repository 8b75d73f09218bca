//! Request bodies as a client sends them.
//!
//! - `minimal`: `threadId`, `runId`, the new message only (run 1) or none (the resume).
//! - `official`: what `@ag-ui/client`'s `HttpAgent` sends on every run: the whole history
//!   it holds (after run 1, the `MESSAGES_SNAPSHOT` it received: the user's message, the
//!   assistant's messages and tool calls, the tool result), the state it holds (the last
//!   `STATE_SNAPSHOT`), the front end's `tools` and `context`, and `forwardedProps`.
//!
//! Bodies keep the members in the order `HttpAgent` writes them (its `JSON.stringify` keeps
//! each object's insertion order): the run's `threadId, runId, tools, context,
//! forwardedProps, state, messages, resume`; a message it builds from streamed text as
//! `id, role, content`; a message it took from a snapshot exactly as the server wrote it.
//! (A `serde_json::Value` would sort them, which no client does, and a server's reader
//! may well care: one that finds `role` first reads a message in one pass.)

use serde_json::Value;
use serde_json::value::RawValue;

/// One message as the client holds it: its JSON text.
pub(crate) type HeldMessage = String;

/// A message the client builds (the user's, or the assistant's from streamed text):
/// `{"id", "role", "content"}`, in that order.
pub(crate) fn message(id: &str, role: &str, content: &str) -> HeldMessage {
    format!(
        r#"{{"id":{},"role":{},"content":{}}}"#,
        Value::from(id),
        Value::from(role),
        Value::from(content)
    )
}

/// Which client's bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Minimal,
    Official,
}

impl Shape {
    pub(crate) fn parse(name: &str) -> Option<Shape> {
        match name {
            "minimal" => Some(Shape::Minimal),
            "official" => Some(Shape::Official),
            _ => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Shape::Minimal => "minimal",
            Shape::Official => "official",
        }
    }
}

/// A front-end tool and a context entry, as a CopilotKit page registers them (members in
/// the order it writes them).
const FRONT_END: &str = concat!(
    r#""tools":[{"name":"showNotification","#,
    r#""description":"Show a short notification to the user in the page's corner.","#,
    r#""parameters":{"type":"object","properties":{"#,
    r#""message":{"type":"string","description":"What to show"},"#,
    r#""level":{"type":"string","enum":["info","warning","error"]}},"#,
    r#""required":["message"]}}],"#,
    r#""context":[{"description":"The signed-in user's locale and time zone","#,
    r#""value":"en-GB, Europe/London"}]"#,
);

/// `{"threadId":…,"runId":…,` then `rest`.
fn body(thread: &str, run: &str, rest: &str) -> String {
    format!(
        r#"{{"threadId":{},"runId":{},{rest}}}"#,
        Value::from(thread),
        Value::from(run)
    )
}

fn array(messages: &[HeldMessage]) -> String {
    format!("[{}]", messages.join(","))
}

/// The members `official` adds before `messages`, and `messages` itself.
fn official(messages: &[HeldMessage], state: &str) -> String {
    format!(
        r#"{FRONT_END},"forwardedProps":{{}},"state":{state},"messages":{}"#,
        array(messages)
    )
}

/// A run's body: `messages` is the history the client holds (the new message last), `state`
/// the JSON text of the state it holds.
pub(crate) fn run(
    shape: Shape,
    thread: &str,
    run: &str,
    messages: &[HeldMessage],
    state: &str,
) -> String {
    let rest = match shape {
        Shape::Minimal => format!(
            r#""messages":{}"#,
            array(&messages[messages.len().saturating_sub(1)..])
        ),
        Shape::Official => official(messages, state),
    };
    body(thread, run, &rest)
}

/// A resume's body answering `interrupt` with an approval.
pub(crate) fn resume(
    shape: Shape,
    thread: &str,
    run: &str,
    messages: &[HeldMessage],
    state: &str,
    interrupt: &str,
) -> String {
    let answer = format!(
        r#""resume":[{{"interruptId":{},"status":"resolved","payload":{{"approved":true}}}}]"#,
        Value::from(interrupt)
    );
    let rest = match shape {
        Shape::Minimal => format!(r#""messages":[],{answer}"#),
        Shape::Official => format!("{},{answer}", official(messages, state)),
    };
    body(thread, run, &rest)
}

/// The members of a streamed event the client reads, borrowed as the server wrote them.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Streamed<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(borrow, default)]
    messages: Option<Vec<&'a RawValue>>,
    #[serde(borrow, default)]
    snapshot: Option<&'a RawValue>,
    #[serde(default)]
    message_id: Option<String>,
    #[serde(default)]
    delta: Option<String>,
}

/// What a client holds after a stream, as `HttpAgent` applies it: the last
/// `MESSAGES_SNAPSHOT` replaces the history, else the text messages streamed are appended;
/// the last `STATE_SNAPSHOT` replaces the state.
pub(crate) fn apply_stream(stream: &str, messages: &mut Vec<HeldMessage>, state: &mut String) {
    let mut text: Option<(String, String)> = None;
    for data in stream.lines().filter_map(|l| l.strip_prefix("data: ")) {
        let Ok(event) = serde_json::from_str::<Streamed<'_>>(data) else {
            continue;
        };
        match event.kind {
            "MESSAGES_SNAPSHOT" => {
                if let Some(all) = event.messages {
                    *messages = all.iter().map(|m| m.get().to_owned()).collect();
                }
            }
            "STATE_SNAPSHOT" => {
                if let Some(snapshot) = event.snapshot {
                    *state = snapshot.get().to_owned();
                }
            }
            "TEXT_MESSAGE_START" => {
                text = Some((event.message_id.unwrap_or_default(), String::new()))
            }
            "TEXT_MESSAGE_CONTENT" => {
                if let Some((_, content)) = text.as_mut() {
                    content.push_str(&event.delta.unwrap_or_default());
                }
            }
            "TEXT_MESSAGE_END" => {
                if let Some((id, content)) = text.take() {
                    let held = |m: &HeldMessage| {
                        serde_json::from_str::<Value>(m).is_ok_and(|m| m["id"] == id.as_str())
                    };
                    if !messages.iter().any(held) {
                        messages.push(message(&id, "assistant", &content));
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where each of `keys` first occurs in `json`, in the order given.
    fn positions(json: &str, keys: &[&str]) -> Vec<usize> {
        let at = |key: &&str| json.find(&format!("\"{key}\":")).expect(key);
        keys.iter().map(at).collect()
    }

    #[test]
    fn bodies_keep_the_member_order_http_agent_writes() {
        let snapshot = r#"data: {"type":"MESSAGES_SNAPSHOT","messages":[{"role":"user","id":"m1","content":"Hi"},{"role":"assistant","id":"a1","content":"Hello"}]}"#;
        let streamed = format!(
            "{snapshot}\n\ndata: {{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"a2\"}}\n\ndata: {{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"a2\",\"delta\":\"More\"}}\n\ndata: {{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"a2\"}}\n\ndata: {{\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{{\"b\":1,\"a\":2}}}}\n\n"
        );
        let (mut messages, mut state) = (vec![message("m1", "user", "Hi")], "{}".to_owned());
        apply_stream(&streamed, &mut messages, &mut state);
        // The snapshot's messages as the server wrote them, then the streamed one as built.
        assert_eq!(
            messages,
            [
                r#"{"role":"user","id":"m1","content":"Hi"}"#,
                r#"{"role":"assistant","id":"a1","content":"Hello"}"#,
                r#"{"id":"a2","role":"assistant","content":"More"}"#,
            ]
        );
        assert_eq!(state, r#"{"b":1,"a":2}"#);
        let body = resume(Shape::Official, "t1", "r2", &messages, &state, "i1");
        let order = [
            "threadId",
            "runId",
            "tools",
            "context",
            "forwardedProps",
            "state",
            "messages",
            "resume",
        ];
        let found = positions(&body, &order);
        assert!(found.is_sorted(), "{body}");
        let parsed: Value = serde_json::from_str(&body).expect("a JSON body");
        assert_eq!(parsed["messages"].as_array().map(Vec::len), Some(3));
        assert_eq!(parsed["resume"][0]["interruptId"], "i1");
        let minimal = run(Shape::Minimal, "t1", "r3", &messages, &state);
        let parsed: Value = serde_json::from_str(&minimal).expect("a JSON body");
        assert_eq!(parsed["messages"][0]["id"], "a2");
    }
}
