//! Stopping a run on purpose (`Engine::stop`, `POST …/runs/{runId}/stop`): the run ends
//! `RUN_FINISHED{outcome: cancelled}` at its next checkpoint on whichever instance runs
//! it and releases the thread; a run applying an answer settles that answer as the
//! "Answers and side effects" rule says. A stop is not a disconnect.

mod support;

use agui_protocol::RunFinishedOutcome;
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::records::{RunStatus, ThreadRecord, ThreadStatus};
use handoff_core::{Condition, EngineConfig, Principal, RunOptions, StopOutcome, Store, Write};
use serde_json::json;
use support::*;

async fn stored_thread(h: &Harness) -> ThreadRecord {
    let item = h.item("t", "thread").await.expect("thread record");
    serde_json::from_slice(&item.value).unwrap()
}

fn open_blocking() -> Blocking {
    Blocking {
        leave_open: true,
        ..Blocking::new(Gate::new())
    }
}

#[test]
fn a_stop_on_the_instance_running_the_run_cancels_it_at_once() {
    block_on(async {
        let h = Harness::new(open_blocking());
        let input = user_input("t", "r1", "long job");
        let mut stream = h.stream(&input).await;
        let mut events = until_blocked(&mut stream);

        let stopped = h.engine.stop(&Principal::anonymous(), "t", "r1").await;
        assert_eq!(stopped, Ok(StopOutcome::Stopping));
        // No timer fired: the request reached the run through this process.
        let (more, ended) = drain_ready(&mut stream);
        events.extend(more);
        assert!(ended, "the run did not stop\n{}", dump(&events));
        assert_valid_stream(&events, &input);
        assert_eq!(outcome(&events), &RunFinishedOutcome::Cancelled);
        assert_eq!(text(&events), "Working on it", "what streamed is kept");

        let thread = stored_thread(&h).await;
        assert_eq!(thread.status, ThreadStatus::Idle);
        assert!(thread.lease.is_none(), "the lease was not released");
        let (record, _) = h.run_record("t", "r1").await.unwrap();
        assert_eq!(record.status, RunStatus::Cancelled);
        // The thread is free for the next run at once.
        let next = h.instance(Chatty, "b");
        let stream = next.start(user_input("t", "r2", "next"), RunOptions::default());
        let events = stream
            .await
            .expect("the thread is still held")
            .collect::<Vec<_>>()
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
    });
}

#[test]
fn a_stop_sent_to_another_instance_ends_the_run_at_its_next_poll() {
    block_on(async {
        let h = Harness::new(open_blocking());
        let input = user_input("t", "r1", "long job");
        let mut stream = h.stream(&input).await;
        let mut events = until_blocked(&mut stream);

        let other = h.instance(Chatty, "b");
        let stopped = other.stop(&Principal::anonymous(), "t", "r1").await;
        assert_eq!(stopped, Ok(StopOutcome::Stopping));
        let (more, ended) = drain_ready(&mut stream);
        events.extend(more);
        assert!(!ended, "stopped before the running instance could know");

        // The running instance's poll finds the request.
        h.advance(EngineConfig::default().stop_poll_ms);
        h.sleep.fire();
        events.extend(stream.collect::<Vec<_>>().await);
        assert_valid_stream(&events, &input);
        assert_eq!(outcome(&events), &RunFinishedOutcome::Cancelled);
        assert_eq!(stored_thread(&h).await.status, ThreadStatus::Idle);
    });
}

#[test]
fn a_dropped_stream_is_not_a_stop() {
    block_on(async {
        let gate = Gate::new();
        let h = Harness::new(Blocking::new(gate.clone()));
        let input = user_input("t", "r1", "long job");
        let stream = h.stream(&input).await;
        drop(stream);
        // Nothing asked it to stop: the polls find nothing.
        h.sleep.fire();
        assert_eq!(
            h.engine.stop(&Principal::anonymous(), "t", "r1").await,
            Ok(StopOutcome::Stopping),
            "the record says running: the stop is recorded for whoever runs it"
        );
    });
}

#[test]
fn stopping_a_finished_run_changes_nothing() {
    block_on(async {
        let h = Harness::new(Chatty);
        h.run(&user_input("t", "r1", "hello")).await;
        let commits = h.store.commits();
        let stopped = h.engine.stop(&Principal::anonymous(), "t", "r1").await;
        assert_eq!(stopped, Ok(StopOutcome::Finished(RunStatus::Succeeded)));
        assert_eq!(h.store.commits(), commits, "a stop of a finished run wrote");
        assert!(h.item("t", "stop#r1").await.is_none());
    });
}

#[test]
fn stopping_an_unknown_run_or_someone_elses_is_refused() {
    block_on(async {
        let h = Harness::new(open_blocking());
        let mut stream = h.stream(&user_input("t", "r1", "long job")).await;
        until_blocked(&mut stream);
        let anyone = Principal::anonymous();
        let err = h.engine.stop(&anyone, "t", "nope").await.unwrap_err();
        assert_eq!((err.code().name, err.http_status()), ("RUN_NOT_FOUND", 404));
        let err = h.engine.stop(&anyone, "elsewhere", "r1").await.unwrap_err();
        assert_eq!(
            (err.code().name, err.http_status()),
            ("THREAD_NOT_FOUND", 404)
        );
        // Another subject of the tenant may not see the owner's thread, another tenant
        // cannot even address it: both learn nothing about the run.
        let colleague = Principal::new("default", "mallory");
        let err = h.engine.stop(&colleague, "t", "r1").await.unwrap_err();
        assert_eq!(err.code().name, "THREAD_NOT_FOUND");
        let stranger = Principal::new("acme", "anonymous");
        let err = h.engine.stop(&stranger, "t", "r1").await.unwrap_err();
        assert_eq!(err.code().name, "THREAD_NOT_FOUND");
        assert!(
            h.item("t", "stop#r1").await.is_none(),
            "a refused stop wrote"
        );
        let (more, ended) = drain_ready(&mut stream);
        assert!(!ended, "a refused stop stopped the run\n{}", dump(&more));
    });
}

#[test]
fn a_stop_inside_a_resumed_effect_ends_cancelled_and_keeps_the_answer_pinned() {
    block_on(async {
        let (probe, hold) = (Probe::new(), Gate::new());
        let h = Harness::new(SlowRefund {
            probe: probe.clone(),
            hold: hold.clone(),
        });
        let raised = interrupts(&h.run(&user_input("t", "r1", "refund")).await);
        let answer = resume_input("t", "r2", vec![approve(&raised[0])]);
        let mut stream = h.stream(&answer).await;
        let (mut events, ended) = drain_ready(&mut stream);
        assert!(
            !ended && probe.calls() == 1,
            "the refund call did not start"
        );

        let stopped = h.engine.stop(&Principal::anonymous(), "t", "r2").await;
        assert_eq!(stopped, Ok(StopOutcome::Stopping));
        events.extend(stream.collect::<Vec<_>>().await);
        assert_valid_stream(&events, &answer);
        assert_eq!(outcome(&events), &RunFinishedOutcome::Cancelled);

        // The refund may have gone through: only the same answer may be applied again.
        let thread = stored_thread(&h).await;
        assert_eq!(thread.status, ThreadStatus::Interrupted);
        assert!(thread.pending[0].pinned_answer.is_some());
        let (record, _) = h.run_record("t", "r2").await.unwrap();
        assert_eq!(record.status, RunStatus::Cancelled);
        let err = h
            .reject(&resume_input("t", "r3", vec![deny(&raised[0])]))
            .await;
        assert_eq!(err.code().name, "ANSWER_IN_DOUBT");

        // Resent, it re-drives the same key; the refund is counted once downstream.
        hold.open();
        let events = h
            .run(&resume_input("t", "r4", vec![approve(&raised[0])]))
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        let keys = probe.keys();
        assert_eq!(keys.len(), 2);
        assert_eq!(keys[0], keys[1]);
    });
}

#[test]
fn a_stop_meant_for_an_earlier_run_with_the_same_id_does_not_stop_a_later_one() {
    block_on(async {
        let h = Harness::new(open_blocking());
        // A leftover request for an earlier run r1 (started at another time).
        let stale = json!({ "runStartedAtMs": h.now() - 5_000, "by": "x", "atMs": h.now() });
        h.store
            .commit(
                "t",
                vec![Write::put(
                    "stop#r1",
                    Condition::Always,
                    serde_json::to_vec(&stale).unwrap(),
                    None,
                )],
                h.now(),
            )
            .await
            .unwrap();
        let mut stream = h.stream(&user_input("t", "r1", "long job")).await;
        until_blocked(&mut stream);
        h.advance(EngineConfig::default().stop_poll_ms);
        h.sleep.fire();
        let (more, ended) = drain_ready(&mut stream);
        assert!(
            !ended,
            "a stale stop request stopped the run\n{}",
            dump(&more)
        );
    });
}
