//! The stream check the other suites rely on has teeth: it rejects the ways an
//! engine could get a stream wrong.

mod support;

use agui_protocol::event::{
    MessagesSnapshot, RunError, RunFinished, RunStarted, StateSnapshot, TextMessageContent,
    TextMessageStart,
};
use agui_protocol::{Event, Interrupt, RunFinishedOutcome};
use serde_json::json;
use support::*;

fn started(run: &str) -> Event {
    let mut e = RunStarted::new("t", run);
    e.protocol_version = Some("1.0".to_owned());
    e.into()
}

fn finished_with(outcome: Option<RunFinishedOutcome>) -> Event {
    let mut e = RunFinished::new("t", "r1");
    e.outcome = outcome;
    e.into()
}

fn rejects(events: Vec<Event>) -> bool {
    let input = user_input("t", "r1", "hi");
    std::panic::catch_unwind(move || assert_valid_stream(&events, &input)).is_err()
}

#[test]
fn a_well_formed_stream_passes() {
    let input = user_input("t", "r1", "hi");
    assert_valid_stream(
        &[
            started("r1"),
            finished_with(Some(RunFinishedOutcome::success())),
        ],
        &input,
    );
    assert_valid_stream(&[started("r1"), RunError::new("boom").into()], &input);
}

#[test]
fn broken_streams_are_rejected() {
    let interrupt = RunFinishedOutcome::Interrupt {
        interrupts: vec![Interrupt::new("i1", "confirmation")],
    };
    let mut no_version = RunStarted::new("t", "r1");
    no_version.protocol_version = None;
    let cases: Vec<(&str, Vec<Event>)> = vec![
        (
            "no protocolVersion",
            vec![
                no_version.into(),
                finished_with(Some(RunFinishedOutcome::success())),
            ],
        ),
        ("implicit outcome", vec![started("r1"), finished_with(None)]),
        ("no terminal event", vec![started("r1")]),
        (
            "wrong run id",
            vec![
                started("r2"),
                finished_with(Some(RunFinishedOutcome::success())),
            ],
        ),
        (
            "interrupt without snapshots",
            vec![started("r1"), finished_with(Some(interrupt.clone()))],
        ),
        (
            "interrupt without messages snapshot",
            vec![
                started("r1"),
                StateSnapshot::new(json!({})).into(),
                finished_with(Some(interrupt)),
            ],
        ),
        (
            "open text at finish",
            vec![
                started("r1"),
                TextMessageStart::new("m").into(),
                finished_with(Some(RunFinishedOutcome::success())),
            ],
        ),
        (
            "content before start",
            vec![
                started("r1"),
                TextMessageContent::new("m", "x").into(),
                RunError::new("x").into(),
            ],
        ),
        (
            "error after finish",
            vec![
                started("r1"),
                finished_with(Some(RunFinishedOutcome::success())),
                RunError::new("late").into(),
            ],
        ),
        (
            "events after error",
            vec![
                started("r1"),
                RunError::new("x").into(),
                MessagesSnapshot::new(Vec::new()).into(),
            ],
        ),
    ];
    for (name, events) in cases {
        assert!(rejects(events), "accepted a stream with {name}");
    }
}
