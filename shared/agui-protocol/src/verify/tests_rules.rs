//! One positive and at least one negative case per sequencing rule.

use serde_json::json;

use super::*;
use crate::event::*;
use crate::ids::ToolCallId;
use crate::interrupt::{Interrupt, RunFinishedOutcome};
use crate::message::{AssistantMessage, Message, ToolCall};

fn started(run: &str) -> Event {
    let mut e = RunStarted::new("t", run);
    e.protocol_version = Some("1.0".into());
    e.into()
}

fn finished(run: &str) -> Event {
    let mut e = RunFinished::new("t", run);
    e.outcome = Some(RunFinishedOutcome::success());
    e.into()
}

fn finished_with(run: &str, outcome: RunFinishedOutcome) -> Event {
    let mut e = RunFinished::new("t", run);
    e.outcome = Some(outcome);
    e.into()
}

fn interrupt(ids: &[&str]) -> RunFinishedOutcome {
    RunFinishedOutcome::Interrupt {
        interrupts: ids
            .iter()
            .map(|id| Interrupt::new(*id, "confirmation"))
            .collect(),
    }
}

/// A whole run around `body`.
fn run(body: Vec<Event>) -> Vec<Event> {
    let mut events = vec![started("r")];
    events.extend(body);
    events.push(finished("r"));
    events
}

fn official(events: &[Event]) -> Result<Report, Violation> {
    verify_events(events, VerifyOptions::official())
}

fn strict(events: &[Event]) -> Result<Report, Violation> {
    verify_events(events, VerifyOptions::strict())
}

#[track_caller]
fn rejects(events: &[Event], rule: &str, index: Option<usize>) -> Violation {
    let err = official(events).expect_err("official mode should reject");
    assert_eq!((err.rule, err.index), (rule, index), "{err}");
    let strict_err = strict(events).expect_err("strict mode should reject too");
    assert_eq!(strict_err.rule, rule, "{strict_err}");
    err
}

#[track_caller]
fn accepts(events: &[Event]) -> Report {
    official(events).unwrap_or_else(|e| panic!("official: {e}"))
}

fn text_triad(id: &str) -> Vec<Event> {
    vec![
        TextMessageStart::new(id).into(),
        TextMessageContent::new(id, "hi").into(),
        TextMessageEnd::new(id).into(),
    ]
}

fn snapshots() -> Vec<Event> {
    vec![
        StateSnapshot::new(json!({})).into(),
        MessagesSnapshot::new(vec![]).into(),
    ]
}

#[test]
fn plain_run_passes_both_modes() {
    let events = run(text_triad("m"));
    let report = strict(&events).unwrap();
    assert_eq!(report.events, 5);
    assert_eq!(report.runs.len(), 1);
    assert_eq!(report.runs[0].outcome.as_str(), "success");
    assert_eq!(report.runs[0].run_id.as_deref(), Some("r"));
}

#[test]
fn l1_first_event() {
    rejects(
        &[Custom::new("x:y", json!(1)).into(), started("r")],
        "L1",
        Some(0),
    );
    let report = accepts(&[RunError::new("rejected before the run").into()]);
    assert_eq!(report.runs[0].outcome, OutcomeKind::Error);
    assert_eq!(report.runs[0].run_id, None);
    // Empty stream: the client resolves quietly; strict wants a run.
    assert!(official(&[]).is_ok());
    assert_eq!(strict(&[]).unwrap_err().rule, "STRICT-TERMINAL");
}

#[test]
fn l2_nothing_after_run_error_but_run_started() {
    rejects(
        &[
            started("r"),
            RunError::new("x").into(),
            RunError::new("y").into(),
        ],
        "L2",
        Some(2),
    );
    rejects(
        &[
            started("r"),
            RunError::new("x").into(),
            StepStarted::new("s").into(),
        ],
        "L2",
        Some(2),
    );
    let report = accepts(&[
        started("r"),
        RunError::new("x").into(),
        started("r2"),
        finished("r2"),
    ]);
    assert_eq!(
        report.runs.iter().map(|r| r.outcome).collect::<Vec<_>>(),
        [OutcomeKind::Error, OutcomeKind::Success]
    );
}

#[test]
fn l3_events_after_run_finished() {
    let mut events = run(vec![]);
    events.push(Custom::new("x:y", json!(1)).into());
    let err = rejects(&events, "L3", Some(2));
    assert!(err.message.contains("already finished with 'RUN_FINISHED'"));
    // A late RUN_ERROR is allowed, then a new run.
    let mut events = run(vec![]);
    events.extend([RunError::new("late").into(), started("r2"), finished("r2")]);
    let report = strict(&events).unwrap();
    assert!(report.runs[0].late_error);
    assert_eq!(report.runs[0].outcome, OutcomeKind::Success);
}

#[test]
fn l4_nested_run_started() {
    rejects(&[started("r"), started("r2")], "L4", Some(1));
}

#[test]
fn l5_replays_reset_per_run_tracking() {
    let mut events = run(text_triad("m"));
    // Same message id in the next run, under another owner: owners reset too.
    events.extend([
        started("r2"),
        TextMessageStart::new("m").in_subagent("s").into(),
        TextMessageEnd::new("m").into(),
        finished("r2"),
    ]);
    let report = strict(&events).unwrap();
    assert_eq!(report.runs.len(), 2);
}

#[test]
fn l6_open_items_at_run_finished() {
    let cases: Vec<(Event, &str)> = vec![
        (
            StepStarted::new("plan").into(),
            "steps are still active: plan",
        ),
        (
            TextMessageStart::new("m").into(),
            "text messages are still active: m",
        ),
        (
            ReasoningMessageStart::new("rm").into(),
            "reasoning messages are still active: rm",
        ),
        (
            ReasoningStart::new("sp").into(),
            "reasoning spans are still active: sp",
        ),
        (
            ToolCallStart::new("c", "f").into(),
            "tool calls are still active: c",
        ),
        (
            SubagentStarted::new("a", "helper").into(),
            "subagents are still active: a",
        ),
    ];
    for (open, message) in cases {
        let err = rejects(&run(vec![open]), "L6", Some(2));
        assert!(err.message.ends_with(message), "{err}");
    }
    // Order: steps first, labelled by owner.
    let err = rejects(
        &run(vec![
            StepStarted::new("p").in_subagent("s").into(),
            StepStarted::new("q").into(),
            TextMessageStart::new("m").into(),
        ]),
        "L6",
        Some(4),
    );
    assert_eq!(
        err.message,
        "Cannot send 'RUN_FINISHED' while steps are still active: p (subagent 's'), q"
    );
}

#[test]
fn l7_run_error_abandons_open_items() {
    let report = strict(&[
        started("r"),
        TextMessageStart::new("m").into(),
        ToolCallStart::new("c", "f").into(),
        RunError::new("boom").into(),
    ])
    .unwrap();
    assert_eq!(report.runs[0].outcome, OutcomeKind::Error);
}

#[test]
fn t1_t2_text_messages() {
    rejects(
        &run(vec![
            TextMessageStart::new("m").into(),
            TextMessageStart::new("m").into(),
        ]),
        "T1",
        Some(2),
    );
    let err = rejects(
        &run(vec![
            TextMessageContent::new("m", "early").into(),
            TextMessageStart::new("m").into(),
        ]),
        "T2",
        Some(1),
    );
    assert!(
        err.message
            .contains("No active text message found with ID 'm'")
    );
    rejects(&run(vec![TextMessageEnd::new("m").into()]), "T2", Some(1));
    let mut after_end = text_triad("m");
    after_end.push(TextMessageContent::new("m", "late").into());
    rejects(&run(after_end), "T2", Some(4));
    // Reopening a closed id is legal.
    let mut reopened = text_triad("m");
    reopened.extend(text_triad("m"));
    strict(&run(reopened)).unwrap();
}

#[test]
fn c1_c2_c3_tool_calls() {
    let call = |id: &str| -> Vec<Event> {
        vec![
            ToolCallStart::new(id, "f").into(),
            ToolCallArgs::new(id, "{}").into(),
            ToolCallEnd::new(id).into(),
        ]
    };
    strict(&run(call("c"))).unwrap();
    rejects(
        &run(vec![
            ToolCallStart::new("c", "f").into(),
            ToolCallStart::new("c", "f").into(),
        ]),
        "C1",
        Some(2),
    );
    let mut args_after_end = call("c");
    args_after_end.push(ToolCallArgs::new("c", "x").into());
    rejects(&run(args_after_end), "C2", Some(4));
    rejects(&run(vec![ToolCallEnd::new("zz").into()]), "C2", Some(1));
    // Reopen after END is legal, even with another parent message.
    let mut reopened = call("c");
    let mut again = ToolCallStart::new("c", "f");
    again.parent_message_id = Some("other".into());
    reopened.extend([again.into(), ToolCallEnd::new("c").into()]);
    accepts(&run(reopened));
    // C3: a result for an unknown or earlier-run call is fine.
    strict(&run(vec![
        ToolCallResult::new("tm", "from-earlier-run", "done").into(),
    ]))
    .unwrap();
}

#[test]
fn r1_r2_reasoning() {
    let ok = vec![
        ReasoningStart::new("x").into(),
        ReasoningMessageStart::new("x").into(), // separate namespace from spans
        ReasoningMessageContent::new("x", "hmm").into(),
        ReasoningMessageEnd::new("x").into(),
        ReasoningEnd::new("x").into(),
    ];
    strict(&run(ok)).unwrap();
    rejects(
        &run(vec![
            ReasoningStart::new("x").into(),
            ReasoningStart::new("x").into(),
        ]),
        "R1",
        Some(2),
    );
    rejects(
        &run(vec![
            ReasoningMessageStart::new("x").into(),
            ReasoningMessageStart::new("x").into(),
        ]),
        "R1",
        Some(2),
    );
    rejects(
        &run(vec![ReasoningMessageContent::new("x", "a").into()]),
        "R2",
        Some(1),
    );
    rejects(
        &run(vec![ReasoningMessageEnd::new("x").into()]),
        "R2",
        Some(1),
    );
    rejects(&run(vec![ReasoningEnd::new("x").into()]), "R2", Some(1));
}

#[test]
fn s1_s2_steps_per_owner() {
    strict(&run(vec![
        StepStarted::new("p").in_subagent("s").into(),
        StepStarted::new("p").into(),
        StepFinished::new("p").into(),
        StepFinished::new("p").in_subagent("s").into(),
    ]))
    .unwrap();
    rejects(
        &run(vec![
            StepStarted::new("p").into(),
            StepStarted::new("p").into(),
        ]),
        "S1",
        Some(2),
    );
    let err = rejects(&run(vec![StepFinished::new("p").into()]), "S2", Some(1));
    assert!(err.message.ends_with("that was not started"));
    let err = rejects(
        &run(vec![
            StepStarted::new("p").in_subagent("s").into(),
            StepFinished::new("p").into(),
        ]),
        "S2",
        Some(2),
    );
    assert!(err.message.contains("open under subagent 's'"), "{err}");
}

#[test]
fn a2_a3_subagent_lifecycle() {
    let mut child = SubagentStarted::new("b", "child");
    child.parent_subagent_run_id = Some("a".into());
    strict(&run(vec![
        SubagentStarted::new("a", "helper").into(),
        SubagentFinished::new("a").into(),
        child.clone().into(), // a closed parent counts as started in this run
        SubagentError::new("b", "failed").into(),
    ]))
    .unwrap();
    rejects(
        &run(vec![
            SubagentStarted::new("a", "n").into(),
            SubagentStarted::new("a", "n").into(),
        ]),
        "A2",
        Some(2),
    );
    let err = rejects(
        &run(vec![
            SubagentStarted::new("a", "n").into(),
            SubagentFinished::new("a").into(),
            SubagentStarted::new("a", "n").into(),
        ]),
        "A2",
        Some(3),
    );
    assert!(err.message.contains("cannot be reused"));
    rejects(&run(vec![child.into()]), "A2", Some(1));
    rejects(
        &run(vec![SubagentFinished::new("zz").into()]),
        "A3",
        Some(1),
    );
    rejects(
        &run(vec![SubagentError::new("zz", "x").into()]),
        "A3",
        Some(1),
    );
}

#[test]
fn a4_continuations_must_agree_with_the_owner() {
    // Untagged continuations are always accepted.
    strict(&run(vec![
        TextMessageStart::new("m").in_subagent("s").into(),
        TextMessageContent::new("m", "x").into(),
        TextMessageEnd::new("m").into(),
    ]))
    .unwrap();
    // A tagged continuation on a parent-owned item is rejected.
    let err = rejects(
        &run(vec![
            TextMessageStart::new("m").into(),
            TextMessageContent::new("m", "x").in_subagent("s").into(),
        ]),
        "A4",
        Some(2),
    );
    assert!(
        err.message
            .contains("opener's subagent '(the parent agent)'"),
        "{err}"
    );
    rejects(
        &run(vec![
            ToolCallStart::new("c", "f").in_subagent("s").into(),
            ToolCallArgs::new("c", "x").in_subagent("s2").into(),
        ]),
        "A4",
        Some(2),
    );
    rejects(
        &run(vec![
            ReasoningStart::new("x").in_subagent("s").into(),
            ReasoningEnd::new("x").in_subagent("s2").into(),
        ]),
        "A4",
        Some(2),
    );
    // Activity deltas are checked against the snapshot's owner.
    let snap: Event = ActivitySnapshot::new("act", "progress", Default::default()).into();
    rejects(
        &run(vec![
            snap.clone(),
            ActivityDelta::new("act", "progress", vec![])
                .in_subagent("s")
                .into(),
        ]),
        "A4",
        Some(2),
    );
    accepts(&run(vec![
        snap,
        ActivityDelta::new("act", "progress", vec![]).into(),
    ]));
    // Encrypted values look in the bucket the subtype names.
    let mut ok = text_triad("m");
    ok.push(
        ReasoningEncryptedValue::new(EncryptedSubtype::ToolCall, "m", "zz")
            .in_subagent("s")
            .into(),
    );
    accepts(&run(ok));
    let mut bad = text_triad("m");
    bad.push(
        ReasoningEncryptedValue::new(EncryptedSubtype::Message, "m", "zz")
            .in_subagent("s")
            .into(),
    );
    rejects(&run(bad), "A4", Some(4));
}

#[test]
fn a5_reopen_under_another_owner() {
    let mut events = vec![
        TextMessageStart::new("m").into(),
        TextMessageEnd::new("m").into(),
    ];
    events.push(TextMessageStart::new("m").in_subagent("s").into());
    rejects(&run(events), "A5", Some(3));
    // An untagged reopen of a subagent-owned id is accepted.
    strict(&run(vec![
        TextMessageStart::new("m").in_subagent("s").into(),
        TextMessageEnd::new("m").into(),
        TextMessageStart::new("m").into(),
        TextMessageEnd::new("m").into(),
    ]))
    .unwrap();
    // A tool result records the owner of the message it mints.
    rejects(
        &run(vec![
            ToolCallResult::new("m", "c", "x").in_subagent("s").into(),
            TextMessageStart::new("m").in_subagent("s2").into(),
        ]),
        "A5",
        Some(2),
    );
}

#[test]
fn a6_tool_call_parent_owner() {
    let mut start = ToolCallStart::new("c", "f").in_subagent("s");
    start.parent_message_id = Some("m".into());
    let mut events = vec![
        TextMessageStart::new("m").into(),
        TextMessageEnd::new("m").into(),
        start.clone().into(),
    ];
    rejects(&run(events.clone()), "A6", Some(3));
    // Untagged start under a subagent-owned message is fine.
    events[0] = TextMessageStart::new("m").in_subagent("s").into();
    events.push(ToolCallEnd::new("c").into());
    strict(&run(events)).unwrap();
}

#[test]
fn a7_snapshots_and_input_seed_owners() {
    let owned = |id: &str, sub: &str| {
        Message::Assistant(AssistantMessage {
            id: id.into(),
            subagent_run_id: Some(sub.into()),
            tool_calls: Some(vec![ToolCall::function("call", "f", "{}")]),
            ..AssistantMessage::default()
        })
    };
    let snapshot: Event = MessagesSnapshot::new(vec![owned("m", "s")]).into();
    rejects(
        &run(vec![
            snapshot.clone(),
            TextMessageStart::new("m").in_subagent("s2").into(),
        ]),
        "A5",
        Some(2),
    );
    rejects(
        &run(vec![
            snapshot,
            ToolCallStart::new("call", "f").in_subagent("s2").into(),
        ]),
        "A5",
        Some(2),
    );
    // The RUN_STARTED.input echo seeds too.
    let mut start = RunStarted::new("t", "r");
    start.protocol_version = Some("1.0".into());
    start.input = Some(Box::new(RunAgentInput::new(
        "t",
        "r",
        vec![owned("m", "s")],
    )));
    rejects(
        &[
            start.into(),
            TextMessageStart::new("m").in_subagent("s2").into(),
        ],
        "A5",
        Some(1),
    );
    // The expected input seeds owners in strict mode only (the client does not).
    let input = RunAgentInput::new("t", "r", vec![owned("m", "s")]);
    let events = run(vec![
        TextMessageStart::new("m").in_subagent("s2").into(),
        TextMessageEnd::new("m").into(),
    ]);
    assert!(verify_events(&events, VerifyOptions::official().with_input(input.clone())).is_ok());
    assert_eq!(
        verify_events(&events, VerifyOptions::strict().with_input(input))
            .unwrap_err()
            .rule,
        "A5"
    );
}

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
