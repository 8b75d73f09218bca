//! The positive streams: what our encoder produces, built from typed events.

use super::*;

/// Every positive case.
pub fn positives() -> Vec<Case> {
    let mut cases = Vec::new();

    let mut events = vec![started("run-1")];
    events.extend(text("m1", &["Hello", ", ", "world"]));
    events.push(success("run-1"));
    cases.push(positive(
        "text-basic",
        "run-1",
        events,
        "START/CONTENT/END text",
    ));

    let mut events = vec![started("run-1")];
    events.extend(text("m1", &["caf", "é 漢字 🦀 — ", "naïve"]));
    events.push(success("run-1"));
    cases.push(positive(
        "text-utf8-split",
        "run-1",
        events,
        "multi-byte text; the server splits inside characters",
    ));

    cases.push(positive(
        "every-event-type",
        "run-1",
        every_event_type(),
        "all 31 types in one valid run",
    ));

    let mut events = vec![started("run-1"), ReasoningStart::new("rs1").into()];
    events.push(ReasoningMessageStart::new("rm1").into());
    events.push(ReasoningMessageContent::new("rm1", "Check the order first.").into());
    events.push(ReasoningMessageEnd::new("rm1").into());
    events.push(
        ReasoningEncryptedValue::new(EncryptedSubtype::Message, "rm1", "ZW5jcnlwdGVk").into(),
    );
    events.push(ReasoningEnd::new("rs1").into());
    events.extend(text("m1", &["Done thinking."]));
    events.push(success("run-1"));
    cases.push(positive(
        "reasoning",
        "run-1",
        events,
        "reasoning span, message and encrypted value",
    ));

    let chunk = TextMessageChunk {
        message_id: Some("m1".into()),
        delta: Some("chunked ".into()),
        ..Default::default()
    };
    let more = TextMessageChunk {
        delta: Some("text".into()),
        ..Default::default()
    };
    let tool_chunk = ToolCallChunk {
        tool_call_id: Some("tc1".into()),
        tool_call_name: Some("search".into()),
        delta: Some("{\"q\":".into()),
        ..Default::default()
    };
    let tool_more = ToolCallChunk {
        delta: Some("\"x\"}".into()),
        ..Default::default()
    };
    let reasoning_chunk = ReasoningMessageChunk {
        message_id: Some("rm1".into()),
        delta: Some("hmm".into()),
        ..Default::default()
    };
    let events = vec![
        started("run-1"),
        chunk.into(),
        more.into(),
        tool_chunk.into(),
        tool_more.into(),
        reasoning_chunk.into(),
        success("run-1"),
    ];
    cases.push(positive(
        "chunks",
        "run-1",
        events,
        "text, tool and reasoning chunks expanded by the client",
    ));

    let mut content = serde_json::Map::new();
    content.insert("percent".into(), json!(10));
    let events = vec![
        started("run-1"),
        ActivitySnapshot::new("act-1", "progress", content).into(),
        ActivityDelta::new(
            "act-1",
            "progress",
            vec![PatchOp::replace("/percent", json!(60))],
        )
        .into(),
        success("run-1"),
    ];
    cases.push(positive(
        "activity",
        "run-1",
        events,
        "activity snapshot and delta",
    ));

    cases.push(positive(
        "subagent-interrupt",
        "run-1",
        subagent_interrupt(),
        "an interrupt raised inside a subagent",
    ));

    let mut events = vec![started("run-1")];
    events.extend(tool_call(
        "tc1",
        "get_order",
        &["{\"orderId\":", "\"A1024\"}"],
    ));
    let parts = Content::Parts(vec![
        ContentPart::Text(TextPart {
            id: None,
            text: "Order A1024".into(),
            metadata: None,
        }),
        ContentPart::Image(MediaPart {
            id: None,
            source: PartSource::Url {
                value: "https://example.com/a.png".into(),
                mime_type: Some("image/png".into()),
            },
            metadata: None,
        }),
    ]);
    events.push(ToolCallResult::new("m-res", "tc1", parts).into());
    events.push(success("run-1"));
    cases.push(positive(
        "tool-result-parts",
        "run-1",
        events,
        "TOOL_CALL_RESULT with content parts",
    ));

    let mut events = vec![started("run-1")];
    events.extend(text("m1", &["first run"]));
    events.push(success("run-1"));
    events.push(started("run-2"));
    events.extend(text("m2", &["second run"]));
    events.push(success("run-2"));
    cases.push(positive(
        "multi-run-replay",
        "run-2",
        events,
        "two runs in one response, as a replay",
    ));

    cases.push(positive(
        "interrupt",
        "run-1",
        refund_run(),
        "refund flow ending in a tool_call interrupt",
    ));

    let mut events = vec![started("run-2")];
    events.push(ToolCallResult::new("m-result", "tc-refund", "{\"status\":\"refunded\"}").into());
    events.extend(text("m-done", &["Refund ", "done."]));
    events.push(success("run-2"));
    let mut case = positive(
        "resume-result",
        "run-2",
        events,
        "resumed run: TOOL_CALL_RESULT for the original call",
    );
    case.resume = Some(vec![ResumeEntry::resolved(
        "int-1",
        json!({"approved": true}),
    )]);
    cases.push(case);

    let mut events = vec![started("run-1")];
    events.extend(text("m1", &["partial"]));
    events.push(ToolCallStart::new("tc1", "slow_tool").into());
    events.push(ToolCallEnd::new("tc1").into());
    events.push(finished("run-1", RunFinishedOutcome::Cancelled));
    cases.push(positive(
        "cancelled",
        "run-1",
        events,
        "producer deadline: everything closed, outcome cancelled",
    ));

    let mut events = vec![started("run-1")];
    events.extend(tool_call(
        "tc-fe",
        "change_background",
        &["{\"color\":\"blue\"}"],
    ));
    events.push(finished(
        "run-1",
        RunFinishedOutcome::Success {
            pending_tool_call_ids: Some(vec!["tc-fe".into()]),
        },
    ));
    cases.push(positive(
        "frontend-tool-pending",
        "run-1",
        events,
        "frontend tool call left for the client",
    ));

    let mut error = RunError::new("storage is temporarily unavailable; retry");
    error.code = Some("STORE_UNAVAILABLE".into());
    cases.push(positive(
        "run-error",
        "run-1",
        vec![started("run-1"), error.into()],
        "RUN_ERROR with a stable code",
    ));

    let mut usage_run = RunFinished::new(T, "run-1");
    usage_run.outcome = Some(RunFinishedOutcome::success());
    usage_run.result = Some(json!({"answer": 42}));
    usage_run.usage = Some(vec![TokenUsage {
        input_tokens: Some(12),
        output_tokens: Some(3),
        total_tokens: Some(15),
        ..Default::default()
    }]);
    let mut events = vec![started("run-1")];
    events.extend(text("m1", &["42"]));
    events.push(usage_run.into());
    let mut case = positive(
        "keepalive-ids-usage",
        "run-1",
        Vec::new(),
        "id: lines, keep-alive comments, usage and result",
    );
    let mut encoder = SseEncoder::with_sequence_ids(1);
    for event in &events {
        case.bytes.extend_from_slice(KEEP_ALIVE);
        case.bytes.extend_from_slice(&encoder.encode(event));
    }
    cases.push(case);
    cases
}

fn refund_run() -> Vec<Event> {
    let mut events = vec![started("run-1"), StepStarted::new("lookup").into()];
    events.extend(tool_call(
        "tc-get",
        "get_order",
        &["{\"orderId\":\"A1024\"}"],
    ));
    events.push(ToolCallResult::new("m-get", "tc-get", "{\"amount\":\"128.00\"}").into());
    events.push(StepFinished::new("lookup").into());
    events.push(StateSnapshot::new(json!({"order": {"id": "A1024"}, "step": "lookup"})).into());
    events.push(StateDelta::new(vec![PatchOp::replace("/step", json!("await_decision"))]).into());
    events.extend(text("m-a", &["I can refund ", "128.00."]));
    events.extend(tool_call(
        "tc-refund",
        "refund_order",
        &["{\"orderId\":", "\"A1024\"}"],
    ));
    events.push(
        StateSnapshot::new(json!({"order": {"id": "A1024"}, "step": "await_decision"})).into(),
    );
    events.push(MessagesSnapshot::new(history()).into());
    events.push(finished(
        "run-1",
        RunFinishedOutcome::Interrupt {
            interrupts: vec![refund_interrupt()],
        },
    ));
    events
}

fn subagent_interrupt() -> Vec<Event> {
    let mut start = SubagentStarted::new("sub-1", "fraud-check");
    start.description = Some("Reviews refunds".into());
    let mut events = vec![started("run-1"), start.into()];
    events.push(TextMessageStart::new("m-s").in_subagent("sub-1").into());
    events.push(
        TextMessageContent::new("m-s", "Needs a human.")
            .in_subagent("sub-1")
            .into(),
    );
    events.push(TextMessageEnd::new("m-s").in_subagent("sub-1").into());
    events.push(
        ToolCallStart::new("tc-refund", "refund_order")
            .in_subagent("sub-1")
            .into(),
    );
    events.push(
        ToolCallArgs::new("tc-refund", "{}")
            .in_subagent("sub-1")
            .into(),
    );
    events.push(ToolCallEnd::new("tc-refund").in_subagent("sub-1").into());
    let mut done = SubagentFinished::new("sub-1");
    done.outcome = Some(SubagentOutcome::Suspended {
        interrupt_ids: Some(vec!["int-1".into()]),
    });
    events.push(done.into());
    events.push(StateSnapshot::new(json!({"step": "review"})).into());
    events.push(MessagesSnapshot::new(history()).into());
    let interrupt = refund_interrupt().with_subagent("sub-1");
    events.push(finished(
        "run-1",
        RunFinishedOutcome::Interrupt {
            interrupts: vec![interrupt],
        },
    ));
    events
}

fn every_event_type() -> Vec<Event> {
    let chunk = TextMessageChunk {
        message_id: Some("m-chunk".into()),
        delta: Some("chunk".into()),
        ..Default::default()
    };
    let tool_chunk = ToolCallChunk {
        tool_call_id: Some("tc-chunk".into()),
        tool_call_name: Some("noop".into()),
        delta: Some("{}".into()),
        ..Default::default()
    };
    let reasoning_chunk = ReasoningMessageChunk {
        message_id: Some("rm-chunk".into()),
        delta: Some("why".into()),
        ..Default::default()
    };
    let mut sub_error = SubagentError::new("sub-2", "gave up");
    sub_error.code = Some("SUB_FAILED".into());
    let mut raw = Raw::new(json!({"provider": "x"}));
    raw.source = Some("upstream".into());
    let mut content = serde_json::Map::new();
    content.insert("percent".into(), json!(0));

    let mut events = vec![started("run-1"), StepStarted::new("all").into()];
    events.extend(text("m1", &["hello"]));
    events.push(chunk.into());
    events.extend(tool_call("tc1", "get_order", &["{}"]));
    events.push(tool_chunk.into());
    events.push(ToolCallResult::new("m-res", "tc1", "{}").into());
    events.push(StateSnapshot::new(json!({"a": 1})).into());
    events.push(StateDelta::new(vec![PatchOp::add("/b", json!(2))]).into());
    events.push(MessagesSnapshot::new(vec![Message::user("m0", "hi")]).into());
    events.push(ActivitySnapshot::new("act", "progress", content).into());
    events.push(
        ActivityDelta::new(
            "act",
            "progress",
            vec![PatchOp::replace("/percent", json!(100))],
        )
        .into(),
    );
    events.push(ReasoningStart::new("rs").into());
    events.push(ReasoningMessageStart::new("rm").into());
    events.push(ReasoningMessageContent::new("rm", "thinking").into());
    events.push(ReasoningMessageEnd::new("rm").into());
    events.push(reasoning_chunk.into());
    events.push(ReasoningEnd::new("rs").into());
    events.push(ReasoningEncryptedValue::new(EncryptedSubtype::ToolCall, "tc1", "c2VjcmV0").into());
    events.push(SubagentStarted::new("sub-1", "helper").into());
    events.push(SubagentFinished::new("sub-1").into());
    events.push(SubagentStarted::new("sub-2", "flaky").into());
    events.push(sub_error.into());
    events.push(raw.into());
    events.push(Custom::new("acme.PredictState", Value::Null).into());
    events.push(StepFinished::new("all").into());
    events.push(success("run-1"));
    events
}
