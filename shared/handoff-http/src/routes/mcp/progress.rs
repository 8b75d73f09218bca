//! A `tools/call` answered as SSE: when it carries `_meta.progressToken` and its client
//! accepts `text/event-stream`, a stream of `notifications/progress` (one per step, tool
//! call and text message the run starts); when its session client declared elicitation,
//! the `elicitation/create` requests it sends ([`super::ask`]); then the response.

use std::sync::Arc;

use agui_protocol::Event;
use axum::response::Response;
use futures::channel::mpsc::{self, UnboundedReceiver, UnboundedSender};
use futures::stream::{self, Stream, StreamExt};
use http::{HeaderMap, header};
use serde_json::{Value, json};

/// Where a call's progress goes.
#[derive(Clone)]
pub(crate) struct Progress {
    /// The client's progress token; none: no progress is told.
    token: Option<Value>,
    sink: UnboundedSender<Value>,
}

/// Whether the client takes an SSE answer.
pub(crate) fn streams(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/event-stream"))
}

/// The progress token of a call whose client takes a stream, if it asked for progress.
pub(crate) fn token(headers: &HeaderMap, params: &Value) -> Option<Value> {
    let token = params.get("_meta")?.get("progressToken")?;
    (streams(headers) && (token.is_string() || token.is_i64())).then(|| token.clone())
}

/// A channel for the call's messages: `token`'s notifications, if any, requests to the
/// client and the final message.
pub(crate) fn channel(token: Option<Value>) -> (Progress, UnboundedReceiver<Value>) {
    let (sink, messages) = mpsc::unbounded();
    (Progress { token, sink }, messages)
}

impl Progress {
    /// Sends the final JSON-RPC message (the stream ends once every sender is gone).
    pub(crate) fn finish(&self, message: Value) {
        let _ = self.sink.unbounded_send(message);
    }

    /// Sends a request to the client (an `elicitation/create`).
    pub(crate) fn send(&self, request: Value) {
        let _ = self.sink.unbounded_send(request);
    }

    /// Notes `event` when it starts something worth telling; `done` counts the notes.
    fn note(&self, event: &Event, done: &mut u64) {
        let Some(token) = &self.token else { return };
        let message = match event {
            Event::StepStarted(e) => format!("step {}", e.step_name),
            Event::ToolCallStart(e) => format!("calling {}", e.tool_call_name),
            Event::TextMessageStart(_) => "answering".to_owned(),
            _ => return,
        };
        *done += 1;
        let _ = self.sink.unbounded_send(json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": token, "progress": *done, "message": message},
        }));
    }
}

/// Every event of a run, telling `progress` (if any) as they come.
pub(crate) async fn collect(
    events: impl Stream<Item = Arc<Event>>,
    progress: Option<&Progress>,
) -> Vec<Arc<Event>> {
    let mut done = 0;
    events
        .map(|event| {
            if let Some(progress) = progress {
                progress.note(&event, &mut done);
            }
            event
        })
        .collect()
        .await
}

/// The SSE answer: `messages` as they come, while `work` (which sends the last one) runs.
pub(crate) fn sse(
    messages: UnboundedReceiver<Value>,
    work: impl std::future::Future<Output = ()> + Send + 'static,
) -> Response {
    let frames = stream::select(
        messages.map(Some),
        stream::once(work).map(|()| None::<Value>),
    )
    .filter_map(|message| async move { message });
    crate::routes::json_event_stream(frames.boxed())
}
