//! Sub-agent lifecycles and owners (A rules).

use super::*;

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
