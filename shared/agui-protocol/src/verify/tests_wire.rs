//! SSE-level and schema-level checks (`verify_sse`).

use serde_json::{Value, json};

use super::*;
use crate::event::*;

fn body(frames: &[Value]) -> Vec<u8> {
    frames
        .iter()
        .map(|f| format!("data: {f}\n\n"))
        .collect::<String>()
        .into_bytes()
}

fn started() -> Value {
    json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"})
}

fn finished() -> Value {
    json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "success"}})
}

/// A run around `middle`.
fn run(middle: &[Value]) -> Vec<u8> {
    let mut frames = vec![started()];
    frames.extend_from_slice(middle);
    frames.push(finished());
    body(&frames)
}

fn official(bytes: &[u8]) -> Result<Report, Violation> {
    verify_sse(bytes, VerifyOptions::official())
}

fn strict(bytes: &[u8]) -> Result<Report, Violation> {
    verify_sse(bytes, VerifyOptions::strict())
}

#[track_caller]
fn rule(result: Result<Report, Violation>) -> (&'static str, Option<usize>) {
    let err = result.expect_err("should be rejected");
    (err.rule, err.index)
}

#[test]
fn encoder_output_passes_strict() {
    let events: Vec<Event> = vec![
        RunStarted {
            protocol_version: Some("1.0".into()),
            ..RunStarted::new("t", "r")
        }
        .into(),
        TextMessageStart::new("m").into(),
        TextMessageContent::new("m", "héllo 漢").into(),
        TextMessageEnd::new("m").into(),
        RunFinished {
            outcome: Some(crate::RunFinishedOutcome::success()),
            ..RunFinished::new("t", "r")
        }
        .into(),
    ];
    let mut encoder = crate::sse::SseEncoder::with_sequence_ids(1);
    let mut bytes = b": keep-alive\n\n".to_vec();
    for e in &events {
        bytes.extend_from_slice(&encoder.encode(e));
    }
    let report = verify_sse(&bytes, VerifyOptions::strict().with_ids("t", "r")).unwrap();
    assert_eq!(report.events, 5);
    assert!(report.warnings.is_empty());
}

#[test]
fn frames_with_event_lines_and_multiline_data() {
    let bytes = b"event: message\nid: 7\ndata: {\"type\":\"RUN_STARTED\",\ndata: \"threadId\":\"t\",\"runId\":\"r\",\"protocolVersion\":\"1.0\"}\n\n: ping\n\ndata: {\"type\":\"RUN_ERROR\",\"message\":\"x\"}\n\n";
    assert_eq!(strict(bytes).unwrap().runs[0].outcome, OutcomeKind::Error);
}

#[test]
fn crlf_framing_is_rejected() {
    let bytes = String::from_utf8(run(&[])).unwrap().replace('\n', "\r\n");
    assert_eq!(rule(official(bytes.as_bytes())), ("SSE-CRLF", Some(0)));
    let mut tail = run(&[]);
    tail.extend_from_slice(b"data: {}\r\n\r\n");
    assert_eq!(rule(official(&tail)), ("SSE-CRLF", Some(2)));
}

#[test]
fn unterminated_tail_is_parsed_like_the_client_but_strict_rejects_it() {
    let mut bytes = body(&[started()]);
    bytes.extend_from_slice(format!("data: {}", finished()).as_bytes());
    assert_eq!(
        official(&bytes).unwrap().runs[0].outcome,
        OutcomeKind::Success
    );
    assert_eq!(rule(strict(&bytes)), ("SSE-TAIL", Some(1)));
}

#[test]
fn invalid_utf8_is_strict_only() {
    let mut bytes = body(&[started()]);
    bytes.extend_from_slice(b"data: {\"type\":\"CUSTOM\",\"name\":\"x\",\"value\":\"\xff\"}\n\n");
    bytes.extend_from_slice(&body(&[finished()]));
    assert!(official(&bytes).is_ok());
    assert_eq!(rule(strict(&bytes)), ("SSE-UTF8", None));
}

#[test]
fn frame_must_be_an_object_with_a_type() {
    assert_eq!(rule(official(b"data: not json\n\n")), ("SSE-JSON", Some(0)));
    assert_eq!(rule(official(&body(&[json!([1])]))), ("SSE-FRAME", Some(0)));
    assert_eq!(
        rule(official(&body(&[json!({"type": ""})]))),
        ("SSE-FRAME", Some(0))
    );
    assert_eq!(
        rule(official(&body(&[json!({"type": 3})]))),
        ("SSE-FRAME", Some(0))
    );
}

#[test]
fn unknown_event_types_are_dropped_in_official_mode() {
    let bytes = run(&[json!({"type": "NOT_A_TYPE", "x": 1})]);
    let report = official(&bytes).unwrap();
    assert_eq!((report.dropped, report.events), (1, 2));
    assert!(report.warnings[0].contains("NOT_A_TYPE"));
    assert_eq!(rule(strict(&bytes)), ("UNKNOWN-EVENT", Some(1)));
}

#[test]
fn malformed_known_values_are_schema_violations() {
    let err = official(&run(&[
        json!({"type": "TEXT_MESSAGE_START", "messageId": 7}),
    ]))
    .unwrap_err();
    assert_eq!((err.rule, err.index), ("SCHEMA", Some(1)));
    assert!(err.message.contains("messageId"), "{err}");
    let interrupts = json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "interrupt", "interrupts": []}});
    assert_eq!(
        rule(official(&body(&[started(), interrupts]))),
        ("SCHEMA", Some(1))
    );
    let no_reason = json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "interrupt", "interrupts": [{"id": "i"}]}});
    assert_eq!(
        rule(official(&body(&[started(), no_reason]))),
        ("SCHEMA", Some(1))
    );
    let role = json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "robot"});
    assert_eq!(rule(official(&run(&[role]))), ("SCHEMA", Some(1)));
}

#[test]
fn timestamps() {
    let mut fractional = started();
    fractional["timestamp"] = json!(1762374498.96628);
    let err = official(&body(&[fractional])).unwrap_err();
    assert_eq!(err.rule, "SCHEMA");
    let mut huge = started();
    huge["timestamp"] = json!(9007199254740992u64);
    assert_eq!(
        rule(official(&body(&[huge, finished()]))),
        ("SCHEMA", Some(0))
    );
    // Integral floats and negatives are integers for the client: warned, strict rejects.
    for ts in [json!(1.0), json!(-5)] {
        let mut s = started();
        s["timestamp"] = ts;
        let bytes = body(&[s, finished()]);
        assert_eq!(official(&bytes).unwrap().warnings.len(), 1);
        assert_eq!(rule(strict(&bytes)), ("WIRE-EXACT", Some(0)));
    }
    // In memory, u64 above 2^53 - 1 is caught by the verifier.
    let events: Vec<Event> = vec![Event::from(RunStarted::new("t", "r")).with_timestamp(1 << 53)];
    assert_eq!(
        verify_events(&events, VerifyOptions::official())
            .unwrap_err()
            .rule,
        "SCHEMA"
    );
}

#[test]
fn metadata_null_is_fatal_everywhere() {
    let start = json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "metadata": null});
    assert_eq!(rule(official(&run(&[start]))), ("SCHEMA", Some(1)));
    let snapshot = json!({"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "a", "role": "assistant", "toolCalls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}, "metadata": null}]}
    ]});
    assert_eq!(rule(official(&run(&[snapshot]))), ("SCHEMA", Some(1)));
    let interrupt = json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r",
        "outcome": {"type": "interrupt", "interrupts": [{"id": "i", "reason": "x", "metadata": null}]}});
    assert_eq!(
        rule(official(&body(&[started(), interrupt]))),
        ("SCHEMA", Some(1))
    );
}

#[test]
fn subagent_nulls_are_a1() {
    let tagged = json!({"type": "CUSTOM", "name": "x", "value": 1, "subagentRunId": null});
    assert_eq!(rule(official(&run(&[tagged]))), ("A1", Some(1)));
    let description =
        json!({"type": "SUBAGENT_STARTED", "subagentRunId": "s", "name": "n", "description": null});
    assert_eq!(rule(official(&run(&[description]))), ("A1", Some(1)));
    let input = json!({"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "user", "content": "x", "subagentRunId": null}]});
    let mut start = started();
    start["input"] = input;
    assert_eq!(rule(official(&body(&[start, finished()]))), ("A1", Some(0)));
    // On RUN_STARTED the member is unknown: stripped with a warning.
    let mut start = started();
    start["subagentRunId"] = Value::Null;
    assert!(official(&body(&[start.clone(), finished()])).is_ok());
    assert_eq!(
        rule(strict(&body(&[start, finished()]))),
        ("WIRE-EXACT", Some(0))
    );
}

#[test]
fn other_optional_nulls() {
    // Fatal for the client: a null in a known optional field.
    let name = json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "name": null});
    assert_eq!(rule(official(&run(&[name]))), ("SCHEMA", Some(1)));
    // Legacy nulls the client converts (warned); strict rejects them.
    let legacy = [
        json!({"type": "CUSTOM", "name": "x", "value": null, "rawEvent": null}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f", "parentMessageId": null}),
    ];
    let mut frames = vec![started()];
    frames.extend(legacy);
    frames.push(json!({"type": "TOOL_CALL_END", "toolCallId": "c"}));
    frames.push(json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": null, "result": null}));
    let bytes = body(&frames);
    let report = official(&bytes).unwrap();
    assert_eq!(report.warnings.len(), 4, "{:?}", report.warnings);
    assert_eq!(rule(strict(&bytes)), ("WIRE-EXACT", Some(1)));
    // Legacy nulls inside the RUN_STARTED.input echo.
    let mut start = started();
    start["input"] = json!({"threadId": "t", "runId": "r", "messages": [], "state": null, "forwardedProps": null,
        "tools": [{"name": "f", "description": "d", "parameters": null}],
        "resume": [{"interruptId": "i", "status": "resolved", "payload": null}]});
    assert_eq!(
        official(&body(&[start, finished()]))
            .unwrap()
            .warnings
            .len(),
        4
    );
    let mut start = started();
    start["input"] = json!({"threadId": "t", "runId": "r", "messages": [], "tools": null});
    assert_eq!(
        rule(official(&body(&[start, finished()]))),
        ("SCHEMA", Some(0))
    );
    // Required JSON payloads may be null.
    let payloads = [
        json!({"type": "CUSTOM", "name": "x", "value": null}),
        json!({"type": "STATE_SNAPSHOT", "snapshot": null}),
    ];
    assert!(strict(&run(&payloads)).is_ok());
}

#[test]
fn unknown_members_and_union_members_are_stripped_in_official_mode() {
    let cases = [
        json!({"type": "CUSTOM", "name": "x", "value": 1, "bogus": {"a": 1}}),
        json!({"type": "TOOL_CALL_RESULT", "messageId": "tm", "toolCallId": "c", "content": [{"type": "text", "text": "a"}, {"type": "hologram"}]}),
        json!({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a", "value": 1}, {"op": "frob", "path": "/b"}]}),
        json!({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "u", "role": "robot", "content": "x"}]}),
    ];
    for case in cases {
        let bytes = run(std::slice::from_ref(&case));
        let report = official(&bytes).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(report.warnings.len(), 1, "{case}: {:?}", report.warnings);
        assert_eq!(rule(strict(&bytes)), ("WIRE-EXACT", Some(1)), "{case}");
    }
    // An unknown outcome type is removed: the run reads as success.
    let weird = json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "weird"}});
    let report = official(&body(&[started(), weird.clone()])).unwrap();
    assert_eq!(report.runs[0].outcome, OutcomeKind::Success);
    assert_eq!(
        rule(strict(&body(&[started(), weird]))),
        ("WIRE-EXACT", Some(1))
    );
}

#[test]
fn retired_thinking_events() {
    let frames = [
        json!({"type": "THINKING_START", "title": "x"}),
        json!({"type": "THINKING_TEXT_MESSAGE_START"}),
        json!({"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "hmm"}),
        json!({"type": "THINKING_TEXT_MESSAGE_END"}),
        json!({"type": "THINKING_END"}),
    ];
    let bytes = run(&frames);
    let report = official(&bytes).unwrap();
    assert_eq!(report.warnings.len(), 5);
    assert_eq!(rule(strict(&bytes)), ("WIRE-EXACT", Some(1)));
}

#[test]
fn protocol_version_other_than_1_0() {
    let mut start = started();
    start["protocolVersion"] = json!("1.1");
    let bytes = body(&[start, finished()]);
    assert_eq!(official(&bytes).unwrap().warnings.len(), 1);
    assert_eq!(rule(strict(&bytes)), ("STRICT-PROTOCOL-VERSION", Some(0)));
}

#[test]
fn sequencing_and_chunk_errors_carry_the_frame_index() {
    let bytes = run(&[
        json!({"type": "NOT_A_TYPE"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"}),
    ]);
    assert_eq!(rule(official(&bytes)), ("T2", Some(2)));
    let bytes = run(&[
        json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "delta": "a"}),
        json!({"type": "TEXT_MESSAGE_CHUNK", "role": "user", "delta": "b"}),
    ]);
    assert_eq!(rule(official(&bytes)), ("CHUNK-CONFLICT", Some(2)));
    let bytes = run(&[json!({"type": "TOOL_CALL_CHUNK", "toolCallName": "f"})]);
    assert_eq!(rule(official(&bytes)), ("CHUNK-ID", Some(1)));
}

#[test]
fn in_memory_events_get_wire_checks() {
    let mut custom = Custom::new("x", json!(1));
    custom.base.raw_event = Some(Value::Null);
    let events: Vec<Event> = vec![
        RunStarted {
            protocol_version: Some("1.0".into()),
            ..RunStarted::new("t", "r")
        }
        .into(),
        custom.into(),
        RunFinished {
            outcome: Some(crate::RunFinishedOutcome::Cancelled),
            ..RunFinished::new("t", "r")
        }
        .into(),
    ];
    assert_eq!(
        verify_events(&events, VerifyOptions::official())
            .unwrap()
            .warnings
            .len(),
        1
    );
    assert_eq!(
        verify_events(&events, VerifyOptions::strict())
            .unwrap_err()
            .rule,
        "WIRE-EXACT"
    );
}
