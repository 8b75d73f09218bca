//! Turning an event stream into a streamed HTTP body: AG-UI SSE, A2UI or
//! legacy framing, with keep-alive comments during quiet periods; or AG-UI
//! protobuf, length-prefixed and without keep-alives (it has no comments).

use std::borrow::Borrow;
use std::convert::Infallible;

use agui_protocol::a2ui::A2uiEncoder;
use agui_protocol::{Event, Message, a2ui};
use agui_protocol::{proto, sse};
use axum::body::Body;
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use futures::future::{Either, select};
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use handoff_core::Runtime;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};

/// [`sse::RESPONSE_HEADERS`], parsed at compile time (a `&str` name is parsed on every
/// insert).
const SSE_HEADERS: [(HeaderName, HeaderValue); 3] = {
    const fn parsed((name, value): (&'static str, &'static str)) -> (HeaderName, HeaderValue) {
        (
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        )
    }
    let [first, second, third] = sse::RESPONSE_HEADERS;
    [parsed(first), parsed(second), parsed(third)]
};

/// How events are framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// AG-UI `data: <json>\n\n`.
    AgUi,
    /// A2UI named frames.
    A2ui,
    /// Superagent legacy mode (raw text tokens, `[DONE]`).
    Legacy,
    /// AG-UI protobuf messages, each after a 4-byte big-endian length.
    Proto,
}

impl Encoding {
    /// A2UI when the request asks for it (`X-A2UI: true` or `?a2ui=true`); else,
    /// where `default` is AG-UI, protobuf when `Accept` names its media type; else `default`.
    pub fn negotiate(headers: &HeaderMap, query: Option<&str>, default: Encoding) -> Encoding {
        let header = headers.get(a2ui::HEADER).and_then(|v| v.to_str().ok());
        if a2ui::requested(header, query) {
            Encoding::A2ui
        } else if default == Encoding::AgUi && accepts_proto(headers) {
            Encoding::Proto
        } else {
            default
        }
    }

    /// Whether frames name tools of earlier runs, so the route must load the
    /// thread's history (A2UI and legacy do; AG-UI in either encoding never).
    pub fn needs_history(self) -> bool {
        matches!(self, Encoding::A2ui | Encoding::Legacy)
    }
}

/// Any `Accept` value lists the protobuf media type (parameters and case aside).
fn accepts_proto(headers: &HeaderMap) -> bool {
    headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|range| {
            let media = range.split(';').next().unwrap_or_default().trim();
            media.eq_ignore_ascii_case(proto::MEDIA_TYPE)
        })
}

enum Framer {
    /// AG-UI frames carry their event's id (its 1-based position in the run).
    AgUi,
    A2ui(Box<A2uiEncoder>, bool),
    Proto,
}

impl Framer {
    fn frame_into(&mut self, buf: &mut BytesMut, id: u64, event: &Event, now_ms: u64) {
        match self {
            Framer::AgUi => sse::encode_with_id_into(buf, event, id),
            Framer::A2ui(encoder, false) => buf.extend_from_slice(&encoder.encode(event, now_ms)),
            Framer::A2ui(encoder, true) => {
                buf.extend_from_slice(&encoder.encode_legacy(event, now_ms));
            }
            Framer::Proto => buf.extend_from_slice(&proto::encode_frame(event)),
        }
    }
}

/// Events already waiting when a write starts go out in it, up to this many bytes: a run
/// that emits a burst (a snapshot, a finished tool call, the end of a run) costs one write
/// and one wake-up of the client instead of one per event; a lone event still leaves at once.
const BATCH_BYTES: usize = 64 * 1024;

/// An SSE response (200, event-stream headers) streaming a run's `events` from its
/// first, in `encoding`; AG-UI frames are numbered `id: 1`, `2`, … (With
/// [`Encoding::Proto`] it is a protobuf stream instead, which carries no ids.)
///
/// `history` lets A2UI frames name tools called in earlier runs of the thread. Events may
/// be owned ([`handoff_core::RunStream`]) or shared ([`handoff_core::SharedRunStream`]).
pub fn sse_response<E: Borrow<Event> + Send + 'static>(
    events: BoxStream<'static, E>,
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
pub fn sse_response_numbered<E: Borrow<Event> + Send + 'static>(
    events: BoxStream<'static, (u64, E)>,
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
                    encoder.remember_tool_call(call.id.clone(), call.function.name.clone());
                }
            }
        }
        Box::new(encoder)
    };
    let framer = match encoding {
        Encoding::AgUi => Framer::AgUi,
        Encoding::A2ui => Framer::A2ui(a2ui(), false),
        Encoding::Legacy => Framer::A2ui(a2ui(), true),
        Encoding::Proto => Framer::Proto,
    };
    // A protobuf stream has no comment frame: it waits without keep-alives.
    let keep_alive = encoding != Encoding::Proto;
    let pump = Pump {
        events,
        framer,
        runtime,
        ended: false,
    };
    let stream = futures::stream::unfold(pump, move |mut pump| async move {
        while !pump.ended {
            // `None`: quiet for `keep_alive_ms`; `Some(None)`: the run's stream ended.
            // An event already waiting needs no timer (arming one costs a driver wake-up).
            let next = if let Some(ready) = pump.events.next().now_or_never() {
                Some(ready)
            } else if keep_alive {
                let sleep = pump.runtime.sleep.sleep(keep_alive_ms);
                match select(pump.events.next(), sleep).await {
                    Either::Left((next, _)) => Some(next),
                    Either::Right(((), _)) => None,
                }
            } else {
                Some(pump.events.next().await)
            };
            match next {
                Some(Some((id, event))) => {
                    let bytes = pump.batch(id, event.borrow());
                    if !bytes.is_empty() {
                        return Some((bytes, pump));
                    }
                }
                Some(None) => return None,
                // Quiet for a while: a comment keeps proxies and clients from timing out.
                None => return Some((Bytes::from_static(sse::KEEP_ALIVE), pump)),
            }
        }
        None
    });
    let body = Body::from_stream(stream.map(Ok::<_, Infallible>));
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    for (name, value) in SSE_HEADERS {
        response.headers_mut().insert(name, value);
    }
    if encoding == Encoding::Proto {
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static(proto::MEDIA_TYPE),
        );
    }
    response
}

/// The state of a response body: the run's events and how they are framed.
struct Pump<E> {
    events: BoxStream<'static, (u64, E)>,
    framer: Framer,
    runtime: Runtime,
    /// The events ended while a batch was being gathered.
    ended: bool,
}

impl<E: Borrow<Event>> Pump<E> {
    /// `first`, then every event already waiting (up to [`BATCH_BYTES`]), framed in one chunk.
    fn batch(&mut self, id: u64, first: &Event) -> Bytes {
        let now_ms = self.runtime.now_ms();
        let mut buf = BytesMut::with_capacity(512);
        self.framer.frame_into(&mut buf, id, first, now_ms);
        while buf.len() < BATCH_BYTES {
            match self.events.next().now_or_never() {
                Some(Some((id, event))) => {
                    self.framer.frame_into(&mut buf, id, event.borrow(), now_ms);
                }
                Some(None) => {
                    self.ended = true;
                    break;
                }
                None => break,
            }
        }
        buf.freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::ACCEPT, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn proto_is_chosen_by_accept_where_ag_ui_is_the_default() {
        let ag_ui = |h: &HeaderMap, q| Encoding::negotiate(h, q, Encoding::AgUi);
        assert_eq!(ag_ui(&accept(proto::MEDIA_TYPE), None), Encoding::Proto);
        let listed = accept("text/event-stream, Application/VND.ag-ui.event+proto;q=0.9");
        assert_eq!(ag_ui(&listed, None), Encoding::Proto);
        assert_eq!(ag_ui(&accept("text/event-stream"), None), Encoding::AgUi);
        assert_eq!(ag_ui(&HeaderMap::new(), None), Encoding::AgUi);
        // A2UI selection wins, and the legacy routes keep their own framing.
        assert_eq!(
            ag_ui(&accept(proto::MEDIA_TYPE), Some("a2ui=true")),
            Encoding::A2ui
        );
        assert_eq!(
            Encoding::negotiate(&accept(proto::MEDIA_TYPE), None, Encoding::Legacy),
            Encoding::Legacy
        );
    }
}
