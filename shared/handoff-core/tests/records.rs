//! Guarantee 6: what a reconnecting client can read back — the thread view, the
//! compacted run log (itself a valid stream) — and record expiry.

mod support;

use agui_protocol::{Event, EventType, RunFinishedOutcome};
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::engine::compact;
use handoff_core::records::{RunRecord, RunStatus, ThreadStatus};
use handoff_core::{CoreError, Principal};
use handoff_core::{EngineConfig, Finish, RunOptions, Store};
use serde_json::json;
use support::*;

fn count(events: &[Event], ty: EventType) -> usize {
    events.iter().filter(|e| e.event_type() == ty).count()
}

#[test]
fn the_thread_view_follows_the_thread_through_interrupt_and_resume() {
    block_on(async {
        let h = Harness::new(RefundAgent::new(Probe::new()));
        assert!(
            h.engine
                .thread(&Principal::anonymous(), "t")
                .await
                .unwrap()
                .is_none()
        );

        let events = h.run(&user_input("t", "r1", "refund order 7")).await;
        let raised = interrupts(&events);
        let view = h.thread("t").await;
        assert_eq!(view.thread_id, "t");
        assert_eq!(view.status, ThreadStatus::Interrupted);
        assert_eq!(view.pending_interrupts, raised);
        assert_eq!(view.state, json!({ "stage": "awaiting_approval" }));
        assert_eq!(
            view.messages.len(),
            3,
            "user, assistant text, assistant tool call: {:?}",
            view.messages
        );
        assert_eq!(
            view.last_run
                .as_ref()
                .map(|r| (r.run_id.to_string(), r.status)),
            Some(("r1".to_owned(), RunStatus::Interrupted))
        );
        // The view serializes in the documented camelCase shape.
        let json = serde_json::to_value(&view).unwrap();
        assert_eq!(json["status"], "interrupted");
        assert_eq!(json["pendingInterrupts"][0]["id"], json!(raised[0].id));
        assert_eq!(json["lastRun"]["status"], "interrupted");

        h.run(&resume_input("t", "r2", vec![approve(&raised[0])]))
            .await;
        let view = h.thread("t").await;
        assert_eq!(view.status, ThreadStatus::Idle);
        assert!(view.pending_interrupts.is_empty());
        assert_eq!(view.state, json!({ "stage": "done" }));
        assert_eq!(
            view.messages.len(),
            5,
            "plus the tool result and 'Done.': {:?}",
            view.messages
        );
        assert_eq!(
            view.messages.last().and_then(|m| m.text()).as_deref(),
            Some("Done.")
        );
        assert_eq!(
            view.last_run.map(|r| (r.run_id.to_string(), r.status)),
            Some(("r2".to_owned(), RunStatus::Succeeded))
        );
    });
}

#[test]
fn a_running_thread_shows_its_running_run() {
    block_on(async {
        let gate = Gate::new();
        let h = Harness::new(Blocking::new(gate.clone()));
        let mut stream = h.stream(&user_input("t", "r1", "hi")).await;
        until_blocked(&mut stream);
        let view = h.thread("t").await;
        assert_eq!(view.status, ThreadStatus::Running);
        assert_eq!(
            view.last_run.map(|r| (r.run_id.to_string(), r.status)),
            Some(("r1".to_owned(), RunStatus::Running))
        );
        let (record, log) = h.run_record("t", "r1").await.unwrap();
        assert_eq!(record.status, RunStatus::Running);
        assert!(log.is_empty(), "the log is written when the run ends");
        gate.open();
        stream.collect::<Vec<_>>().await;
        assert_eq!(
            h.run_record("t", "r1").await.unwrap().0.status,
            RunStatus::Succeeded
        );
    });
}

/// The run record as stored (not hydrated for replay).
async fn stored_run(h: &Harness, run_id: &str) -> RunRecord {
    let item = h
        .item("t", &format!("run#{run_id}"))
        .await
        .expect("run record");
    serde_json::from_slice(&item.value).unwrap()
}

#[test]
fn the_run_log_is_stored_compacted_and_replays_exactly_as_it_streamed() {
    block_on(async {
        let h = Harness::new(Chatty);
        let input = user_input("t", "r1", "hello there");
        let live = h.run(&input).await;
        assert_eq!(count(&live, EventType::TextMessageContent), 3);

        let stored = stored_run(&h, "r1").await;
        assert_eq!(count(&stored.events, EventType::TextMessageContent), 1);
        assert_eq!(stored.events, compact(live.clone()));
        assert_eq!(stored.events.len(), live.len() - 2);
        assert_eq!(stored.cuts.len(), 1, "{:?}", stored.cuts);

        let (record, log) = h.run_record("t", "r1").await.expect("run record");
        assert_eq!(record.status, RunStatus::Succeeded);
        assert_eq!(record.started_at_ms, T0);
        assert!(record.input_hash.starts_with("v3:") && record.input_hash.len() == 67);
        assert_eq!(log, live, "the replay differs from the live stream");
        assert_valid_stream(&log, &input);
    });
}

#[test]
fn interrupted_and_errored_run_logs_are_valid_too() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let first = user_input("t", "r1", "refund order 7");
        let live = h.run(&first).await;
        let (record, log) = h.run_record("t", "r1").await.unwrap();
        assert_eq!(record.status, RunStatus::Interrupted);
        assert_eq!(
            count(
                &stored_run(&h, "r1").await.events,
                EventType::TextMessageContent
            ),
            1
        );
        assert_eq!(log, live);
        assert_valid_stream(&log, &first);

        probe
            .fail_next_resume
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let failing = resume_input("t", "r2", vec![approve(&interrupts(&live)[0])]);
        h.run(&failing).await;
        let (record, log) = h.run_record("t", "r2").await.unwrap();
        assert_eq!(record.status, RunStatus::Errored);
        assert!(record.resume_key.is_some());
        assert_eq!(run_error(&log).code.as_deref(), Some("AGENT_ERROR"));
        assert_valid_stream(&log, &failing);
    });
}

#[test]
fn a_cancelled_run_log_keeps_the_synthesized_closings() {
    block_on(async {
        let mut agent = Blocking::new(Gate::new());
        agent.leave_open = true;
        let h = Harness::new(agent);
        let input = user_input("t", "r1", "slow");
        let mut stream = h
            .stream_with(
                &input,
                RunOptions {
                    deadline_ms: Some(h.now() + 60_000),
                    ..RunOptions::default()
                },
            )
            .await;
        let mut live = until_blocked(&mut stream);
        h.sleep.fire();
        live.extend(stream.collect::<Vec<Event>>().await);
        let (record, log) = h.run_record("t", "r1").await.unwrap();
        assert_eq!(record.status, RunStatus::Cancelled);
        assert_eq!(outcome(&log), &RunFinishedOutcome::Cancelled);
        assert_eq!(count(&log, EventType::ToolCallEnd), 1);
        assert_eq!(log.len(), live.len());
        assert_valid_stream(&log, &input);
    });
}

#[test]
fn run_records_expire_after_their_ttl() {
    block_on(async {
        const TTL: u64 = 60_000;
        let config = EngineConfig {
            run_ttl_ms: TTL,
            ..EngineConfig::default()
        };
        let probe = Probe::new();
        let h = Harness::with_config(RefundAgent::new(probe.clone()), config);
        let raised = interrupts(&h.run(&user_input("t", "r1", "refund order 7")).await);
        h.advance(1_000);
        let answer = resume_input("t", "r2", vec![approve(&raised[0])]);
        h.run(&answer).await;

        // The TTL counts from the run's last write (its finish).
        h.advance(TTL - 1);
        assert!(h.run_record("t", "r2").await.is_some());
        assert!(
            h.run_record("t", "r1").await.is_none(),
            "r1 finished 1s earlier and has expired"
        );
        h.advance(1);
        assert!(
            h.run_record("t", "r2").await.is_none(),
            "the run record outlived run_ttl_ms"
        );

        // With it went replayability: the answer is no longer known…
        let err = h
            .reject(&resume_input("t", "r3", vec![approve(&raised[0])]))
            .await;
        assert_eq!(err.code().name, "INTERRUPT_NOT_PENDING");
        // …but the thread itself lives on.
        let view = h.thread("t").await;
        assert_eq!(view.state, json!({ "stage": "done" }));
        assert_eq!(probe.calls(), 1);
    });
}

#[test]
fn threads_expire_after_their_ttl() {
    block_on(async {
        let config = EngineConfig {
            thread_ttl_ms: 120_000,
            ..EngineConfig::default()
        };
        let h = Harness::with_config(Chatty, config);
        h.run(&user_input("t", "r1", "hi")).await;
        h.advance(119_999);
        assert!(
            h.engine
                .thread(&Principal::anonymous(), "t")
                .await
                .unwrap()
                .is_some()
        );
        h.advance(1);
        assert!(
            h.engine
                .thread(&Principal::anonymous(), "t")
                .await
                .unwrap()
                .is_none()
        );
        // A new run starts the thread afresh.
        h.run(&user_input("t", "r2", "hi again")).await;
        assert_eq!(
            h.thread("t").await.last_run.map(|r| r.run_id.to_string()),
            Some("r2".to_owned())
        );
    });
}

#[test]
fn unknown_runs_read_as_absent_and_unknown_threads_as_not_found() {
    block_on(async {
        let h = Harness::new(Chatty);
        let nobody = handoff_core::Principal::anonymous();
        let unknown = h.engine.run_events(&nobody, "t", "nope").await;
        assert_eq!(unknown.unwrap_err(), CoreError::ThreadNotFound);
        h.run(&user_input("t", "r1", "hi")).await;
        assert!(h.run_record("t", "nope").await.is_none());
        // Run records are per thread; a thread that does not exist answers like a hidden one.
        let elsewhere = h.engine.run_events(&nobody, "other", "r1").await;
        assert_eq!(elsewhere.unwrap_err(), CoreError::ThreadNotFound);
    });
}

#[test]
fn a_large_resumed_run_is_not_copied_into_its_resume_record_and_still_replays() {
    block_on(async {
        let h = Harness::new(Scripted(|ctx| {
            if !ctx.is_resume() {
                let call = ctx.tool_call("refund", &serde_json::json!({}));
                return Ok(Finish::interrupt(
                    agui_protocol::Interrupt::new(format!("int-{call}"), "tool_call")
                        .with_tool_call(call),
                ));
            }
            // A long answer: its run record is far over the copy limit.
            ctx.say(&"All done. ".repeat(4_000));
            Ok(Finish::done())
        }));
        let raised = interrupts(&h.run(&user_input("t", "r1", "refund")).await);
        let answer = resume_input("t", "r2", vec![approve(&raised[0])]);
        let live = h.run(&answer).await;
        let resume_item = h
            .store
            .list("t", "resume#", h.now())
            .await
            .unwrap()
            .pop()
            .expect("a resume record");
        let item = h.item("t", &resume_item).await.unwrap();
        assert!(
            item.value.len() < 1_024,
            "the run was copied: {} B",
            item.value.len()
        );
        let duplicate = h
            .run(&resume_input("t", "r3", vec![approve(&raised[0])]))
            .await;
        assert_eq!(text(&duplicate), text(&live));
    });
}
