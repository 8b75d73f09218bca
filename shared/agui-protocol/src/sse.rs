//! AG-UI over Server-Sent Events: the encoder (LF-only `data: <json>\n\n` frames,
//! keep-alive comments, optional `id:` lines) and an incremental decoder.

mod fast;
mod json;
mod message;

use std::cell::RefCell;

use bytes::{Bytes, BytesMut};

use crate::{Event, Message};

/// `Content-Type` of an AG-UI SSE response.
pub const CONTENT_TYPE: &str = "text/event-stream";

/// The keep-alive comment frame. Consumers ignore comments.
pub const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// Response headers for any SSE stream: content type, no caching, no proxy buffering.
pub const RESPONSE_HEADERS: [(&str, &str); 3] = [
    ("content-type", CONTENT_TYPE),
    ("cache-control", "no-cache"),
    ("x-accel-buffering", "no"),
];

/// Encodes one event as `data: <json>\n\n`.
///
/// ```
/// use agui_protocol::{event::TextMessageContent, sse};
/// let frame = sse::encode(&TextMessageContent::new("m1", "hé").into());
/// assert_eq!(&frame[..], "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"hé\"}\n\n".as_bytes());
/// ```
pub fn encode(event: &Event) -> Bytes {
    encode_frame(None, event)
}

/// Encodes one event as `id: <id>\ndata: <json>\n\n` (the id a client sends back as
/// `Last-Event-ID` when it reconnects).
///
/// ```
/// use agui_protocol::{event::TextMessageEnd, sse};
/// let frame = sse::encode_with_id(&TextMessageEnd::new("m1").into(), 7);
/// assert_eq!(&frame[..], b"id: 7\ndata: {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m1\"}\n\n");
/// ```
pub fn encode_with_id(event: &Event, id: u64) -> Bytes {
    encode_frame(Some(id), event)
}

/// Appends [`encode_with_id`]'s frame to `buf`: a burst of events framed into one buffer
/// goes out in one write.
pub fn encode_with_id_into(buf: &mut BytesMut, event: &Event, id: u64) {
    fast::frame(buf, Some(id), event);
}

impl Event {
    /// Appends the event's compact JSON to `out`: the bytes `serde_json::to_writer(out, self)`
    /// writes, produced without serde for the common events (stores that keep event logs
    /// as JSON use it too).
    ///
    /// ```
    /// use agui_protocol::{Event, event::TextMessageContent};
    /// let event: Event = TextMessageContent::new("m1", "h\u{e9}\n").into();
    /// let mut json = Vec::new();
    /// event.write_json(&mut json);
    /// assert_eq!(json, serde_json::to_vec(&event).unwrap());
    /// ```
    pub fn write_json(&self, out: &mut Vec<u8>) {
        fast::json(out, self);
    }
}

impl Message {
    /// Appends the message's compact JSON to `out`: the bytes `serde_json::to_writer(out, self)`
    /// writes, produced without serde (for stores that keep a conversation as JSON).
    ///
    /// ```
    /// use agui_protocol::Message;
    /// let message = Message::assistant("a1", "\"done\"");
    /// let mut json = Vec::new();
    /// message.write_json(&mut json);
    /// assert_eq!(json, serde_json::to_vec(&message).unwrap());
    /// ```
    pub fn write_json(&self, out: &mut Vec<u8>) {
        message::message(out, self);
    }
}

/// Scratch space kept below this size between frames (one huge snapshot does not pin
/// its buffer for the life of the thread).
const SCRATCH_KEEP: usize = 64 * 1024;

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// One frame as an exactly-sized `Bytes`: written into a per-thread scratch buffer,
/// then copied once (no growth reallocations, no slack kept alive by the frame).
fn encode_frame(id: Option<u64>, event: &Event) -> Bytes {
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut buf) => {
            buf.clear();
            fast::frame(&mut *buf, id, event);
            let frame = Bytes::copy_from_slice(&buf);
            if buf.capacity() > SCRATCH_KEEP {
                *buf = Vec::new();
            }
            frame
        }
        Err(_) => {
            let mut buf = Vec::with_capacity(256);
            fast::frame(&mut buf, id, event);
            Bytes::from(buf)
        }
    })
}

/// A stateful encoder that can number frames with `id:` lines.
#[derive(Debug, Default, Clone)]
pub struct SseEncoder {
    next_id: Option<u64>,
}

impl SseEncoder {
    /// Frames without `id:` lines (what the official encoders produce).
    pub fn new() -> Self {
        Self { next_id: None }
    }

    /// Frames numbered `id: first`, `first + 1`, … (consumers ignore them; useful for logs).
    pub fn with_sequence_ids(first: u64) -> Self {
        Self {
            next_id: Some(first),
        }
    }

    /// Encodes one event.
    pub fn encode(&mut self, event: &Event) -> Bytes {
        encode_frame(self.take_id(), event)
    }

    /// Appends one encoded event to `buf`.
    pub fn encode_into(&mut self, buf: &mut BytesMut, event: &Event) {
        let id = self.take_id();
        fast::frame(buf, id, event);
    }

    fn take_id(&mut self) -> Option<u64> {
        let id = self.next_id;
        if let Some(n) = self.next_id.as_mut() {
            *n += 1;
        }
        id
    }
}

/// One decoded SSE frame.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseFrame {
    /// The `event:` name, if any.
    pub event: Option<String>,
    /// `data:` lines joined with `\n`.
    pub data: String,
    /// The `id:` value, if any.
    pub id: Option<String>,
}

/// Incremental SSE decoder: frames may be split anywhere, including inside a
/// multi-byte UTF-8 character; multiple `data:` lines are joined with `\n`;
/// comments, `retry:` and unknown fields are ignored. Lines may end in LF or CRLF
/// (use [`SseDecoder::saw_carriage_return`] to enforce LF-only framing).
#[derive(Debug, Default)]
pub struct SseDecoder {
    pending: Vec<u8>,
    frame: SseFrame,
    has_data: bool,
    saw_cr: bool,
    comments: u64,
}

impl SseDecoder {
    /// An empty decoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns every frame completed by them.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseFrame> {
        self.pending.extend_from_slice(chunk);
        let mut frames = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.pending[start..].iter().position(|b| *b == b'\n') {
            let end = start + offset;
            let mut line = &self.pending[start..end];
            if let [rest @ .., b'\r'] = line {
                self.saw_cr = true;
                line = rest;
            }
            let line = String::from_utf8_lossy(line).into_owned();
            start = end + 1;
            if let Some(frame) = self.take_line(&line) {
                frames.push(frame);
            }
        }
        self.pending.drain(..start);
        frames
    }

    /// Bytes received but not yet terminated by a newline.
    pub fn buffered(&self) -> usize {
        self.pending.len()
    }

    /// Whether any line ended in CR (the official client rejects CRLF framing).
    pub fn saw_carriage_return(&self) -> bool {
        self.saw_cr
    }

    /// Comment lines seen (keep-alives).
    pub fn comments_seen(&self) -> u64 {
        self.comments
    }

    fn take_line(&mut self, line: &str) -> Option<SseFrame> {
        if line.is_empty() {
            if !self.has_data {
                self.frame = SseFrame::default();
                return None;
            }
            self.has_data = false;
            return Some(std::mem::take(&mut self.frame));
        }
        if line.starts_with(':') {
            self.comments += 1;
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.frame.data.push('\n');
                }
                self.frame.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.frame.event = Some(value.to_owned()),
            "id" => self.frame.id = Some(value.to_owned()),
            _ => {}
        }
        None
    }
}
