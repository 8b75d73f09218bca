//! Guarantee 2: an interrupted run sends STATE_SNAPSHOT and MESSAGES_SNAPSHOT
//! before RUN_FINISHED{interrupt}, and announces the interrupt only once the
//! pending interrupts, state and messages are durable.

mod support;

use agui_protocol::{Event, EventType, Interrupt, Message};
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::Principal;
use handoff_core::codes::ErrorCode;
use handoff_core::records::{RunStatus, ThreadStatus};
use handoff_core::{Agent, AgentError, Finish, RunContext};
use handoff_core::{EngineConfig, RunOptions, StoreError};
use serde_json::{Value, json};
use support::*;

#[test]
fn snapshots_precede_the_interrupt_and_match_what_was_committed() {
    block_on(async {
        let h = Harness::new(RefundAgent::new(Probe::new()).with_interrupts(2));
        let input = user_input("t", "r1", "refund my order");
        let events = h.run(&input).await;

        let raised = interrupts(&events);
        assert_eq!(raised.len(), 2);
        let state_at = position(&events, EventType::StateSnapshot).expect("STATE_SNAPSHOT");
        let messages_at =
            position(&events, EventType::MessagesSnapshot).expect("MESSAGES_SNAPSHOT");
        let finished_at = events.len() - 1;
        assert!(state_at < finished_at && messages_at < finished_at);
        // Both snapshots come after everything the agent emitted.
        assert_eq!(
            types(&events)[state_at..],
            [
                EventType::StateSnapshot,
                EventType::MessagesSnapshot,
                EventType::RunFinished
            ]
        );

        let Event::StateSnapshot(state) = &events[state_at] else {
            unreachable!()
        };
        let Event::MessagesSnapshot(messages) = &events[messages_at] else {
            unreachable!()
        };
        assert_eq!(state.snapshot, json!({ "stage": "awaiting_approval" }));
        // The user's message, the streamed text, and both tool calls.
        assert!(matches!(&messages.messages[0], Message::User(_)));
        assert!(
            messages
                .messages
                .iter()
                .any(|m| m.text().as_deref() == Some("Let me check that refund."))
        );
        let calls: usize = messages
            .messages
            .iter()
            .map(|m| match m {
                Message::Assistant(a) => a.tool_calls.as_ref().map_or(0, Vec::len),
                _ => 0,
            })
            .sum();
        assert_eq!(calls, 2);

        let view = h.thread("t").await;
        assert_eq!(view.status, ThreadStatus::Interrupted);
        assert_eq!(view.pending_interrupts, raised);
        assert_eq!(view.state, state.snapshot);
        assert_eq!(view.messages, messages.messages);
        assert_eq!(
            view.last_run.map(|r| (r.run_id.to_string(), r.status)),
            Some(("r1".to_owned(), RunStatus::Interrupted))
        );
    });
}

/// Sets its state, then (optionally) says something, then asks.
struct AsksAfterSettingState {
    then_say: bool,
}

#[async_trait::async_trait]
impl Agent for AsksAfterSettingState {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        ctx.set_state(json!({ "expense": { "status": "awaiting_approval" } }));
        if self.then_say {
            ctx.say("Asking.");
        }
        Ok(Finish::interrupt(Interrupt::new("int-1", "approval")))
    }
}

fn state_snapshots(events: &[Event]) -> Vec<&Value> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::StateSnapshot(s) => Some(&s.snapshot),
            _ => None,
        })
        .collect()
}

#[test]
fn an_agent_snapshot_right_before_the_interrupt_is_not_sent_twice() {
    block_on(async {
        let h = Harness::new(AsksAfterSettingState { then_say: false });
        let events = h.run(&user_input("t", "r1", "file it")).await;
        let expected = json!({ "expense": { "status": "awaiting_approval" } });
        assert_eq!(state_snapshots(&events), [&expected], "{}", dump(&events));
        let n = events.len();
        assert_eq!(
            types(&events)[n - 3..],
            [
                EventType::StateSnapshot,
                EventType::MessagesSnapshot,
                EventType::RunFinished
            ]
        );
        assert_eq!(interrupts(&events).len(), 1);
    });
}

#[test]
fn an_agent_snapshot_followed_by_other_events_is_repeated_before_the_interrupt() {
    block_on(async {
        let h = Harness::new(AsksAfterSettingState { then_say: true });
        let events = h.run(&user_input("t", "r1", "file it")).await;
        let expected = json!({ "expense": { "status": "awaiting_approval" } });
        assert_eq!(
            state_snapshots(&events),
            [&expected, &expected],
            "{}",
            dump(&events)
        );
        let n = events.len();
        assert_eq!(
            types(&events)[n - 3..],
            [
                EventType::StateSnapshot,
                EventType::MessagesSnapshot,
                EventType::RunFinished
            ]
        );
    });
}

#[test]
fn the_interrupt_is_announced_only_after_its_commit_lands() {
    block_on(async {
        let h = Harness::new(RefundAgent::new(Probe::new()));
        let held = h
            .store
            .hold_next_commit_where(finishing_commit("interrupted"));
        let input = user_input("t", "r1", "refund my order");
        let mut stream = h.stream(&input).await;

        // The finishing commit is in flight: the snapshots are out, RUN_FINISHED is not.
        let (mut events, ended) = drain_ready(&mut stream);
        assert!(!ended);
        assert!(
            position(&events, EventType::MessagesSnapshot).is_some(),
            "{}",
            dump(&events)
        );
        assert!(
            !contains_run_finished(&events),
            "RUN_FINISHED went out before its commit\n{}",
            dump(&events)
        );
        let view = h.thread("t").await;
        assert_eq!(view.status, ThreadStatus::Running);
        assert!(view.pending_interrupts.is_empty());

        held.open();
        events.extend(stream.collect::<Vec<_>>().await);
        assert_valid_stream(&events, &input);
        let raised = interrupts(&events);
        assert_eq!(h.thread("t").await.pending_interrupts, raised);
    });
}

#[test]
fn a_failed_interrupt_commit_ends_with_store_unavailable_and_never_announces_the_interrupt() {
    block_on(async {
        let probe = Probe::new();
        let config = EngineConfig {
            lease_ms: 30_000,
            ..EngineConfig::default()
        };
        let h = Harness::with_config(RefundAgent::new(probe.clone()), config);
        h.store.fail_commits_where(
            StoreError::Unavailable("ProvisionedThroughputExceeded on table handoff-prod".into()),
            finishing_commit("interrupted"),
        );
        let input = user_input("t", "r1", "refund my order");
        let events = h.run(&input).await;

        let error = run_error(&events);
        assert_eq!(error.code.as_deref(), Some("STORE_UNAVAILABLE"));
        assert!(
            !error.message.contains("handoff-prod"),
            "backend detail leaked: {}",
            error.message
        );
        assert!(!contains_run_finished(&events));
        assert!(
            events
                .iter()
                .all(|e| !e.to_json().contains("\"interrupt\"")),
            "an interrupt was announced\n{}",
            dump(&events)
        );
        assert_eq!(h.store.injected_failures(), 1);

        // Nothing is pending: a client could never have answered anything.
        let view = h.thread("t").await;
        assert!(view.pending_interrupts.is_empty());
        assert_ne!(view.status, ThreadStatus::Interrupted);

        // Once storage is back and the dead run's lease has lapsed, the same
        // request runs again in place and this time raises its interrupt.
        h.store.heal();
        h.advance(30_000);
        let events = h.run(&input).await;
        assert_eq!(interrupts(&events).len(), 1);
        assert_eq!(h.thread("t").await.status, ThreadStatus::Interrupted);
    });
}

#[test]
fn a_failed_success_commit_ends_with_store_unavailable_not_run_finished() {
    block_on(async {
        let h = Harness::new(Chatty);
        h.store.fail_commits_where(
            StoreError::Unavailable("timeout".into()),
            finishing_commit("idle"),
        );
        let input = user_input("t", "r1", "hello");
        let events = h.run(&input).await;
        assert_eq!(
            run_error(&events).code.as_deref(),
            Some("STORE_UNAVAILABLE")
        );
        assert!(!contains_run_finished(&events));
    });
}

#[test]
fn a_failed_claim_is_answered_before_any_stream_and_writes_nothing() {
    block_on(async {
        let h = Harness::new(Chatty);
        h.store
            .fail_commits_where(StoreError::Unavailable("throttled".into()), |_, _| true);
        let err = h.reject(&user_input("t", "r1", "hello")).await;
        assert_eq!(err.code().name, "STORE_UNAVAILABLE");
        assert_eq!(err.http_status(), 503);
        assert!(err.retryable());
        assert!(!err.public_message().contains("throttled"));
        assert!(
            h.engine
                .thread(&Principal::anonymous(), "t")
                .await
                .unwrap()
                .is_none()
        );

        h.store.heal();
        let events = h
            .run_with(&user_input("t", "r1", "hello"), RunOptions::default())
            .await;
        assert_eq!(
            outcome(&events),
            &agui_protocol::RunFinishedOutcome::success()
        );
    });
}
