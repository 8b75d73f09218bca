//! The AG-UI protobuf encoding (`application/vnd.ag-ui.event+proto`), byte
//! for byte what the official `@ag-ui/proto` 1.0.0 `encode(event)` writes.
//!
//! The official encoder works on an event's JSON form: it picks the envelope
//! arm from `type`, moves `timestamp`/`rawEvent`/`metadata` into a
//! `BaseEvent`, and lets the generated codecs pick fields by name. Encoding
//! from our own JSON form the same way keeps the two in step field for field
//! (an unknown field is dropped by both, an absent one omitted by both)
//! rather than relying on a second hand-kept mapping of every Rust struct.
//!
//! The messages are declared by hand with `prost` and the official field
//! numbers, so nothing needs `protoc`.
//!
//! Over HTTP each message is preceded by its length as a 4-byte big-endian
//! integer ([`encode_frame`]), which is how the official client splits the
//! response body; there are no comments, so no keep-alives.

mod common;
mod lifecycle;
mod run;
mod special;
mod stream;
mod value;

#[cfg(test)]
mod golden;
#[cfg(test)]
mod tests;

use bytes::{BufMut, Bytes, BytesMut};
use prost::Message as _;

use crate::event::{Event, EventType};
use value::{Fields, Struct, Value};

/// The media type a client puts in `Accept` to get this encoding, and the
/// response's `content-type` (the official client compares it verbatim).
pub const MEDIA_TYPE: &str = "application/vnd.ag-ui.event+proto";

/// One event as one protobuf `Event` message, without framing.
pub fn encode(event: &Event) -> Vec<u8> {
    envelope(event).encode_to_vec()
}

/// One event as sent over HTTP: a 4-byte big-endian length, then the message.
pub fn encode_frame(event: &Event) -> Bytes {
    let message = envelope(event);
    let len = message.encoded_len();
    let mut out = BytesMut::with_capacity(4 + len);
    // Events are far below 4 GiB (the official reader stops at 10 MiB).
    out.put_u32(u32::try_from(len).unwrap_or(u32::MAX));
    message.encode_raw(&mut out);
    out.freeze()
}

/// The envelope fields every event message carries as its field 1.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct BaseEvent {
    /// The `EventType` enum, numbered independently of the envelope arms.
    #[prost(int32, tag = "1")]
    pub(crate) r#type: i32,
    #[prost(int64, optional, tag = "2")]
    pub(crate) timestamp: Option<i64>,
    #[prost(message, optional, tag = "3")]
    pub(crate) raw_event: Option<Value>,
    #[prost(message, optional, tag = "4")]
    pub(crate) metadata: Option<Struct>,
}

/// The top-level `Event` message: one arm set.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Envelope {
    #[prost(
        oneof = "Arm",
        tags = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31"
    )]
    pub(crate) event: Option<Arm>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum Arm {
    #[prost(message, tag = "1")]
    TextMessageStart(stream::TextMessageStart),
    #[prost(message, tag = "2")]
    TextMessageContent(stream::TextMessageContent),
    #[prost(message, tag = "3")]
    TextMessageEnd(stream::IdEnd),
    #[prost(message, tag = "4")]
    ToolCallStart(stream::ToolCallStart),
    #[prost(message, tag = "5")]
    ToolCallArgs(stream::ToolCallArgs),
    #[prost(message, tag = "6")]
    ToolCallEnd(stream::IdEnd),
    #[prost(message, tag = "7")]
    StateSnapshot(lifecycle::StateSnapshot),
    #[prost(message, tag = "8")]
    StateDelta(lifecycle::StateDelta),
    #[prost(message, tag = "9")]
    MessagesSnapshot(lifecycle::MessagesSnapshot),
    #[prost(message, tag = "10")]
    Raw(special::Raw),
    #[prost(message, tag = "11")]
    Custom(special::Custom),
    #[prost(message, tag = "12")]
    RunStarted(lifecycle::RunStarted),
    #[prost(message, tag = "13")]
    RunFinished(lifecycle::RunFinished),
    #[prost(message, tag = "14")]
    RunError(lifecycle::RunError),
    #[prost(message, tag = "15")]
    StepStarted(lifecycle::Step),
    #[prost(message, tag = "16")]
    StepFinished(lifecycle::Step),
    #[prost(message, tag = "17")]
    TextMessageChunk(stream::TextMessageChunk),
    #[prost(message, tag = "18")]
    ToolCallChunk(stream::ToolCallChunk),
    #[prost(message, tag = "19")]
    SubagentStarted(special::SubagentStarted),
    #[prost(message, tag = "20")]
    SubagentFinished(special::SubagentFinished),
    #[prost(message, tag = "21")]
    SubagentError(special::SubagentError),
    #[prost(message, tag = "22")]
    ToolCallResult(stream::ToolCallResult),
    #[prost(message, tag = "23")]
    ActivitySnapshot(lifecycle::ActivitySnapshot),
    #[prost(message, tag = "24")]
    ActivityDelta(lifecycle::ActivityDelta),
    #[prost(message, tag = "25")]
    ReasoningStart(stream::ReasoningId),
    #[prost(message, tag = "26")]
    ReasoningMessageStart(stream::ReasoningMessageField),
    #[prost(message, tag = "27")]
    ReasoningMessageContent(stream::ReasoningMessageField),
    #[prost(message, tag = "28")]
    ReasoningMessageEnd(stream::ReasoningId),
    #[prost(message, tag = "29")]
    ReasoningMessageChunk(stream::ReasoningMessageChunk),
    #[prost(message, tag = "30")]
    ReasoningEnd(stream::ReasoningId),
    #[prost(message, tag = "31")]
    ReasoningEncryptedValue(stream::ReasoningEncryptedValue),
}

/// The `EventType` enum value of `BaseEvent.type`.
fn type_number(t: EventType) -> i32 {
    use EventType::*;
    match t {
        TextMessageStart => 0,
        TextMessageContent => 1,
        TextMessageEnd => 2,
        ToolCallStart => 3,
        ToolCallArgs => 4,
        ToolCallEnd => 5,
        StateSnapshot => 6,
        StateDelta => 7,
        MessagesSnapshot => 8,
        Raw => 9,
        Custom => 10,
        RunStarted => 11,
        RunFinished => 12,
        RunError => 13,
        StepStarted => 14,
        StepFinished => 15,
        SubagentStarted => 16,
        SubagentFinished => 17,
        SubagentError => 18,
        TextMessageChunk => 19,
        ToolCallChunk => 20,
        ToolCallResult => 21,
        ActivitySnapshot => 22,
        ActivityDelta => 23,
        ReasoningStart => 24,
        ReasoningMessageStart => 25,
        ReasoningMessageContent => 26,
        ReasoningMessageEnd => 27,
        ReasoningMessageChunk => 28,
        ReasoningEnd => 29,
        ReasoningEncryptedValue => 30,
    }
}

pub(crate) fn envelope(event: &Event) -> Envelope {
    // Serializing our own types cannot fail (string keys only); an empty
    // object would still yield a well-formed, if bare, message.
    let json = serde_json::to_value(event).unwrap_or_default();
    let f = Fields::of(&json);
    let kind = event.event_type();
    let b = BaseEvent {
        r#type: type_number(kind),
        timestamp: f.int64("timestamp"),
        raw_event: f.get("rawEvent").map(Value::from_json),
        metadata: f.object("metadata"),
    };
    use EventType as T;
    use lifecycle as l;
    use special as x;
    use stream as s;
    let arm = match kind {
        T::TextMessageStart => Arm::TextMessageStart(s::text_message_start(b, f)),
        T::TextMessageContent => Arm::TextMessageContent(s::text_message_content(b, f)),
        T::TextMessageEnd => Arm::TextMessageEnd(s::id_end(b, f, "messageId")),
        T::TextMessageChunk => Arm::TextMessageChunk(s::text_message_chunk(b, f)),
        T::ToolCallStart => Arm::ToolCallStart(s::tool_call_start(b, f)),
        T::ToolCallArgs => Arm::ToolCallArgs(s::tool_call_args(b, f)),
        T::ToolCallEnd => Arm::ToolCallEnd(s::id_end(b, f, "toolCallId")),
        T::ToolCallChunk => Arm::ToolCallChunk(s::tool_call_chunk(b, f)),
        T::ToolCallResult => Arm::ToolCallResult(s::tool_call_result(b, f)),
        T::ReasoningStart => Arm::ReasoningStart(s::reasoning_id(b, f)),
        T::ReasoningMessageStart => {
            Arm::ReasoningMessageStart(s::reasoning_message_field(b, f, "role"))
        }
        T::ReasoningMessageContent => {
            Arm::ReasoningMessageContent(s::reasoning_message_field(b, f, "delta"))
        }
        T::ReasoningMessageEnd => Arm::ReasoningMessageEnd(s::reasoning_id(b, f)),
        T::ReasoningMessageChunk => Arm::ReasoningMessageChunk(s::reasoning_message_chunk(b, f)),
        T::ReasoningEnd => Arm::ReasoningEnd(s::reasoning_id(b, f)),
        T::ReasoningEncryptedValue => {
            Arm::ReasoningEncryptedValue(s::reasoning_encrypted_value(b, f))
        }
        T::RunStarted => Arm::RunStarted(l::run_started(b, f)),
        T::RunFinished => Arm::RunFinished(l::run_finished(b, f)),
        T::RunError => Arm::RunError(l::run_error(b, f)),
        T::StepStarted => Arm::StepStarted(l::step(b, f)),
        T::StepFinished => Arm::StepFinished(l::step(b, f)),
        T::StateSnapshot => Arm::StateSnapshot(l::state_snapshot(b, f)),
        T::StateDelta => Arm::StateDelta(l::state_delta(b, f)),
        T::MessagesSnapshot => Arm::MessagesSnapshot(l::messages_snapshot(b, f)),
        T::ActivitySnapshot => Arm::ActivitySnapshot(l::activity_snapshot(b, f)),
        T::ActivityDelta => Arm::ActivityDelta(l::activity_delta(b, f)),
        T::SubagentStarted => Arm::SubagentStarted(x::subagent_started(b, f)),
        T::SubagentFinished => Arm::SubagentFinished(x::subagent_finished(b, f)),
        T::SubagentError => Arm::SubagentError(x::subagent_error(b, f)),
        T::Raw => Arm::Raw(x::raw(b, f)),
        T::Custom => Arm::Custom(x::custom(b, f)),
    };
    Envelope { event: Some(arm) }
}
