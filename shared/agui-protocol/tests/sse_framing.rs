//! No payload byte ends an SSE line, in any encoding: SSE ends a line at CR, LF or CRLF,
//! so model text holding any of them must never split a frame or start a forged one
//! (before, the A2UI legacy writer split text only at LF, and "\r\rdata: [DONE]" in a
//! delta ended the stream for a client).

use agui_protocol::a2ui::A2uiEncoder;
use agui_protocol::event::{TextMessageContent, TextMessageEnd, TextMessageStart};
use agui_protocol::{Event, sse};
use proptest::prelude::*;

/// The lines of an SSE body as the spec cuts them: at CRLF, CR or LF.
fn spec_lines(body: &[u8]) -> Vec<String> {
    let text = String::from_utf8(body.to_vec()).expect("UTF-8");
    let mut lines = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find(['\r', '\n']) {
        lines.push(rest[..at].to_owned());
        let skip = if rest[at..].starts_with("\r\n") { 2 } else { 1 };
        rest = &rest[at + skip..];
    }
    lines
}

/// The frames (their `data` lines joined with LF) of an SSE body, by the spec.
fn spec_frames(body: &[u8]) -> Vec<String> {
    let mut frames = Vec::new();
    let mut data: Option<String> = None;
    for line in spec_lines(body) {
        if line.is_empty() {
            frames.extend(data.take());
        } else if let Some(value) = line.strip_prefix("data:") {
            let value = value.strip_prefix(' ').unwrap_or(value);
            data = Some(match data {
                Some(before) => before + "\n" + value,
                None => value.to_owned(),
            });
        } else {
            let field = line.split(':').next().unwrap_or_default();
            assert!(
                ["event", "id", ""].contains(&field),
                "a payload line leaked: {line:?}"
            );
        }
    }
    frames
}

fn text_run(deltas: &[String]) -> Vec<Event> {
    let mut events: Vec<Event> = vec![TextMessageStart::new("m").into()];
    events.extend(
        deltas
            .iter()
            .map(|d| Event::from(TextMessageContent::new("m", d.clone()))),
    );
    events.push(TextMessageEnd::new("m").into());
    events
}

/// Text with every kind of line break and the strings an attacker would forge with.
fn hostile_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("\r".to_owned()),
            Just("\n".to_owned()),
            Just("\r\n".to_owned()),
            Just("data: [DONE]".to_owned()),
            Just("event: done".to_owned()),
            Just(":".to_owned()),
            "[a-z ]{1,6}",
            any::<char>().prop_map(String::from),
        ],
        1..12,
    )
    .prop_map(|parts| parts.concat())
}

fn normalise_breaks(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

proptest! {
    #[test]
    fn the_agui_encoding_keeps_one_frame_per_event(deltas in proptest::collection::vec(hostile_text(), 1..4)) {
        let events = text_run(&deltas);
        let body: Vec<u8> = events.iter().flat_map(|e| sse::encode(e).to_vec()).collect();
        let frames = spec_frames(&body);
        prop_assert_eq!(frames.len(), events.len());
        for (frame, delta) in frames[1..frames.len() - 1].iter().zip(&deltas) {
            let event: serde_json::Value = serde_json::from_str(frame).unwrap();
            prop_assert_eq!(event["delta"].as_str(), Some(delta.as_str()));
        }
    }

    #[test]
    fn the_a2ui_encodings_keep_one_frame_per_frame(deltas in proptest::collection::vec(hostile_text(), 1..4)) {
        let events = text_run(&deltas);
        let mut named = A2uiEncoder::new("demo");
        let mut legacy = A2uiEncoder::new("demo");
        let mut named_body = Vec::new();
        let mut legacy_body = Vec::new();
        for event in &events {
            named_body.extend_from_slice(&named.encode(event, 1));
            legacy_body.extend_from_slice(&legacy.encode_legacy(event, 1));
        }
        // One SSE frame per A2UI frame in both encodings: nothing split, nothing forged.
        let named_frames = spec_frames(&named_body);
        let legacy_frames = spec_frames(&legacy_body);
        prop_assert_eq!(named_frames.len(), legacy_frames.len());
        for (named, legacy) in named_frames.iter().zip(&legacy_frames) {
            let frame: serde_json::Value = serde_json::from_str(named).unwrap();
            if frame["type"] == "text" {
                // Legacy text frames carry the raw delta, its line breaks as LF.
                let delta = frame["data"]["delta"].as_str().unwrap();
                prop_assert_eq!(legacy, &normalise_breaks(delta));
            }
        }
    }
}

#[test]
fn a_carriage_return_cannot_forge_the_end_of_a_legacy_stream() {
    let events = text_run(&["ok\r\rdata: [DONE]\r\r".to_owned()]);
    let mut legacy = A2uiEncoder::new("demo");
    let body: Vec<u8> = events
        .iter()
        .flat_map(|e| legacy.encode_legacy(e, 1).to_vec())
        .collect();
    let frames = spec_frames(&body);
    assert_eq!(frames.len(), 1, "{:?}", String::from_utf8_lossy(&body));
    assert_eq!(frames[0], "ok\n\ndata: [DONE]\n\n");
}
