//! Text messages, tool calls, reasoning and steps (T, C, R and S rules).

use super::*;

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
