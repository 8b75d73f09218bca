//! Guarantee 5: one run at a time per thread; an expired lease lets another run
//! take over, the overrun's commits fail with LEASE_LOST, and its in-doubt
//! effects are retried with the same idempotency key while completed ones are
//! never executed again.

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agui_protocol::{Event, RunFinishedOutcome};
use async_trait::async_trait;
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::records::{EffectRecord, RunStatus, ThreadStatus};
use handoff_core::{Agent, AgentError, CoreError, EngineConfig, Finish, RunContext, RunOptions};
use serde_json::{Value, json};
use support::*;

const LEASE: u64 = 10_000;

fn short_lease() -> EngineConfig {
    EngineConfig {
        lease_ms: LEASE,
        ..EngineConfig::default()
    }
}

#[test]
fn a_second_start_on_a_running_thread_is_busy() {
    block_on(async {
        let gate = Gate::new();
        let h = Harness::new(Blocking::new(gate.clone()));
        let first = user_input("t", "r1", "one");
        let mut stream = h.stream(&first).await;
        let mut events = until_blocked(&mut stream);
        assert_eq!(h.thread("t").await.status, ThreadStatus::Running);

        for input in [user_input("t", "r2", "two"), first.clone()] {
            let err = h.reject(&input).await;
            assert_eq!((err.code().name, err.http_status()), ("THREAD_BUSY", 409));
            assert!(err.retryable());
            match &err {
                CoreError::ThreadBusy {
                    run_id,
                    retry_after_ms,
                } => {
                    assert_eq!(run_id, "r1");
                    assert_eq!(*retry_after_ms, h.engine.config().busy_retry_after_ms);
                }
                other => panic!("{other:?}"),
            }
        }
        // Other threads are not held up.
        let other = h.instance(Chatty, "o");
        let input = user_input("u", "r1", "elsewhere");
        let elsewhere = other
            .start(input.clone(), RunOptions::default())
            .await
            .unwrap()
            .collect::<Vec<_>>()
            .await;
        assert_valid_stream(&elsewhere, &input);

        gate.open();
        events.extend(stream.collect::<Vec<_>>().await);
        assert_valid_stream(&events, &first);
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        // Now the thread is free again.
        h.run(&user_input("t", "r2", "two")).await;
    });
}

#[test]
fn busy_retry_after_never_exceeds_the_remaining_lease() {
    block_on(async {
        let h = Harness::with_config(Blocking::new(Gate::new()), short_lease());
        let mut stream = h.stream(&user_input("t", "r1", "one")).await;
        until_blocked(&mut stream);
        h.advance(LEASE - 300);
        match h.reject(&user_input("t", "r2", "two")).await {
            CoreError::ThreadBusy { retry_after_ms, .. } => assert_eq!(retry_after_ms, 300),
            other => panic!("{other:?}"),
        }
    });
}

#[test]
fn an_expired_lease_lets_another_run_take_over_and_the_overrun_loses_its_commit() {
    block_on(async {
        let gate = Gate::new();
        let h = Harness::with_config(Blocking::new(gate.clone()), short_lease());
        let slow = user_input("t", "r1", "slow");
        let mut stream = h.stream(&slow).await;
        let mut events = until_blocked(&mut stream);

        h.advance(LEASE - 1);
        assert_eq!(
            h.reject(&user_input("t", "r2", "next")).await.code().name,
            "THREAD_BUSY"
        );
        h.advance(1);
        let takeover = h.instance(Chatty, "b");
        let next = user_input("t", "r2", "next");
        let taken = takeover
            .start(next.clone(), RunOptions::default())
            .await
            .expect("takeover")
            .collect::<Vec<_>>()
            .await;
        assert_valid_stream(&taken, &next);
        assert_eq!(outcome(&taken), &RunFinishedOutcome::success());

        // The overrun wakes up and tries to finish: its commit is fenced out.
        gate.open();
        events.extend(stream.collect::<Vec<_>>().await);
        assert_valid_stream(&events, &slow);
        assert_eq!(run_error(&events).code.as_deref(), Some("LEASE_LOST"));
        assert!(!contains_run_finished(&events));

        let view = h.thread("t").await;
        assert_eq!(
            view.last_run.map(|r| (r.run_id.to_string(), r.status)),
            Some(("r2".to_owned(), RunStatus::Succeeded))
        );
        assert!(
            view.messages
                .iter()
                .all(|m| m.text().as_deref() != Some("released")),
            "the overrun's output was committed"
        );
        assert!(
            view.messages
                .iter()
                .any(|m| m.text().as_deref() == Some("You said: next"))
        );
    });
}

#[test]
fn the_lease_ends_at_the_host_deadline() {
    block_on(async {
        let h = Harness::new(Blocking::new(Gate::new()));
        let mut stream = h
            .stream_with(
                &user_input("t", "r1", "one"),
                RunOptions {
                    deadline_ms: Some(h.now() + 5_000),
                    ..RunOptions::default()
                },
            )
            .await;
        until_blocked(&mut stream);
        h.advance(4_999);
        assert_eq!(
            h.reject(&user_input("t", "r2", "two")).await.code().name,
            "THREAD_BUSY"
        );
        h.advance(1);
        let other = h.instance(Chatty, "b");
        assert!(
            other
                .start(user_input("t", "r2", "two"), RunOptions::default())
                .await
                .is_ok()
        );
    });
}

#[test]
fn an_abandoned_run_is_re_executed_in_place_under_its_own_run_id() {
    block_on(async {
        let gate = Gate::new();
        let h = Harness::with_config(Blocking::new(gate.clone()), short_lease());
        let input = user_input("t", "r1", "hello");
        let mut dead = h.stream(&input).await;
        let mut dead_events = until_blocked(&mut dead);
        h.advance(LEASE);

        // The client retries the very same request on another instance.
        let retry = h.instance(Chatty, "b");
        let events = retry
            .start(input.clone(), RunOptions::default())
            .await
            .unwrap()
            .collect::<Vec<_>>()
            .await;
        assert_valid_stream(&events, &input);
        assert_eq!(text(&events), "You said: hello");

        gate.open();
        dead_events.extend(dead.collect::<Vec<_>>().await);
        assert_valid_stream(&dead_events, &input);
        assert_eq!(run_error(&dead_events).code.as_deref(), Some("LEASE_LOST"));

        // The record is the re-execution's, and replays it.
        let (record, _) = h.run_record("t", "r1").await.unwrap();
        assert_eq!(record.status, RunStatus::Succeeded);
        let replay = h.run(&input).await;
        assert_eq!(text(&replay), "You said: hello");
    });
}

/// Two effects; the first call of the second waits for `hold` (the instance
/// "dies" inside the downstream call).
struct TwoEffects {
    a: Arc<Probe>,
    b: Arc<Probe>,
    hold: Gate,
}

#[async_trait]
impl Agent for TwoEffects {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        let a = self.a.clone();
        let first: Value = ctx
            .effect("charge-a", move |key| async move {
                let n = a.effect_calls.fetch_add(1, Ordering::SeqCst) + 1;
                lock(&a.keys).push(key);
                Ok::<_, String>(json!({ "a": n }))
            })
            .await?;
        let (b, hold) = (self.b.clone(), self.hold.clone());
        let second: Value = ctx
            .effect("charge-b", move |key| async move {
                let n = b.effect_calls.fetch_add(1, Ordering::SeqCst) + 1;
                lock(&b.keys).push(key);
                if n == 1 {
                    hold.wait().await;
                }
                Ok::<_, String>(json!({ "b": n }))
            })
            .await?;
        ctx.say(&format!("a={first} b={second}"));
        Ok(Finish::done())
    }
}

async fn effect_record(h: &Harness, key: &str) -> EffectRecord {
    let item = h
        .item("t", &format!("effect#{key}"))
        .await
        .expect("effect record");
    serde_json::from_slice(&item.value).unwrap()
}

#[test]
fn an_in_doubt_effect_is_retried_with_the_same_key_and_a_completed_one_never_is() {
    block_on(async {
        let (a, b, hold) = (Probe::new(), Probe::new(), Gate::new());
        let agent = TwoEffects {
            a: a.clone(),
            b: b.clone(),
            hold: hold.clone(),
        };
        let h = Harness::with_config(agent, short_lease());

        let first = user_input("t", "r1", "charge");
        let mut dead = h.stream(&first).await;
        let (mut dead_events, ended) = drain_ready(&mut dead);
        assert!(!ended);
        assert_eq!((a.calls(), b.calls()), (1, 1));
        let started = effect_record(&h, "charge-b").await;
        assert!(!started.done && started.attempts == 1, "{started:?}");
        assert!(effect_record(&h, "charge-a").await.done);

        h.advance(LEASE);
        let next = user_input("t", "r2", "charge again");
        let events = h.run(&next).await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(a.calls(), 1, "a completed effect was executed again");
        assert_eq!(b.calls(), 2, "the in-doubt effect was not retried");
        let keys = b.keys();
        assert_eq!(keys[0], keys[1], "the retry used another idempotency key");
        assert_eq!(keys[0], "t/charge-b");
        assert_eq!(text(&events), r#"a={"a":1} b={"b":2}"#);
        let done = effect_record(&h, "charge-b").await;
        assert_eq!(
            (done.done, done.attempts, done.result.clone()),
            (true, 2, Some(json!({ "b": 2 })))
        );

        // The dead run's downstream call finally returns: it cannot record anything.
        hold.open();
        dead_events.extend(dead.collect::<Vec<_>>().await);
        assert_valid_stream(&dead_events, &first);
        assert_eq!(run_error(&dead_events).code.as_deref(), Some("LEASE_LOST"));
        assert_eq!(effect_record(&h, "charge-b").await, done);

        // Later runs get the recorded results; nothing executes again.
        let later = h.run(&user_input("t", "r3", "once more")).await;
        assert_eq!(text(&later), r#"a={"a":1} b={"b":2}"#);
        assert_eq!((a.calls(), b.calls()), (1, 2));
        assert_eq!(a.keys(), vec!["t/charge-a".to_owned()]);
    });
}

/// A failure the effect's error calls definite (`NotExecuted`) leaves no record; any
/// other failure keeps the record in doubt. Either way the next call retries, under the
/// same idempotency key.
#[test]
fn a_failed_effect_is_retried_and_only_a_definite_failure_records_nothing() {
    for definite in [true, false] {
        let (probe, item, keys) = failed_effect_then_retried(definite);
        assert_eq!(probe.calls(), 2);
        assert_eq!(item, !definite, "record kept only while in doubt");
        assert_eq!(keys[0], keys[1]);
    }
}

fn failed_effect_then_retried(definite: bool) -> (Arc<Probe>, bool, Vec<String>) {
    struct Flaky(Arc<Probe>, bool);
    #[async_trait]
    impl Agent for Flaky {
        async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
            let (probe, definite) = (self.0.clone(), self.1);
            let value: Value = ctx
                .effect("pay", move |key| async move {
                    let n = probe.effect_calls.fetch_add(1, Ordering::SeqCst) + 1;
                    lock(&probe.keys).push(key);
                    match n {
                        1 if definite => Err(PayError(true)),
                        1 => Err(PayError(false)),
                        _ => Ok(json!(n)),
                    }
                })
                .await?;
            ctx.say(&value.to_string());
            Ok(Finish::done())
        }
    }
    /// `true`: refused before it was sent.
    struct PayError(bool);
    impl std::fmt::Display for PayError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("gateway timeout")
        }
    }
    impl handoff_core::EffectFailure for PayError {
        fn not_executed(&self) -> bool {
            self.0
        }
    }
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(Flaky(probe.clone(), definite));
        let events = h.run(&user_input("t", "r1", "pay")).await;
        assert_eq!(run_error(&events).code.as_deref(), Some("AGENT_ERROR"));
        assert!(
            events
                .iter()
                .all(|e: &Event| !e.to_json().contains("gateway timeout"))
        );
        let item = h.item("t", "effect#pay").await.is_some();
        let events = h.run(&user_input("t", "r2", "pay")).await;
        assert_eq!(text(&events), "2");
        let keys = lock(&probe.keys).clone();
        (probe, item, keys)
    })
}
