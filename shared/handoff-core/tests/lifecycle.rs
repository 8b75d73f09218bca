//! Guarantee 1: every stream the engine emits is valid — on success, when the
//! agent fails or panics, when the host deadline approaches, and whatever the
//! agent tries to emit itself.

mod support;

use agui_protocol::event::{RunError, RunFinished, RunStarted, StepStarted};
use agui_protocol::{Event, EventType, Interrupt, RunFinishedOutcome};
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::records::{RunStatus, ThreadStatus};
use handoff_core::{AgentError, EngineConfig, Finish, RunOptions};
use serde_json::json;
use support::*;

const STOP_POLL_MS: u64 = 1_000;
const LIVE_FLUSH_MS: u64 = 250;

const SECRET: &str = "postgres://admin:hunter2@10.0.0.7/ledger";

#[test]
fn a_successful_run_is_valid_declares_1_0_and_has_an_explicit_success_outcome() {
    block_on(async {
        let h = Harness::new(Chatty);
        let input = user_input("t", "r1", "hello");
        let events = h.run(&input).await;

        assert_eq!(
            types(&events),
            [
                EventType::RunStarted,
                EventType::TextMessageStart,
                EventType::TextMessageContent,
                EventType::TextMessageContent,
                EventType::TextMessageContent,
                EventType::TextMessageEnd,
                EventType::RunFinished,
            ]
        );
        let Event::RunStarted(started) = &events[0] else {
            unreachable!()
        };
        assert_eq!(started.protocol_version.as_deref(), Some("1.0"));
        assert_eq!(text(&events), "You said: hello");
        let done = finished(&events);
        assert_eq!(done.outcome, Some(RunFinishedOutcome::success()));
        assert_eq!(done.result, Some(json!({ "echo": "hello" })));
        // The wire form spells the outcome out too.
        assert!(
            events
                .last()
                .unwrap()
                .to_json()
                .contains(r#""outcome":{"type":"success"}"#)
        );
        // Every event is timestamped from the injected clock.
        assert!(events.iter().all(|e| e.base().timestamp == Some(T0)));

        let view = h.thread("t").await;
        assert_eq!(view.status, ThreadStatus::Idle);
        assert_eq!(
            view.last_run.as_ref().map(|r| r.status),
            Some(RunStatus::Succeeded)
        );
    });
}

#[test]
fn an_agent_error_ends_with_a_redacted_agent_error() {
    block_on(async {
        let h = Harness::new(Scripted(|ctx| {
            let msg = ctx.text_start();
            ctx.text_delta(&msg, "Looking that up");
            // The message is left open on purpose: RUN_ERROR may interrupt anything.
            Err(AgentError::new(format!("could not reach {SECRET}")))
        }));
        let input = user_input("t", "r1", "refund me");
        let events = h.run(&input).await;

        let error = run_error(&events);
        assert_eq!(error.code.as_deref(), Some("AGENT_ERROR"));
        assert!(!contains_run_finished(&events));
        for event in &events {
            assert!(
                !event.to_json().contains("hunter2"),
                "agent internals leaked: {}",
                event.to_json()
            );
        }
        // Nor does the recorded log (it is what reconnecting clients replay).
        let (record, log) = h.run_record("t", "r1").await.expect("run record");
        assert_eq!(record.status, RunStatus::Errored);
        assert!(log.iter().all(|e| !e.to_json().contains("hunter2")));
        assert_valid_stream(&log, &input);

        let view = h.thread("t").await;
        assert_eq!(view.status, ThreadStatus::Idle);
        assert_eq!(view.last_run.map(|r| r.status), Some(RunStatus::Errored));
        // A failed run leaves the history as it was: no half-written assistant message.
        assert!(view.messages.is_empty(), "{:?}", view.messages);
    });
}

#[test]
fn a_panicking_agent_ends_with_agent_panicked_and_releases_the_thread() {
    block_on(async {
        let h = Harness::new(Scripted(|ctx| {
            ctx.step_start("plan");
            let _ = ctx.text_start();
            panic!("index out of bounds while reading {SECRET}")
        }));
        let input = user_input("t", "r1", "hi");
        let events = h.run(&input).await;

        let error = run_error(&events);
        assert_eq!(error.code.as_deref(), Some("AGENT_PANICKED"));
        assert!(events.iter().all(|e| !e.to_json().contains("hunter2")));
        assert_eq!(
            h.thread("t").await.last_run.map(|r| r.status),
            Some(RunStatus::Errored)
        );

        // The lease was released: the next request on the thread is not busy.
        let next = h
            .engine
            .start(user_input("t", "r2", "again"), RunOptions::default())
            .await;
        assert!(
            next.is_ok(),
            "the thread stayed locked after a panic: {:?}",
            next.err()
        );
    });
}

#[test]
fn the_deadline_stops_the_agent_margin_early_closes_open_items_and_finishes_cancelled() {
    block_on(async {
        let gate = Gate::new();
        let mut agent = Blocking::new(gate.clone());
        agent.leave_open = true;
        let probe = agent.probe.clone();
        let h = Harness::new(agent);
        let margin = h.engine.config().deadline_margin_ms;
        let deadline = h.now() + 60_000;
        let input = user_input("t", "r1", "slow please");
        let mut stream = h
            .stream_with(
                &input,
                RunOptions {
                    deadline_ms: Some(deadline),
                    ..RunOptions::default()
                },
            )
            .await;

        let mut events = until_blocked(&mut stream);
        // The engine armed exactly one timer, for the deadline minus the margin.
        // The stop timer, beside the stop-request poll and the live journal.
        assert_eq!(
            h.sleep.requested(),
            vec![60_000 - margin, STOP_POLL_MS, LIVE_FLUSH_MS]
        );

        h.sleep.fire();
        events.extend(stream.collect::<Vec<_>>().await);
        assert_valid_stream(&events, &input);

        assert_eq!(outcome(&events), &RunFinishedOutcome::Cancelled);
        let blocked = events
            .iter()
            .position(|e| matches!(e, Event::Custom(_)))
            .unwrap();
        // Innermost first: the tool call, then the text message that carries it.
        assert_eq!(
            types(&events[blocked + 1..]),
            [
                EventType::ToolCallEnd,
                EventType::TextMessageEnd,
                EventType::RunFinished
            ]
        );
        assert!(!gate.is_open());
        assert_eq!(probe.runs.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(!text(&events).contains("released"));

        let view = h.thread("t").await;
        assert_eq!(view.status, ThreadStatus::Idle);
        assert_eq!(view.last_run.map(|r| r.status), Some(RunStatus::Cancelled));
        // What was said before the stop is kept.
        assert!(
            view.messages
                .iter()
                .any(|m| m.text().as_deref() == Some("Working on it"))
        );
    });
}

#[test]
fn a_deadline_already_reached_cancels_at_once() {
    block_on(async {
        let h = Harness::new(Blocking::new(Gate::new()));
        h.sleep.complete_immediately_up_to(0);
        let input = user_input("t", "r1", "hi");
        // No budget left: the margin shrinks to nothing and the timer fires at once.
        let deadline = h.now();
        let events = h
            .run_with(
                &input,
                RunOptions {
                    deadline_ms: Some(deadline),
                    ..RunOptions::default()
                },
            )
            .await;
        assert_eq!(h.sleep.requested(), vec![0]);
        assert_eq!(outcome(&events), &RunFinishedOutcome::Cancelled);
    });
}

#[test]
fn a_run_that_ends_before_the_deadline_is_not_cancelled() {
    block_on(async {
        let h = Harness::new(Chatty);
        let input = user_input("t", "r1", "quick");
        let events = h
            .run_with(
                &input,
                RunOptions {
                    deadline_ms: Some(h.now() + 60_000),
                    ..RunOptions::default()
                },
            )
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        // Firing the timer afterwards changes nothing.
        h.sleep.fire();
        assert_eq!(
            h.thread("t").await.last_run.map(|r| r.status),
            Some(RunStatus::Succeeded)
        );
    });
}

#[test]
fn a_custom_margin_is_honoured() {
    block_on(async {
        let config = EngineConfig {
            deadline_margin_ms: 250,
            ..EngineConfig::default()
        };
        let h = Harness::with_config(Blocking::new(Gate::new()), config);
        let input = user_input("t", "r1", "hi");
        let mut stream = h
            .stream_with(
                &input,
                RunOptions {
                    deadline_ms: Some(h.now() + 10_000),
                    ..RunOptions::default()
                },
            )
            .await;
        let mut events = until_blocked(&mut stream);
        // The stop timer, beside the stop-request poll and the live journal.
        assert_eq!(
            h.sleep.requested(),
            vec![9_750, STOP_POLL_MS, LIVE_FLUSH_MS]
        );
        h.sleep.fire();
        events.extend(stream.collect::<Vec<_>>().await);
        assert_valid_stream(&events, &input);
        assert_eq!(outcome(&events), &RunFinishedOutcome::Cancelled);
    });
}

#[test]
fn a_short_budget_caps_the_margin_at_a_fifth() {
    block_on(async {
        // The default 3 s margin would leave a 3 s Lambda timeout no time at all.
        let h = Harness::with_config(Blocking::new(Gate::new()), EngineConfig::default());
        let input = user_input("t", "r1", "hi");
        let mut stream = h
            .stream_with(
                &input,
                RunOptions {
                    deadline_ms: Some(h.now() + 3_000),
                    ..RunOptions::default()
                },
            )
            .await;
        let mut events = until_blocked(&mut stream);
        // The stop timer, beside the stop-request poll and the live journal.
        assert_eq!(
            h.sleep.requested(),
            vec![2_400, STOP_POLL_MS, LIVE_FLUSH_MS]
        );
        h.sleep.fire();
        events.extend(stream.collect::<Vec<_>>().await);
        assert_valid_stream(&events, &input);
        assert_eq!(outcome(&events), &RunFinishedOutcome::Cancelled);
    });
}

#[test]
fn agents_cannot_emit_run_lifecycle_events() {
    block_on(async {
        let h = Harness::new(Scripted(|ctx| {
            let thread = ctx.thread_id().clone();
            let run = ctx.run_id().clone();
            ctx.emit(RunStarted::new(thread.clone(), "forged"));
            ctx.emit(RunError::new("forged failure"));
            ctx.emit(RunFinished::new(thread, run));
            ctx.say("still here");
            Ok(Finish::done())
        }));
        let input = user_input("t", "r1", "hi");
        let events = h.run(&input).await;
        assert_eq!(
            events
                .iter()
                .filter(|e| matches!(e, Event::RunStarted(_)))
                .count(),
            1
        );
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(text(&events), "still here");
    });
}

#[test]
fn items_the_agent_left_open_are_closed_before_a_successful_finish() {
    block_on(async {
        let h = Harness::new(Scripted(|ctx| {
            ctx.step_start("research");
            ctx.emit(agui_protocol::event::ReasoningStart::new("span-1"));
            let msg = ctx.text_start();
            ctx.text_delta(&msg, "partial");
            let call = ctx.tool_call_start("lookup", Some(&msg));
            ctx.tool_call_args(&call, "{}");
            Ok(Finish::done())
        }));
        let input = user_input("t", "r1", "hi");
        let events = h.run(&input).await;
        let tail: Vec<EventType> = types(&events).into_iter().rev().take(5).collect();
        assert_eq!(
            tail,
            [
                EventType::RunFinished,
                EventType::StepFinished,
                EventType::ReasoningEnd,
                EventType::TextMessageEnd,
                EventType::ToolCallEnd,
            ]
        );
    });
}

#[test]
fn steps_closed_by_the_agent_are_not_closed_twice() {
    block_on(async {
        let h = Harness::new(Scripted(|ctx| {
            ctx.emit(StepStarted::new("a"));
            ctx.step_end("a");
            ctx.step_start("a");
            ctx.step_end("a");
            Ok(Finish::done())
        }));
        let input = user_input("t", "r1", "hi");
        let events = h.run(&input).await;
        assert_eq!(
            events
                .iter()
                .filter(|e| e.event_type() == EventType::StepFinished)
                .count(),
            2
        );
    });
}

/// An agent body that ends its run without awaiting anything.
type FinishWith = fn(&mut handoff_core::RunContext) -> Result<Finish, AgentError>;

#[test]
fn malformed_interrupts_from_the_agent_become_agent_errors_not_invalid_streams() {
    let cases: [(&str, FinishWith); 3] = [
        ("empty", |_| Ok(Finish::Interrupt(Vec::new()))),
        ("duplicate ids", |_| {
            Ok(Finish::Interrupt(vec![
                Interrupt::new("same", "confirmation").into(),
                Interrupt::new("same", "confirmation").into(),
            ]))
        }),
        ("unknown tool call", |_| {
            Ok(Finish::interrupt(
                Interrupt::new("i1", "tool_call").with_tool_call("tc-nowhere"),
            ))
        }),
    ];
    for (name, script) in cases {
        block_on(async {
            let h = Harness::new(Scripted(script));
            let input = user_input("t", "r1", "hi");
            let events = h.run(&input).await;
            assert_eq!(
                run_error(&events).code.as_deref(),
                Some("AGENT_ERROR"),
                "{name}"
            );
            let view = h.thread("t").await;
            assert!(
                view.pending_interrupts.is_empty(),
                "{name}: a rejected interrupt became pending"
            );
            assert_eq!(view.status, ThreadStatus::Idle, "{name}");
        });
    }
}

#[test]
fn a_failed_state_patch_changes_nothing_and_emits_nothing() {
    block_on(async {
        let h = Harness::new(Scripted(|ctx| {
            let bad = ctx.patch_state(vec![agui_protocol::PatchOp::replace(
                "/missing/deep",
                json!(1),
            )]);
            assert!(bad.is_err());
            ctx.patch_state(vec![agui_protocol::PatchOp::add("/ok", json!(true))])?;
            Ok(Finish::done())
        }));
        let input = user_input("t", "r1", "hi");
        let events = h.run(&input).await;
        assert_eq!(
            events
                .iter()
                .filter(|e| e.event_type() == EventType::StateDelta)
                .count(),
            1
        );
        assert_eq!(h.thread("t").await.state, json!({ "ok": true }));
    });
}

#[test]
fn unanswered_frontend_tool_calls_are_listed_as_pending() {
    block_on(async {
        let h = Harness::new(Scripted(|ctx| {
            let lookup = ctx.tool_call("lookup_order", &json!({ "id": 7 }));
            ctx.tool_result(&lookup, "{\"status\":\"shipped\"}");
            ctx.tool_call("confirm_address", &json!({ "street": "Main St 1" }));
            Ok(Finish::done())
        }));
        let mut input = user_input("t", "r1", "where is my order?");
        input.tools = Some(vec![agui_protocol::Tool {
            name: "confirm_address".to_owned(),
            description: "Ask the user to confirm the address".to_owned(),
            parameters: None,
            metadata: None,
        }]);
        let events = h.run(&input).await;
        let frontend = events
            .iter()
            .find_map(|e| match e {
                Event::ToolCallStart(s) if s.tool_call_name == "confirm_address" => {
                    Some(s.tool_call_id.clone())
                }
                _ => None,
            })
            .unwrap();
        assert_eq!(
            outcome(&events),
            &RunFinishedOutcome::Success {
                pending_tool_call_ids: Some(vec![frontend])
            }
        );
    });
}

/// `start_shared` (the HTTP host's stream) carries the very run `start` does: the same
/// events for a fresh run on a twin engine, and the recorded run again on a retry.
#[test]
fn the_shared_stream_carries_the_same_run_as_the_owned_one() {
    async fn shared(h: &Harness, input: &agui_protocol::RunAgentInput) -> Vec<Event> {
        let events = h.engine.start_shared(input.clone(), RunOptions::default());
        let events = events.await.expect("accepted");
        events.map(|e| (*e).clone()).collect().await
    }
    block_on(async {
        let input = user_input("t", "r1", "hello");
        let owned = Harness::new(Chatty).run(&input).await;
        let h = Harness::new(Chatty);
        let live = shared(&h, &input).await;
        assert_valid_stream(&live, &input);
        assert_eq!(live, owned);
        // A retry of the same request is a replay of the recorded run, shared or not.
        let replayed = shared(&h, &input).await;
        assert_eq!(types(&replayed), types(&owned));
        assert_eq!(text(&replayed), "You said: hello");
    });
}
