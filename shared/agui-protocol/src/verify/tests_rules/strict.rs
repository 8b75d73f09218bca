//! Chunk expansion, the strict mode's own rules, and how a violation reads.

use super::*;

#[test]
fn verifier_rejects_unexpanded_chunks_and_is_sticky() {
    let mut v = Verifier::new(Mode::Official);
    v.push(&started("r")).unwrap();
    let err = v.push(&TextMessageChunk::new().into()).unwrap_err();
    assert_eq!((err.rule, err.index), ("EXPAND", Some(1)));
    assert_eq!(v.push(&finished("r")).unwrap_err(), err);
    assert_eq!(v.finish().unwrap_err(), err);
}

#[test]
fn chunks_are_expanded_and_closed_before_run_events() {
    let mut chunk = TextMessageChunk::new();
    chunk.message_id = Some("m".into());
    chunk.delta = Some("hi".into());
    let mut tool = ToolCallChunk::new();
    tool.tool_call_id = Some("c".into());
    tool.tool_call_name = Some("f".into());
    tool.delta = Some("{}".into());
    let mut thought = ReasoningMessageChunk::new();
    thought.message_id = Some("r1".into());
    thought.delta = Some("hmm".into());
    let events = run(vec![
        chunk.into(),
        tool.into(),
        thought.in_subagent("s").into(),
    ]);
    let report = strict(&events).unwrap();
    // 2 run events + 3 triads of 3.
    assert_eq!(report.events, 11);
    // Mixing spellings: an explicit END after the chunk item closed fails T2.
    let mut chunk = TextMessageChunk::new();
    chunk.message_id = Some("m".into());
    rejects(
        &run(vec![chunk.into(), TextMessageEnd::new("m").into()]),
        "T2",
        Some(2),
    );
    // Chunk errors carry the chunk's index.
    rejects(
        &run(vec![TextMessageChunk::new().into()]),
        "CHUNK-ID",
        Some(1),
    );
}

#[test]
fn strict_run_and_thread_ids() {
    let events = run(text_triad("m"));
    assert!(verify_events(&events, VerifyOptions::strict().with_ids("t", "r")).is_ok());
    let err = verify_events(&events, VerifyOptions::strict().with_ids("t", "other")).unwrap_err();
    assert_eq!((err.rule, err.index), ("STRICT-RUN-ID", Some(0)));
    assert_eq!(
        verify_events(&events, VerifyOptions::strict().with_ids("t2", "r"))
            .unwrap_err()
            .rule,
        "STRICT-THREAD-ID"
    );
    // The client checks none of this.
    assert!(verify_events(&events, VerifyOptions::official().with_ids("t2", "other")).is_ok());

    let mismatch = vec![started("r"), finished("r-other")];
    assert!(official(&mismatch).is_ok());
    assert_eq!(strict(&mismatch).unwrap_err().rule, "STRICT-RUN-ID");
    let mut other_thread = RunFinished::new("t-other", "r");
    other_thread.outcome = Some(RunFinishedOutcome::Cancelled);
    assert_eq!(
        strict(&[started("r"), other_thread.into()])
            .unwrap_err()
            .rule,
        "STRICT-THREAD-ID"
    );
    // A replay's runs must not reuse a run id.
    let mut replay = run(vec![]);
    replay.extend(run(vec![]));
    assert!(official(&replay).is_ok());
    assert_eq!(strict(&replay).unwrap_err().rule, "STRICT-RUN-ID");
    // With an expected run id, it is the last run's.
    let mut replay = run(vec![]);
    replay.extend([started("r2"), finished("r2")]);
    assert!(verify_events(&replay, VerifyOptions::strict().with_ids("t", "r2")).is_ok());
}

#[test]
fn strict_interrupts() {
    let mut body = snapshots();
    body.push(finished_with("r", interrupt(&["i1", "i2"])));
    let events: Vec<Event> = std::iter::once(started("r")).chain(body).collect();
    let report = strict(&events).unwrap();
    assert_eq!(report.runs[0].outcome, OutcomeKind::Interrupt);
    assert_eq!(
        report.runs[0].interrupt_ids,
        ["i1", "i2"].map(crate::ids::InterruptId::from)
    );

    // Duplicate ids: strict only.
    let mut dup: Vec<Event> = vec![started("r")];
    dup.extend(snapshots());
    dup.push(finished_with("r", interrupt(&["i1", "i1"])));
    assert!(official(&dup).is_ok());
    assert_eq!(strict(&dup).unwrap_err().rule, "STRICT-INTERRUPT-ID");

    // Missing snapshots: strict only.
    let bare = vec![started("r"), finished_with("r", interrupt(&["i1"]))];
    assert!(official(&bare).is_ok());
    let err = strict(&bare).unwrap_err();
    assert_eq!((err.rule, err.index), ("STRICT-SNAPSHOT", Some(1)));
    assert!(
        err.message.contains("STATE_SNAPSHOT and MESSAGES_SNAPSHOT"),
        "{err}"
    );

    // Empty interrupts: fatal for the client too.
    rejects(
        &[
            started("r"),
            finished_with("r", RunFinishedOutcome::Interrupt { interrupts: vec![] }),
        ],
        "SCHEMA",
        Some(1),
    );
}

#[test]
fn strict_interrupt_tool_call_must_be_known() {
    let about = |call: &str| RunFinishedOutcome::Interrupt {
        interrupts: vec![Interrupt::new("i", "tool_call").with_tool_call(call)],
    };
    let mut events = vec![
        started("r"),
        ToolCallStart::new("c", "f").into(),
        ToolCallEnd::new("c").into(),
    ];
    events.extend(snapshots());
    events.push(finished_with("r", about("c")));
    strict(&events).unwrap();
    let last = events.len() - 1;
    events[last] = finished_with("r", about("unknown"));
    assert!(official(&events).is_ok());
    assert_eq!(
        strict(&events).unwrap_err().rule,
        "STRICT-INTERRUPT-TOOL-CALL"
    );
    // Known from the input's assistant tool calls.
    let input = RunAgentInput::new(
        "t",
        "r",
        vec![Message::Assistant(AssistantMessage {
            id: "a".into(),
            tool_calls: Some(vec![ToolCall::function("unknown", "f", "{}")]),
            ..AssistantMessage::default()
        })],
    );
    assert!(verify_events(&events, VerifyOptions::strict().with_input(input)).is_ok());
}

#[test]
fn strict_terminal_event() {
    let truncated = vec![started("r"), TextMessageStart::new("m").into()];
    let report = official(&truncated).unwrap();
    assert_eq!(report.runs[0].outcome, OutcomeKind::None);
    let err = strict(&truncated).unwrap_err();
    assert_eq!((err.rule, err.index), ("STRICT-TERMINAL", None));
}

#[test]
fn strict_explicit_outcome_and_protocol_version() {
    let events = vec![started("r"), RunFinished::new("t", "r").into()];
    assert_eq!(
        official(&events).unwrap().runs[0].outcome,
        OutcomeKind::Success
    );
    assert_eq!(strict(&events).unwrap_err().rule, "STRICT-OUTCOME");

    let events = vec![RunStarted::new("t", "r").into(), finished("r")];
    assert!(official(&events).is_ok());
    assert_eq!(strict(&events).unwrap_err().rule, "STRICT-PROTOCOL-VERSION");
}

#[test]
fn strict_pending_tool_call_ids() {
    let pending = |ids: &[&str]| RunFinishedOutcome::Success {
        pending_tool_call_ids: Some(ids.iter().map(|i| ToolCallId::from(*i)).collect()),
    };
    let body = |outcome| -> Vec<Event> {
        vec![
            started("r"),
            ToolCallStart::new("a", "backend").into(),
            ToolCallEnd::new("a").into(),
            ToolCallResult::new("ra", "a", "ok").into(),
            ToolCallStart::new("b", "frontend").into(),
            ToolCallEnd::new("b").into(),
            ToolCallStart::new("c", "frontend").into(),
            ToolCallEnd::new("c").into(),
            finished_with("r", outcome),
        ]
    };
    strict(&body(pending(&["b", "c"]))).unwrap();
    strict(&body(RunFinishedOutcome::success())).unwrap();
    for wrong in [&["b"][..], &["c", "b"], &["a", "b", "c"]] {
        assert!(official(&body(pending(wrong))).is_ok());
        assert_eq!(
            strict(&body(pending(wrong))).unwrap_err().rule,
            "STRICT-PENDING"
        );
    }
}

#[test]
fn violation_display() {
    let v = Violation::new("L3", Some(4), "too late");
    assert_eq!(v.to_string(), "[L3] event #4: too late");
    assert_eq!(
        Violation::new("STRICT-TERMINAL", None, "cut").to_string(),
        "[STRICT-TERMINAL] cut"
    );
    let as_error: crate::ProtocolError = v.into();
    assert!(as_error.to_string().contains("too late"));
}
