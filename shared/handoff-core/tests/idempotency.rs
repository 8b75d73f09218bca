//! Guarantee 4: repeated requests replay instead of executing twice — the same
//! resume answer under a new runId, the same runId with the same body, and many
//! identical resumes racing each other.

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agui_protocol::{Event, Interrupt, RunAgentInput, RunFinishedOutcome};
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::records::{RunStatus, ThreadStatus};
use handoff_core::{CoreError, Engine, RunOptions};
use support::*;

async fn interrupted(h: &Harness, thread: &str) -> Vec<Interrupt> {
    interrupts(&h.run(&user_input(thread, "r1", "refund order 7")).await)
}

/// The (messageId, content) of every TOOL_CALL_RESULT.
fn results(events: &[Event]) -> Vec<(String, String)> {
    tool_results(events)
        .into_iter()
        .map(|r| (r.message_id.to_string(), r.content.text()))
        .collect()
}

/// Events with run ids and timestamps blanked, for comparing a replay with its original.
fn shape(events: &[Event]) -> Vec<serde_json::Value> {
    events
        .iter()
        .map(|e| {
            let mut v = serde_json::to_value(e).unwrap();
            let map = v.as_object_mut().unwrap();
            map.remove("runId");
            map.remove("timestamp");
            v
        })
        .collect()
}

#[test]
fn the_same_answer_under_a_new_run_id_replays_the_recorded_result() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let raised = interrupted(&h, "t").await;
        let first = h
            .run(&resume_input("t", "r2", vec![approve(&raised[0])]))
            .await;
        let runs = probe.runs.load(Ordering::SeqCst);

        h.advance(5_000);
        let again = resume_input("t", "r3", vec![approve(&raised[0])]);
        let replay = h.run(&again).await; // valid against r3: RUN_STARTED/RUN_FINISHED carry r3

        assert_eq!(results(&replay), results(&first));
        assert_eq!(results(&replay).len(), 1);
        assert_eq!(probe.calls(), 1, "the refund executed twice");
        assert_eq!(
            probe.runs.load(Ordering::SeqCst),
            runs,
            "the agent ran again"
        );
        assert_eq!(
            shape(&replay),
            shape(&first),
            "the replay is not the stream"
        );
        // The thread still points at the run that applied the answer.
        let view = h.thread("t").await;
        assert_eq!(
            view.last_run.map(|r| r.run_id.to_string()),
            Some("r2".to_owned())
        );
    });
}

#[test]
fn the_same_answers_in_another_order_are_the_same_answer() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()).with_interrupts(2));
        let raised = interrupted(&h, "t").await;
        let first = h
            .run(&resume_input(
                "t",
                "r2",
                vec![approve(&raised[0]), approve(&raised[1])],
            ))
            .await;
        let replay = h
            .run(&resume_input(
                "t",
                "r3",
                vec![approve(&raised[1]), approve(&raised[0])],
            ))
            .await;
        assert_eq!(results(&replay), results(&first));
        assert_eq!(probe.calls(), 2);
    });
}

#[test]
fn the_same_run_id_with_the_same_body_replays() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let raised = interrupted(&h, "t").await;
        let input = resume_input("t", "r2", vec![approve(&raised[0])]);
        let first = h.run(&input).await;
        let replay = h.run(&input).await;
        assert_eq!(results(&replay), results(&first));
        assert_eq!(probe.calls(), 1);
        assert_eq!(probe.runs.load(Ordering::SeqCst), 2);

        // Declaring the protocol version does not change what is asked.
        let mut declared = input.clone();
        declared.protocol_version = Some("1.0".to_owned());
        let replay = h.run(&declared).await;
        assert_eq!(results(&replay), results(&first));

        // A plain run replays too, interrupt and all.
        let replayed_r1 = h.run(&user_input("t", "r1", "refund order 7")).await;
        assert_eq!(interrupts(&replayed_r1), raised);
        assert_eq!(probe.runs.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn the_same_run_id_with_a_different_body_conflicts() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let raised = interrupted(&h, "t").await;
        h.run(&resume_input("t", "r2", vec![approve(&raised[0])]))
            .await;
        let view = h.thread("t").await;

        let conflicting: Vec<RunAgentInput> = vec![
            resume_input("t", "r2", vec![deny(&raised[0])]),
            user_input("t", "r2", "something else"),
            user_input("t", "r1", "refund order 8"),
        ];
        for input in conflicting {
            let err = h.reject(&input).await;
            assert_eq!(
                (err.code().name, err.http_status(), err.retryable()),
                ("RUN_ID_CONFLICT", 409, false),
                "{err}"
            );
            assert!(
                matches!(&err, CoreError::RunIdConflict(id) if *id == input.run_id.to_string())
            );
        }
        assert_eq!(h.thread("t").await, view);
        assert_eq!(probe.calls(), 1);
    });
}

/// Starts `input` on `engine` and drains it; the stream must be valid.
async fn attempt(engine: Engine, input: RunAgentInput) -> Result<Vec<Event>, CoreError> {
    let stream = engine.start(input.clone(), RunOptions::default()).await?;
    let events = stream.collect::<Vec<_>>().await;
    assert_valid_stream(&events, &input);
    Ok(events)
}

/// Checks the outcome of N identical resumes: one execution, everyone else a
/// replay of it or busy.
async fn check_race(
    h: &Harness,
    probe: &Probe,
    outcomes: Vec<Result<Vec<Event>, CoreError>>,
    interrupt: &Interrupt,
) {
    assert_eq!(
        probe.calls(),
        1,
        "the effect executed {} times",
        probe.calls()
    );
    let mut answered = Vec::new();
    for result in &outcomes {
        match result {
            Ok(events) => {
                assert_eq!(outcome(events), &RunFinishedOutcome::success());
                answered.push(results(events));
            }
            Err(e) => {
                assert_eq!(
                    (e.code().name, e.http_status()),
                    ("THREAD_BUSY", 409),
                    "{e}"
                );
                assert!(e.retryable());
            }
        }
    }
    assert!(!answered.is_empty(), "nobody got an answer");
    assert!(
        answered.windows(2).all(|w| w[0] == w[1]),
        "callers saw different results: {answered:?}"
    );

    let view = h.thread("t").await;
    assert_eq!(view.status, ThreadStatus::Idle);
    assert!(view.pending_interrupts.is_empty());
    assert_eq!(
        view.last_run.as_ref().map(|r| r.status),
        Some(RunStatus::Succeeded)
    );

    // Afterwards the answer keeps replaying the one result.
    let late = h
        .run(&resume_input("t", "late", vec![approve(interrupt)]))
        .await;
    assert_eq!(results(&late), answered[0]);
    assert_eq!(probe.calls(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_concurrent_identical_resumes_execute_the_effect_once() {
    const N: usize = 200;
    let probe = Probe::new();
    let h = Harness::new(RefundAgent::new(probe.clone()));
    let raised = interrupted(&h, "t").await;
    h.store.yield_on_io();

    let barrier = Arc::new(tokio::sync::Barrier::new(N));
    let mut tasks = Vec::new();
    for i in 0..N {
        let engine = h.engine.clone();
        let barrier = barrier.clone();
        let input = resume_input("t", &format!("c-{i}"), vec![approve(&raised[0])]);
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            attempt(engine, input).await
        }));
    }
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.expect("task panicked (invalid stream?)"));
    }
    check_race(&h, &probe, outcomes, &raised[0]).await;
}

#[test]
fn a_resume_reusing_the_interrupted_runs_id_is_a_new_run_and_its_retry_a_replay() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let raised = interrupted(&h, "t").await;
        // CopilotKit answers under the interrupted run's id.
        let answer = resume_input("t", "r1", vec![approve(&raised[0])]);
        let events = h.run(&answer).await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(probe.calls(), 1);
        assert_eq!(h.thread("t").await.status, ThreadStatus::Idle);
        let (record, _) = h.run_record("t", "r1").await.unwrap();
        assert_eq!(
            record.status,
            RunStatus::Succeeded,
            "the record is the resume's"
        );

        // A byte-identical retry is still a replay; nothing executes again.
        let runs = probe.runs.load(Ordering::SeqCst);
        let retried = h.run(&answer).await;
        assert_eq!(shape(&retried), shape(&events));
        assert_eq!(probe.calls(), 1);
        assert_eq!(
            probe.runs.load(Ordering::SeqCst),
            runs,
            "the agent ran again"
        );

        // Other reuses of the id are still conflicts: a new message, another answer.
        for input in [
            user_input("t", "r1", "something else"),
            resume_input("t", "r1", vec![deny(&raised[0])]),
        ] {
            assert_eq!(h.reject(&input).await.code().name, "RUN_ID_CONFLICT");
        }
    });
}

#[test]
fn a_resume_may_reuse_only_the_id_of_the_run_that_raised_the_interrupts() {
    block_on(async {
        let h = Harness::new(RefundAgent::new(Probe::new()));
        // r0 raised an interrupt that was answered; r1 raised the one pending now.
        let first = interrupts(&h.run(&user_input("t", "r0", "refund order 6")).await);
        h.run(&resume_input("t", "r0b", vec![approve(&first[0])]))
            .await;
        let raised = interrupts(&h.run(&user_input("t", "r1", "refund order 7")).await);
        let err = h
            .reject(&resume_input("t", "r0", vec![approve(&raised[0])]))
            .await;
        assert_eq!(err.code().name, "RUN_ID_CONFLICT");
    });
}

#[test]
fn interleaved_identical_resumes_on_one_thread_execute_the_effect_once() {
    block_on(async {
        const N: usize = 200;
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let raised = interrupted(&h, "t").await;
        h.store.yield_on_io();
        let attempts = (0..N).map(|i| {
            attempt(
                h.engine.clone(),
                resume_input("t", &format!("c-{i}"), vec![approve(&raised[0])]),
            )
        });
        let outcomes = futures::future::join_all(attempts).await;
        // With every store call yielding, the claims really raced (some lost a conditional write).
        assert!(h.store.conflicts() > 0, "the requests did not overlap");
        check_race(&h, &probe, outcomes, &raised[0]).await;
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_identical_resumes_from_several_instances_execute_once() {
    const N: usize = 200;
    let probe = Probe::new();
    let h = Harness::new(RefundAgent::new(probe.clone()));
    let raised = interrupted(&h, "t").await;
    h.store.yield_on_io();
    // Four "instances" (engines with their own id generators) over one store.
    let engines: Vec<Engine> = (0..4)
        .map(|i| h.instance(RefundAgent::new(probe.clone()), &format!("i{i}-")))
        .collect();
    let barrier = Arc::new(tokio::sync::Barrier::new(N));
    let tasks: Vec<_> = (0..N)
        .map(|i| {
            let engine = engines[i % engines.len()].clone();
            let barrier = barrier.clone();
            let input = resume_input("t", &format!("c-{i}"), vec![approve(&raised[0])]);
            tokio::spawn(async move {
                barrier.wait().await;
                attempt(engine, input).await
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.expect("task panicked (invalid stream?)"));
    }
    check_race(&h, &probe, outcomes, &raised[0]).await;
    assert_eq!(probe.keys().len(), 1);
}

#[test]
fn the_same_answer_with_payload_keys_in_another_order_is_the_same_answer() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let raised = interrupted(&h, "t").await;
        let a: serde_json::Value =
            serde_json::from_str(r#"{"approved":true,"editedArgs":{"amount":7,"currency":"EUR"}}"#)
                .unwrap();
        let b: serde_json::Value =
            serde_json::from_str(r#"{"editedArgs":{"currency":"EUR","amount":7},"approved":true}"#)
                .unwrap();
        let first = h
            .run(&resume_input(
                "t",
                "r2",
                vec![agui_protocol::ResumeEntry::resolved(
                    raised[0].id.clone(),
                    a,
                )],
            ))
            .await;
        let replay = h
            .run(&resume_input(
                "t",
                "r3",
                vec![agui_protocol::ResumeEntry::resolved(
                    raised[0].id.clone(),
                    b,
                )],
            ))
            .await;
        assert_eq!(results(&replay), results(&first));
        assert_eq!(probe.calls(), 1);
    });
}

/// Asks for confirmation under the fixed interrupt id `confirm` on every new
/// message (ids need only be unique within a run), and reports which run saw
/// the answer.
fn confirm_every_turn(
    ctx: &mut handoff_core::RunContext,
) -> Result<handoff_core::Finish, handoff_core::AgentError> {
    if ctx.is_resume() {
        let approved = ctx.decisions()[0].approved();
        let run = ctx.run_id().clone();
        ctx.say(&format!("{run} applied approved={approved}"));
        return Ok(handoff_core::Finish::done());
    }
    ctx.say("Shall I?");
    Ok(handoff_core::Finish::interrupt(Interrupt::new(
        "confirm",
        "confirmation",
    )))
}

#[test]
fn an_interrupt_id_reused_by_a_later_run_is_answered_not_replayed() {
    block_on(async {
        let h = Harness::new(Scripted(confirm_every_turn));
        let yes = || {
            vec![agui_protocol::ResumeEntry::resolved(
                "confirm",
                serde_json::json!({ "approved": true }),
            )]
        };
        h.run(&user_input("t", "r1", "first")).await;
        let first = h.run(&resume_input("t", "r2", yes())).await;
        assert_eq!(text(&first), "r2 applied approved=true");
        // A repeat right away is a repeat: replayed.
        assert_eq!(
            text(&h.run(&resume_input("t", "r2b", yes())).await),
            "r2 applied approved=true"
        );

        // A later turn asks again under the same id, and the user gives the same answer.
        h.run(&user_input("t", "r3", "second")).await;
        assert_eq!(h.thread("t").await.status, ThreadStatus::Interrupted);
        let second = h.run(&resume_input("t", "r4", yes())).await;
        assert_eq!(
            text(&second),
            "r4 applied approved=true",
            "the new question was answered from the old run"
        );
        let view = h.thread("t").await;
        assert_eq!(view.status, ThreadStatus::Idle);
        assert!(view.pending_interrupts.is_empty());
        assert_eq!(
            view.last_run.map(|r| r.run_id.to_string()),
            Some("r4".to_owned())
        );
        // And that answer is now the one that replays.
        assert_eq!(
            text(&h.run(&resume_input("t", "r5", yes())).await),
            "r4 applied approved=true"
        );
    });
}
