//! The SSE encoder's hand-written fast path must produce exactly what serde_json
//! produces for the same event (the official encoder's bytes are checked against
//! the same corpus by tests/node/encoder-corpus.test.mjs).

use agui_protocol::bench_corpus;
use agui_protocol::event::{
    Custom, MessagesSnapshot, RunFinished, RunStarted, StateDelta, StateSnapshot, StepFinished,
    StepStarted, TextMessageContent, TextMessageEnd, TextMessageStart, TextRole, ToolCallArgs,
    ToolCallEnd, ToolCallResult, ToolCallStart, ToolRole,
};
use agui_protocol::sse::{self, SseEncoder};
use agui_protocol::{
    Content, ContentPart, Event, Interrupt, Message, PatchOp, RunFinishedOutcome, ToolCallId,
};
use bytes::BytesMut;
use serde_json::{Map, Value, json};

fn reference(event: &Event, id: Option<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(id) = id {
        out.extend_from_slice(format!("id: {id}\n").as_bytes());
    }
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(&serde_json::to_vec(event).unwrap());
    out.extend_from_slice(b"\n\n");
    out
}

fn assert_identical(events: &[Event]) {
    let mut numbered = SseEncoder::with_sequence_ids(1_000_000_000_000);
    let mut into = SseEncoder::new();
    let mut appended = BytesMut::new();
    let mut expected_stream = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let expected = reference(event, None);
        let ours = sse::encode(event);
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&expected),
            "event #{i}"
        );
        assert_eq!(&ours[..], &expected[..], "event #{i}");
        assert_eq!(sse::encode_with_id(event, 42), reference(event, Some(42)));
        let id = 1_000_000_000_000 + i as u64;
        assert_eq!(numbered.encode(event), reference(event, Some(id)));
        into.encode_into(&mut appended, event);
        expected_stream.extend_from_slice(&expected);
    }
    assert_eq!(&appended[..], &expected_stream[..]);
}

#[test]
fn corpus_mix_matches_serde_json() {
    assert_identical(&bench_corpus::mix(20_000));
}

fn every_control_char() -> String {
    let mut s: String = (0u8..0x20).map(char::from).collect();
    s.push_str("\"\\/ \u{7f} \u{80} \u{2028}\u{2029} é 你好 🚀 \u{fffd} end");
    s
}

fn envelope(mut event: Event) -> Event {
    let mut metadata = Map::new();
    metadata.insert("ag-ui".into(), json!({"seq": 3}));
    metadata.insert(
        "z\"key\n".into(),
        json!([1, -2, 3.5, null, true, false, "s"]),
    );
    let base = event.base_mut();
    base.timestamp = Some(u64::MAX);
    base.raw_event = Some(json!({"upstream": {"id": "x", "n": -9223372036854775808i64}}));
    base.metadata = Some(metadata);
    event
}

fn numbers() -> Value {
    json!({
        "u": u64::MAX, "i": i64::MIN, "zero": 0, "neg": -1, "f": 0.1, "whole": 1.0,
        "big": 1e300, "small": 1e-7, "negzero": -0.0, "half": 2.5, "e21": 1e21,
        "empty_obj": {}, "empty_arr": [], "nested": [[{}], [[]]], "s": every_control_char(),
    })
}

#[test]
fn every_fast_path_shape_matches_serde_json() {
    let text = every_control_char();
    let mut start = TextMessageStart::new(text.as_str());
    start.role = Some(TextRole::User);
    start.name = Some(text.clone());
    let mut tool_start = ToolCallStart::new(text.as_str(), text.as_str());
    tool_start.parent_message_id = Some(text.as_str().into());
    let mut result = ToolCallResult::new("r", "c", text.as_str());
    result.role = Some(ToolRole::Tool);
    let mut run = RunStarted::new(text.as_str(), "run");
    run.protocol_version = Some("1.0".into());
    run.parent_run_id = Some("parent".into());
    let ops = vec![
        PatchOp::add("/a", numbers()),
        PatchOp::remove("/b~1c"),
        PatchOp::replace("/d", Value::Null),
        PatchOp::Move {
            from: "/x".into(),
            path: "/y".into(),
            extra: Map::new(),
        },
        PatchOp::Copy {
            from: "/x".into(),
            path: "/z".into(),
            extra: Map::new(),
        },
        PatchOp::Test {
            path: "/t".into(),
            value: json!("v"),
            extra: Map::new(),
        },
    ];
    let mut extra = Map::new();
    extra.insert("note".into(), json!("kept"));
    let with_extra = PatchOp::Add {
        path: "/e".into(),
        value: json!(1),
        extra,
    };
    let parts = ToolCallResult::new(
        "r",
        "c",
        Content::Parts(vec![
            serde_json::from_value::<ContentPart>(json!({"type": "text", "text": "hi"})).unwrap(),
        ]),
    );
    let mut finished = RunFinished::new("t", "r");
    finished.result = Some(numbers());
    let mut metadata = Map::new();
    metadata.insert(text.clone(), numbers());
    let mut asked = Interrupt::new(text.as_str(), text.as_str())
        .with_message(text.as_str())
        .with_tool_call(ToolCallId::new(text.as_str()))
        .with_response_schema(numbers())
        .with_expires_at("2026-12-02T06:00:00.000Z")
        .with_metadata(metadata);
    asked.subagent_run_id = Some("sub\n1".into());
    let mut interrupted = RunFinished::new("t", text.as_str());
    interrupted.outcome = Some(RunFinishedOutcome::Interrupt {
        interrupts: vec![asked, Interrupt::new("i2", "input_required")],
    });
    let mut pending = RunFinished::new("t", "r");
    pending.outcome = Some(RunFinishedOutcome::Success {
        pending_tool_call_ids: Some(vec![ToolCallId::new(text.as_str()), ToolCallId::new("b")]),
    });
    let mut none_pending = RunFinished::new("t", "r");
    none_pending.outcome = Some(RunFinishedOutcome::Success {
        pending_tool_call_ids: Some(Vec::new()),
    });
    let mut cancelled = RunFinished::new("t", "r");
    cancelled.outcome = Some(RunFinishedOutcome::Cancelled);
    let mut with_usage = cancelled.clone();
    with_usage.usage = Some(vec![
        serde_json::from_value(json!({"inputTokens": 3})).unwrap(),
    ]);
    let plain: Vec<Event> = vec![
        TextMessageContent::new(text.as_str(), text.as_str()).into(),
        TextMessageContent::new("m", "").into(),
        ToolCallArgs::new(text.as_str(), text.as_str()).into(),
        StateDelta::new(ops).into(),
        StateDelta::new(vec![]).into(),
        StateDelta::new(vec![PatchOp::remove("/a"), with_extra]).into(),
        StateSnapshot::new(numbers()).into(),
        StateSnapshot::new(Value::Null).into(),
        StateSnapshot::new(json!([1, "two", 3.25])).into(),
        start.into(),
        TextMessageStart::new("m").into(),
        TextMessageEnd::new(text.as_str()).into(),
        tool_start.into(),
        ToolCallStart::new("c", "f").into(),
        ToolCallEnd::new("c").into(),
        result.into(),
        ToolCallResult::new("r", "c", "").into(),
        parts.into(),
        StepStarted::new(text.as_str()).into(),
        StepFinished::new("s").into(),
        Custom::new(text.as_str(), numbers()).into(),
        Custom::new("n", Value::Null).into(),
        run.into(),
        RunStarted::new("t", "r").into(),
        finished.into(),
        interrupted.into(),
        pending.into(),
        none_pending.into(),
        cancelled.into(),
        with_usage.into(),
        RunFinished::new("t", "r").into(),
        MessagesSnapshot::new(vec![Message::user("u1", text.as_str())]).into(),
    ];
    for role in [TextRole::Developer, TextRole::System, TextRole::Assistant] {
        let mut e = TextMessageStart::new("m");
        e.role = Some(role);
        assert_identical(&[e.into()]);
    }
    let subagent: Vec<Event> = plain
        .iter()
        .cloned()
        .filter_map(|e| match e {
            Event::TextMessageContent(e) => Some(e.in_subagent("sub\n1").into()),
            Event::ToolCallArgs(e) => Some(e.in_subagent("sub").into()),
            Event::StateDelta(e) => Some(e.in_subagent("sub").into()),
            Event::StateSnapshot(e) => Some(e.in_subagent("sub").into()),
            Event::TextMessageStart(e) => Some(e.in_subagent("sub").into()),
            Event::TextMessageEnd(e) => Some(e.in_subagent("sub").into()),
            Event::ToolCallStart(e) => Some(e.in_subagent("sub").into()),
            Event::ToolCallEnd(e) => Some(e.in_subagent("sub").into()),
            Event::ToolCallResult(e) => Some(e.in_subagent("sub").into()),
            Event::StepStarted(e) => Some(e.in_subagent("sub").into()),
            Event::StepFinished(e) => Some(e.in_subagent("sub").into()),
            Event::Custom(e) => Some(e.in_subagent("sub").into()),
            _ => None,
        })
        .collect();
    let enveloped: Vec<Event> = plain
        .iter()
        .chain(&subagent)
        .cloned()
        .map(envelope)
        .collect();
    assert_identical(&plain);
    assert_identical(&subagent);
    assert_identical(&enveloped);
}

/// Every role with every optional field set, and with none.
fn every_message_shape() -> Vec<Message> {
    let text = every_control_char();
    let metadata = || Some(numbers().as_object().unwrap().clone());
    let all = json!({
        "name": text, "encryptedValue": text, "metadata": numbers(), "subagentRunId": text,
    });
    let with = |mut base: Value| -> Message {
        base.as_object_mut()
            .unwrap()
            .extend(all.as_object().unwrap().clone());
        serde_json::from_value(base).unwrap()
    };
    let call = |id: &str| json!({"id": id, "type": "function", "function": {"name": text, "arguments": "{\"a\":[1]}"}});
    let mut call_all = call("c2");
    call_all["encryptedValue"] = json!(text);
    call_all["metadata"] = numbers();
    let parts = json!([
        {"type": "text", "text": text},
        {"type": "image", "source": {"type": "url", "value": "https://x/y.png"}, "id": "p"},
    ]);
    let mut messages = vec![
        Message::user("u", text.as_str()),
        Message::assistant("a", text.as_str()),
        serde_json::from_value(json!({"role": "assistant", "id": "a0"})).unwrap(),
        with(json!({"role": "user", "id": text, "content": parts})),
        with(
            json!({"role": "assistant", "id": "a", "content": text, "toolCalls": [call("c1"), call_all]}),
        ),
        with(json!({"role": "assistant", "id": "a", "toolCalls": []})),
        with(json!({"role": "developer", "id": "d", "content": text})),
        with(json!({"role": "system", "id": "s", "content": ""})),
        with(
            json!({"role": "tool", "id": "t", "content": text, "toolCallId": "c1", "error": text}),
        ),
        with(json!({"role": "tool", "id": "t", "content": parts, "toolCallId": "c1"})),
        with(json!({"role": "activity", "id": "p", "activityType": text, "content": numbers()})),
        with(json!({"role": "reasoning", "id": "r", "content": text})),
    ];
    for role in ["developer", "system", "reasoning"] {
        messages.push(
            serde_json::from_value(json!({"role": role, "id": "x", "content": "c"})).unwrap(),
        );
    }
    messages.push(
        serde_json::from_value(
            json!({"role": "tool", "id": "t", "content": "c", "toolCallId": "c"}),
        )
        .unwrap(),
    );
    messages.push(
        serde_json::from_value(
            json!({"role": "activity", "id": "p", "activityType": "a", "content": {}}),
        )
        .unwrap(),
    );
    if let Message::User(user) = &mut messages[0] {
        user.metadata = metadata();
    }
    messages
}

#[test]
fn every_message_shape_matches_serde_json() {
    let messages = every_message_shape();
    for (i, message) in messages.iter().enumerate() {
        let mut ours = Vec::new();
        message.write_json(&mut ours);
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&serde_json::to_vec(message).unwrap()),
            "message #{i}"
        );
    }
    let snapshot: Event = MessagesSnapshot::new(messages).into();
    let empty: Event = MessagesSnapshot::new(Vec::new()).into();
    assert_identical(&[
        snapshot.clone(),
        empty.clone(),
        envelope(snapshot),
        envelope(empty),
    ]);
}

#[test]
fn large_frames_do_not_pin_the_scratch_buffer() {
    let big = StateSnapshot::new(json!({"blob": "x".repeat(200_000)})).into();
    let small: Event = TextMessageEnd::new("m").into();
    assert_identical(&[big, small.clone(), small]);
}
