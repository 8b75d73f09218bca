//! A2UI mapping: accumulation, fenced code, tool calls, interrupts and the legacy mode.

use agui_protocol::a2ui::{A2uiEncoder, Frame};
use agui_protocol::event::*;
use agui_protocol::sse::SseDecoder;
use agui_protocol::{Event, Interrupt, RunFinishedOutcome};
use serde_json::{Value, json};

fn frames(events: Vec<Event>) -> Vec<Frame> {
    let mut encoder = A2uiEncoder::new("demo");
    events.iter().flat_map(|e| encoder.frames(e, 7)).collect()
}

fn text_events(id: &str, deltas: &[&str]) -> Vec<Event> {
    let mut out: Vec<Event> = vec![TextMessageStart::new(id).into()];
    out.extend(
        deltas
            .iter()
            .map(|d| Event::from(TextMessageContent::new(id, *d))),
    );
    out.push(TextMessageEnd::new(id).into());
    out
}

#[test]
fn text_frames_carry_accumulated_content_and_delta() {
    let out = frames(text_events("m", &["Hel", "lo ", "wörld"]));
    let data: Vec<&Value> = out.iter().map(|f| &f.data).collect();
    assert_eq!(
        out.iter().map(|f| f.kind).collect::<Vec<_>>(),
        ["text", "text", "text"]
    );
    assert_eq!(
        *data[2],
        json!({"content": "Hello wörld", "delta": "wörld"})
    );
    assert!(out.iter().all(|f| f.timestamp == 7));
}

#[test]
fn fenced_code_split_across_deltas_becomes_code_blocks() {
    let out = frames(text_events(
        "m",
        &[
            "Here:\n``",
            "`py",
            "thon\nprint(1)\n",
            "x = 2\n`",
            "``\nDone.",
        ],
    ));
    let kinds: Vec<_> = out.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, ["text", "code_block", "code_block", "text"]);
    assert_eq!(
        out[1].data,
        json!({"language": "python", "code": "print(1)\n", "delta": "print(1)\n"})
    );
    assert_eq!(out[2].data["code"], "print(1)\nx = 2\n");
    assert_eq!(
        out[3].data,
        json!({"content": "Here:\nDone.", "delta": "Done."})
    );
}

#[test]
fn tool_calls_are_one_frame_with_parsed_arguments_then_a_result() {
    let mut events: Vec<Event> = vec![ToolCallStart::new("c1", "web_search").into()];
    events.push(ToolCallArgs::new("c1", "{\"query\":").into());
    events.push(ToolCallArgs::new("c1", "\"AI\"}").into());
    events.push(ToolCallEnd::new("c1").into());
    events.push(ToolCallResult::new("r1", "c1", "found").into());
    let out = frames(events);
    assert_eq!(out.len(), 2);
    assert_eq!(
        out[0].data,
        json!({"id": "c1", "name": "web_search", "arguments": {"query": "AI"}, "status": "calling"})
    );
    assert_eq!(
        out[1].data,
        json!({"id": "c1", "name": "web_search", "result": "found", "is_error": false})
    );
}

/// A resumed run's stream has no `TOOL_CALL_START`: the name comes from earlier runs.
#[test]
fn a_remembered_tool_call_names_its_result() {
    let mut encoder = A2uiEncoder::new("demo");
    encoder.remember_tool_call("c9", "refund_order");
    let out = encoder.frames(&ToolCallResult::new("r9", "c9", "done").into(), 7);
    assert_eq!(
        out[0].data,
        json!({"id": "c9", "name": "refund_order", "result": "done", "is_error": false})
    );
    let unknown = encoder.frames(&ToolCallResult::new("r8", "c8", "done").into(), 7);
    assert_eq!(unknown[0].data["name"], "");
}

#[test]
fn interrupts_become_forms_then_done() {
    let interrupt = Interrupt::new("i1", "input_required").with_message("Why?").with_response_schema(json!({
        "type": "object",
        "properties": {"reason": {"type": "string", "enum": ["late", "damaged"]}, "note": {"type": "string"}},
        "required": ["reason"]
    }));
    let mut finished = RunFinished::new("t", "r");
    finished.outcome = Some(RunFinishedOutcome::Interrupt {
        interrupts: vec![interrupt],
    });
    let out = frames(vec![finished.into()]);
    assert_eq!(
        out.iter().map(|f| f.kind).collect::<Vec<_>>(),
        ["interrupt", "done"]
    );
    let fields = &out[0].data["fields"];
    let reason = fields
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "reason")
        .unwrap();
    assert_eq!(reason["type"], "select");
    assert_eq!(reason["options"], json!(["late", "damaged"]));
    assert_eq!(reason["required"], true);
    assert_eq!(out[0].data["reason"], "Why?");
    assert_eq!(out[1].data, Value::Null);
}

#[test]
fn errors_thinking_progress_and_agent_switches() {
    let mut error = RunError::new("boom");
    error.code = Some("AGENT_ERROR".into());
    let events: Vec<Event> = vec![
        StepStarted::new("plan").into(),
        ReasoningMessageStart::new("r").into(),
        ReasoningMessageContent::new("r", "a").into(),
        ReasoningMessageContent::new("r", "b").into(),
        SubagentStarted::new("s1", "reviewer").into(),
        SubagentFinished::new("s1").into(),
        error.into(),
    ];
    let out = frames(events);
    let kinds: Vec<_> = out.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            "progress",
            "thinking",
            "thinking",
            "agent_switch",
            "agent_switch",
            "error",
            "done"
        ]
    );
    assert_eq!(
        out[0].data,
        json!({"agent_name": "demo", "step": "plan", "current": 1})
    );
    assert_eq!(out[2].data, json!({"content": "ab", "delta": "b"}));
    assert_eq!(
        out[3].data,
        json!({"from_agent": "demo", "to_agent": "reviewer", "reason": ""})
    );
    assert_eq!(out[4].data["to_agent"], "demo");
    assert_eq!(
        out[5].data,
        json!({"code": "AGENT_ERROR", "message": "boom"})
    );
}

#[test]
fn named_frames_and_legacy_mode_decode_back() {
    let mut encoder = A2uiEncoder::new("demo");
    let mut finished = RunFinished::new("t", "r");
    finished.outcome = Some(RunFinishedOutcome::success());
    let mut events = text_events("m", &["line one\nline two"]);
    events.push(finished.into());
    let named: Vec<u8> = events
        .iter()
        .flat_map(|e| encoder.encode(e, 1).to_vec())
        .collect();
    let mut decoder = SseDecoder::new();
    let decoded = decoder.feed(&named);
    assert_eq!(
        decoded
            .iter()
            .map(|f| f.event.as_deref().unwrap())
            .collect::<Vec<_>>(),
        ["text", "done"]
    );
    let text: Value = serde_json::from_str(&decoded[0].data).unwrap();
    assert_eq!(text["data"]["delta"], "line one\nline two");

    let mut encoder = A2uiEncoder::new("demo");
    let legacy: Vec<u8> = events
        .iter()
        .flat_map(|e| encoder.encode_legacy(e, 1).to_vec())
        .collect();
    let decoded = SseDecoder::new().feed(&legacy);
    assert_eq!(
        decoded.iter().map(|f| f.data.as_str()).collect::<Vec<_>>(),
        ["line one\nline two", "[DONE]"]
    );
}
