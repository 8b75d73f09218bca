//! Double-texting: a message sent while a run is running on its thread. `reject` (the
//! default) is 409 `THREAD_BUSY`; `interrupt` stops the running run and then runs;
//! `enqueue` runs once the running run has finished. The new message, which cannot
//! contain the running run's reply, is merged after it rather than refused as stale.

mod support;

use agui_protocol::{Message, RunAgentInput, RunFinishedOutcome};
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::records::RunStatus;
use handoff_core::{DoubleText, EngineConfig, RunOptions};
use support::*;

fn harness(policy: DoubleText, gate: &Gate) -> Harness {
    let config = EngineConfig {
        double_text: policy,
        ..EngineConfig::default()
    };
    let agent = Blocking {
        leave_open: true,
        ..Blocking::new(gate.clone())
    };
    Harness::with_config(agent, config)
}

/// The second message as a client sends it mid-stream: its history has the first
/// message, not the reply that is still streaming.
fn second_message() -> RunAgentInput {
    RunAgentInput::new(
        "t",
        "r2",
        vec![
            Message::user("u-r1", "long job"),
            Message::user("u-r2", "and one more thing"),
        ],
    )
}

fn ids(messages: &[Message]) -> Vec<&str> {
    messages.iter().map(|m| m.id().as_str()).collect()
}

#[test]
fn reject_is_the_default() {
    block_on(async {
        let gate = Gate::new();
        let h = harness(DoubleText::default(), &gate);
        let mut first = h.stream(&user_input("t", "r1", "long job")).await;
        until_blocked(&mut first);
        assert_eq!(h.reject(&second_message()).await.code().name, "THREAD_BUSY");
    });
}

#[test]
fn interrupt_stops_the_running_run_then_runs_the_new_message_after_it() {
    block_on(async {
        let gate = Gate::new();
        let h = harness(DoubleText::Interrupt, &gate);
        let mut first = h.stream(&user_input("t", "r1", "long job")).await;
        let mut first_events = until_blocked(&mut first);

        let mut second = h.stream(&second_message()).await;
        let (early, ended) = drain_ready(&mut second);
        assert!(!ended && early.is_empty(), "waits: {}", dump(&early));
        // The stop reached the running run on this instance at once.
        let (more, ended) = drain_ready(&mut first);
        first_events.extend(more);
        assert!(
            ended,
            "the running run was not stopped\n{}",
            dump(&first_events)
        );
        assert_eq!(outcome(&first_events), &RunFinishedOutcome::Cancelled);

        gate.open();
        h.sleep.fire();
        let events: Vec<_> = second.collect().await;
        assert_valid_stream(&events, &second_message());
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        let (first_record, _) = h.run_record("t", "r1").await.unwrap();
        assert_eq!(first_record.status, RunStatus::Cancelled);

        let thread = h.thread("t").await;
        let history = ids(&thread.messages);
        let reply = history
            .iter()
            .position(|id| *id != "u-r1" && *id != "u-r2")
            .unwrap();
        let second_at = history.iter().position(|id| *id == "u-r2").unwrap();
        assert_eq!(history[0], "u-r1");
        assert!(
            reply < second_at,
            "the new message comes after the stopped run's reply: {history:?}"
        );
    });
}

#[test]
fn enqueue_waits_for_the_running_run_to_finish() {
    block_on(async {
        let gate = Gate::new();
        let h = harness(DoubleText::Enqueue, &gate);
        let mut first = h.stream(&user_input("t", "r1", "long job")).await;
        let mut first_events = until_blocked(&mut first);

        let mut second = h.stream(&second_message()).await;
        let (early, _) = drain_ready(&mut second);
        h.sleep.fire();
        let (later, ended) = drain_ready(&mut second);
        assert!(
            !ended && early.is_empty() && later.is_empty(),
            "still waiting: {}",
            dump(&later)
        );
        let (more, ended) = drain_ready(&mut first);
        first_events.extend(more);
        assert!(!ended, "enqueue does not stop the running run");

        gate.open();
        first_events.extend(first.collect::<Vec<_>>().await);
        assert_eq!(outcome(&first_events), &RunFinishedOutcome::success());
        h.sleep.fire();
        let events: Vec<_> = second.collect().await;
        assert_valid_stream(&events, &second_message());
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        let history = h.thread("t").await;
        let history = ids(&history.messages);
        let first_reply = history
            .iter()
            .position(|id| *id != "u-r1" && *id != "u-r2")
            .unwrap();
        let second_at = history.iter().position(|id| *id == "u-r2").unwrap();
        assert!(
            first_reply < second_at,
            "after the first run's reply: {history:?}"
        );
        assert_eq!(
            history.iter().filter(|id| **id == "u-r1").count(),
            1,
            "the resent first message is not duplicated"
        );
    });
}

#[test]
fn an_enqueued_run_gives_up_at_the_hosts_deadline() {
    block_on(async {
        let gate = Gate::new();
        let h = harness(DoubleText::Enqueue, &gate);
        let mut first = h.stream(&user_input("t", "r1", "long job")).await;
        until_blocked(&mut first);
        let options = RunOptions {
            deadline_ms: Some(h.now() + 5_000),
            ..RunOptions::default()
        };
        let mut second = h.stream_with(&second_message(), options).await;
        let (early, ended) = drain_ready(&mut second);
        assert!(!ended && early.is_empty(), "waits: {}", dump(&early));
        h.advance(3_000);
        h.sleep.fire();
        let (events, ended) = drain_ready(&mut second);
        assert!(ended, "{}", dump(&events));
        assert_eq!(run_error(&events).code.as_deref(), Some("THREAD_BUSY"));
        gate.open();
        let rest: Vec<_> = first.collect().await;
        assert!(
            contains_run_finished(&rest),
            "the running run was left alone"
        );
    });
}
