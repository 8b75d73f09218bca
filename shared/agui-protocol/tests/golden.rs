//! Golden fixtures (`tests/fixtures` at the workspace root): parse → serialize →
//! reparse equality, and serialization equal to the fixture byte-for-value
//! (nothing added, nothing dropped, optional fields omitted rather than null).

use std::path::PathBuf;

use agui_protocol::lenient::{EventReader, parse_input};
use agui_protocol::{Event, EventType, Message, RunAgentInput};
use serde_json::Value;

fn fixtures(dir: &str) -> Vec<(String, Value)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(dir);
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                serde_json::from_str(&text).unwrap(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!out.is_empty(), "no fixtures in {}", root.display());
    out
}

fn round_trip<T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
    name: &str,
    value: &Value,
) {
    let parsed: T = serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let written = serde_json::to_value(&parsed).unwrap();
    assert_eq!(
        &written, value,
        "{name}: serialization differs from the fixture"
    );
    let reparsed: T = serde_json::from_value(written).unwrap();
    assert_eq!(reparsed, parsed, "{name}: reparse differs");
}

#[test]
fn every_event_fixture_round_trips_exactly() {
    let mut seen = std::collections::HashSet::new();
    for (name, value) in fixtures("events") {
        round_trip::<Event>(&name, &value);
        let event: Event = serde_json::from_value(value).unwrap();
        seen.insert(event.event_type());
    }
    let missing: Vec<_> = EventType::ALL
        .iter()
        .filter(|t| !seen.contains(t))
        .collect();
    assert!(
        missing.is_empty(),
        "event types without a fixture: {missing:?}"
    );
}

#[test]
fn every_message_role_round_trips_exactly() {
    let fixtures = fixtures("messages");
    assert_eq!(fixtures.len(), 7, "one fixture per role");
    for (name, value) in fixtures {
        round_trip::<Message>(&name, &value);
    }
}

#[test]
fn inputs_round_trip_exactly() {
    for (name, value) in fixtures("inputs") {
        round_trip::<RunAgentInput>(&name, &value);
    }
}

#[test]
fn nulls_in_optional_positions_read_as_absent() {
    for (name, case) in fixtures("null-omission") {
        let input = case["in"].to_string();
        let written = match case["kind"].as_str() {
            Some("input") => serde_json::to_value(parse_input(input.as_bytes()).unwrap()).unwrap(),
            _ => serde_json::to_value(
                EventReader::new()
                    .read_str(&input)
                    .unwrap_or_else(|e| panic!("{name}: {e}")),
            )
            .unwrap(),
        };
        assert_eq!(written, case["out"], "{name}");
    }
}

#[test]
fn malformed_known_values_name_their_path() {
    let cases = [
        (
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i"}]}}"#,
            "outcome",
        ),
        (
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":7,"delta":"x"}"#,
            "messageId",
        ),
        (
            r#"{"type":"TEXT_MESSAGE_END","messageId":"m","timestamp":1.5}"#,
            "timestamp",
        ),
    ];
    for (text, needle) in cases {
        let err = EventReader::new().read_str(text).unwrap_err();
        assert!(err.to_string().contains(needle), "{text}: {err}");
    }
    let err = parse_input(
        br#"{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":5}]}"#,
    )
    .unwrap_err();
    assert_eq!(err.path(), Some("messages[0].content"), "{err}");
    // A member before `role` is read only once the role is known: named by its message.
    let err = parse_input(
        br#"{"threadId":"t","runId":"r","messages":[{"content":5,"id":"m","role":"user"}]}"#,
    )
    .unwrap_err();
    assert_eq!(err.path(), Some("messages[0]"), "{err}");
    assert!(err.to_string().contains("content parts"), "{err}");
    let err = parse_input(br#"{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"i","status":"approved"}]}"#).unwrap_err();
    assert!(
        err.path().is_some_and(|p| p.starts_with("resume[0]")),
        "{err}"
    );
    let err = parse_input(br#"{"threadId":"t","messages":[]}"#).unwrap_err();
    assert!(err.to_string().contains("runId"), "{err}");
}
