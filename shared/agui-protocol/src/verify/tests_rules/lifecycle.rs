//! The run lifecycle rules (L1-L7).

use super::*;

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
