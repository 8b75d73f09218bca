//! One positive and at least one negative case per sequencing rule.
//!
//! The cases live in one module per group of rules; the helpers they share are here.

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

mod items;
mod lifecycle;
mod strict;
mod subagents;
