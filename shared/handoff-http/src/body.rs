//! Turning an event stream into a streamed HTTP body: AG-UI SSE, A2UI or
//! legacy framing, with keep-alive comments during quiet periods.

use std::convert::Infallible;

use agui_protocol::a2ui::A2uiEncoder;
use agui_protocol::sse;
use agui_protocol::{Event, Message, a2ui};
use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use futures::StreamExt;
use futures::future::{Either, select};
use futures::stream::BoxStream;
use handoff_core::Runtime;
use http::{HeaderMap, HeaderValue, StatusCode};

/// How events are framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// AG-UI `data: <json>\n\n`.
    AgUi,
    /// A2UI named frames.
    A2ui,
    /// Superagent legacy mode (raw text tokens, `[DONE]`).
    Legacy,
}

impl Encoding {
    /// A2UI when the request asks for it (`X-A2UI: true` or `?a2ui=true`), else `default`.
    pub fn negotiate(headers: &HeaderMap, query: Option<&str>, default: Encoding) -> Encoding {
        let header = headers.get(a2ui::HEADER).and_then(|v| v.to_str().ok());
        if a2ui::requested(header, query) {
            Encoding::A2ui
        } else {
            default
        }
    }
}

enum Framer {
    /// AG-UI frames carry their event's id (its 1-based position in the run).
    AgUi,
    A2ui(Box<A2uiEncoder>, bool),
}

impl Framer {
    fn frame(&mut self, id: u64, event: &Event, now_ms: u64) -> Bytes {
        match self {
            Framer::AgUi => sse::encode_with_id(event, id),
            Framer::A2ui(encoder, false) => encoder.encode(event, now_ms),
            Framer::A2ui(encoder, true) => encoder.encode_legacy(event, now_ms),
        }
    }
}

/// An SSE response (200, event-stream headers) streaming a run's `events` from its
/// first, in `encoding`; AG-UI frames are numbered `id: 1`, `2`, …
///
/// `history` lets A2UI frames name tools called in earlier runs of the thread.
pub fn sse_response(
    events: BoxStream<'static, Event>,
    encoding: Encoding,
    agent_name: &str,
    history: &[Message],
    runtime: Runtime,
    keep_alive_ms: u64,
) -> Response {
    let numbered = events
        .enumerate()
        .map(|(index, event)| (index as u64 + 1, event));
    sse_response_numbered(
        Box::pin(numbered),
        encoding,
        agent_name,
        history,
        runtime,
        keep_alive_ms,
    )
}

/// [`sse_response`] for events that carry their own ids (a stream rejoined part-way,
/// see [`agui_protocol::span::rejoin`]).
pub fn sse_response_numbered(
    events: BoxStream<'static, (u64, Event)>,
    encoding: Encoding,
    agent_name: &str,
    history: &[Message],
    runtime: Runtime,
    keep_alive_ms: u64,
) -> Response {
    let a2ui = || {
        let mut encoder = A2uiEncoder::new(agent_name);
        for message in history {
            if let Message::Assistant(m) = message {
                for call in m.tool_calls.iter().flatten() {
                    encoder.remember_tool_call(call.id.to_string(), call.function.name.clone());
                }
            }
        }
        Box::new(encoder)
    };
    let framer = match encoding {
        Encoding::AgUi => Framer::AgUi,
        Encoding::A2ui => Framer::A2ui(a2ui(), false),
        Encoding::Legacy => Framer::A2ui(a2ui(), true),
    };
    let stream = futures::stream::unfold(
        (events, framer, runtime),
        move |(mut events, mut framer, runtime)| async move {
            loop {
                let tick = runtime.sleep.sleep(keep_alive_ms);
                match select(events.next(), tick).await {
                    Either::Left((Some((id, event)), _)) => {
                        let bytes = framer.frame(id, &event, runtime.now_ms());
                        if !bytes.is_empty() {
                            return Some((bytes, (events, framer, runtime)));
                        }
                    }
                    Either::Left((None, _)) => return None,
                    // Quiet for a while: a comment keeps proxies and clients from timing out.
                    Either::Right(((), _)) => {
                        return Some((
                            Bytes::from_static(sse::KEEP_ALIVE),
                            (events, framer, runtime),
                        ));
                    }
                }
            }
        },
    );
    let body = Body::from_stream(stream.map(Ok::<_, Infallible>));
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    for (name, value) in sse::RESPONSE_HEADERS {
        response
            .headers_mut()
            .insert(name, HeaderValue::from_static(value));
    }
    response
}
