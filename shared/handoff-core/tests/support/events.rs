//! What tests read from a run's events, the stream-validity assertion every test applies,
//! and the inputs they send.

use agui_protocol::event::{RunError, RunFinished, ToolCallResult};
use agui_protocol::verify::{VerifyOptions, verify_events};
use agui_protocol::{
    Event, EventType, Interrupt, Message, PROTOCOL_VERSION, ResumeEntry, RunAgentInput,
    RunFinishedOutcome,
};
use serde_json::json;

/// The stream must pass the strict verifier against the input it answers, and
/// must hold Handoff's own framing promises: `RUN_STARTED` (protocolVersion
/// "1.0") first, exactly one terminal event and it is the last one, and a
/// `RUN_FINISHED` always carries an explicit outcome.
#[track_caller]
pub fn assert_valid_stream(events: &[Event], input: &RunAgentInput) {
    if let Err(violation) = verify_events(events, VerifyOptions::strict().with_input(input.clone()))
    {
        panic!(
            "strict verifier rejected the stream: {violation}\n{}",
            dump(events)
        );
    }
    match events.first() {
        Some(Event::RunStarted(e)) => {
            assert_eq!(
                e.protocol_version.as_deref(),
                Some(PROTOCOL_VERSION),
                "RUN_STARTED.protocolVersion\n{}",
                dump(events)
            );
            assert_eq!(e.thread_id, input.thread_id, "RUN_STARTED.threadId");
            assert_eq!(e.run_id, input.run_id, "RUN_STARTED.runId");
        }
        _ => panic!("the stream must open with RUN_STARTED\n{}", dump(events)),
    }
    let terminals: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Event::RunFinished(_) | Event::RunError(_)))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(
        terminals,
        vec![events.len() - 1],
        "exactly one terminal event, last\n{}",
        dump(events)
    );
    if let Some(Event::RunFinished(f)) = events.last() {
        assert!(
            f.outcome.is_some(),
            "RUN_FINISHED without an explicit outcome\n{}",
            dump(events)
        );
        assert_eq!(f.run_id, input.run_id, "RUN_FINISHED.runId");
    }
}

/// One line per event, for failure messages.
pub fn dump(events: &[Event]) -> String {
    events
        .iter()
        .enumerate()
        .map(|(i, e)| format!("  #{i} {}\n", e.to_json()))
        .collect()
}

pub fn types(events: &[Event]) -> Vec<EventType> {
    events.iter().map(Event::event_type).collect()
}

pub fn position(events: &[Event], ty: EventType) -> Option<usize> {
    events.iter().position(|e| e.event_type() == ty)
}

pub fn finished(events: &[Event]) -> &RunFinished {
    match events.last() {
        Some(Event::RunFinished(f)) => f,
        _ => panic!("expected RUN_FINISHED last\n{}", dump(events)),
    }
}

pub fn run_error(events: &[Event]) -> &RunError {
    match events.last() {
        Some(Event::RunError(e)) => e,
        _ => panic!("expected RUN_ERROR last\n{}", dump(events)),
    }
}

pub fn outcome(events: &[Event]) -> &RunFinishedOutcome {
    finished(events).outcome.as_ref().expect("explicit outcome")
}

pub fn interrupts(events: &[Event]) -> Vec<Interrupt> {
    match outcome(events) {
        RunFinishedOutcome::Interrupt { interrupts } => interrupts.clone(),
        other => panic!(
            "expected an interrupt outcome, got {other:?}\n{}",
            dump(events)
        ),
    }
}

pub fn tool_results(events: &[Event]) -> Vec<ToolCallResult> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallResult(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// The assistant text of the stream (all `TEXT_MESSAGE_CONTENT` deltas).
pub fn text(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TextMessageContent(c) => Some(c.delta.as_str()),
            _ => None,
        })
        .collect()
}

pub fn contains_run_finished(events: &[Event]) -> bool {
    events.iter().any(|e| matches!(e, Event::RunFinished(_)))
}

// ---------------------------------------------------------------------------
// Inputs.
// ---------------------------------------------------------------------------

pub fn user_input(thread: &str, run: &str, text: &str) -> RunAgentInput {
    RunAgentInput::new(thread, run, vec![Message::user(format!("u-{run}"), text)])
}

pub fn resume_input(thread: &str, run: &str, entries: Vec<ResumeEntry>) -> RunAgentInput {
    RunAgentInput::new(thread, run, Vec::new()).with_resume(entries)
}

pub fn approve(interrupt: &Interrupt) -> ResumeEntry {
    ResumeEntry::resolved(interrupt.id.clone(), json!({ "approved": true }))
}

pub fn deny(interrupt: &Interrupt) -> ResumeEntry {
    ResumeEntry::resolved(interrupt.id.clone(), json!({ "approved": false }))
}

pub fn cancel(interrupt: &Interrupt) -> ResumeEntry {
    ResumeEntry::cancelled(interrupt.id.clone())
}
