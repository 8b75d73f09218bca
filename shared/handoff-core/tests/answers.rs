//! What an answer becomes when the run applying it does not finish cleanly: stopped at
//! its deadline inside a side effect, re-raising the interrupt it answered, or unable
//! to commit its finish. The rule (crate docs, "Answers and side effects"): an answer
//! is never consumed under a new key while an effect it started is in doubt, and once
//! an effect executed it cannot be answered differently.

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agui_protocol::{Interrupt, RunFinishedOutcome};
use async_trait::async_trait;
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::records::{PendingInterrupt, RunStatus, ThreadRecord, ThreadStatus};
use handoff_core::{Agent, AgentError, EffectFailure, Finish, RunContext, RunOptions, StoreError};
use serde_json::{Value, json};
use support::*;

async fn stored_thread(h: &Harness) -> ThreadRecord {
    let item = h.item("t", "thread").await.expect("thread record");
    serde_json::from_slice(&item.value).unwrap()
}

fn pending(thread: &ThreadRecord) -> &PendingInterrupt {
    &thread.pending[0]
}

fn with_deadline(h: &Harness) -> RunOptions {
    RunOptions {
        deadline_ms: Some(h.now() + 60_000),
        ..RunOptions::default()
    }
}

#[test]
fn a_deadline_inside_a_resumed_effect_keeps_the_answer_and_re_drives_the_same_key() {
    block_on(async {
        let (probe, hold) = (Probe::new(), Gate::new());
        let h = Harness::new(SlowRefund {
            probe: probe.clone(),
            hold: hold.clone(),
        });
        let raised = interrupts(&h.run(&user_input("t", "r1", "refund")).await);
        let answer = resume_input("t", "r2", vec![approve(&raised[0])]);
        let mut stream = h.stream_with(&answer, with_deadline(&h)).await;
        let (mut events, ended) = drain_ready(&mut stream);
        assert!(
            !ended && probe.calls() == 1,
            "the refund call did not start"
        );

        // The host deadline approaches while the payment API is still answering.
        h.sleep.fire();
        events.extend(stream.collect::<Vec<_>>().await);
        assert_valid_stream(&events, &answer);
        let error = run_error(&events);
        assert_eq!(error.code.as_deref(), Some("DEADLINE_EXCEEDED"));

        // Not consumed: still pending, pinned to this answer; the run is recorded errored.
        let thread = stored_thread(&h).await;
        assert_eq!(thread.status, ThreadStatus::Interrupted);
        assert_eq!(pending(&thread).interrupt.id, raised[0].id);
        assert!(pending(&thread).pinned_answer.is_some());
        assert!(thread.lease.is_none(), "the lease was not released");
        let (record, _) = h.run_record("t", "r2").await.unwrap();
        assert_eq!(record.status, RunStatus::Errored);

        // A different answer could take the decline path while the money may have moved.
        let deny = resume_input("t", "r3", vec![deny(&raised[0])]);
        let err = h.reject(&deny).await;
        assert_eq!(
            (err.code().name, err.http_status()),
            ("ANSWER_IN_DOUBT", 409)
        );

        // The same answer (a client retry, any instance) re-drives the effect under its key.
        hold.open();
        let retry = resume_input("t", "r4", vec![approve(&raised[0])]);
        let events = h.run(&retry).await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(probe.calls(), 2);
        let keys = probe.keys();
        assert_eq!(keys[0], keys[1], "the retry used a new idempotency key");
        assert_eq!(h.thread("t").await.status, ThreadStatus::Idle);

        // From now on the answer replays; nothing executes again.
        let events = h
            .run(&resume_input("t", "r5", vec![approve(&raised[0])]))
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(probe.calls(), 2);
    });
}

#[test]
fn a_deadline_before_any_effect_leaves_the_interrupt_answerable_by_anyone() {
    block_on(async {
        let h = Harness::new(Blocking::new(Gate::new()));
        // Blocking raises nothing, so set up the pending interrupt through a scripted first run.
        let setup = h.instance(
            Scripted(|ctx| {
                let call = ctx.tool_call("refund", &json!({}));
                Ok(Finish::interrupt(
                    Interrupt::new("int-1", "tool_call").with_tool_call(call),
                ))
            }),
            "s",
        );
        let first = user_input("t", "r1", "refund");
        let events: Vec<_> = setup
            .start(first, RunOptions::default())
            .await
            .unwrap()
            .collect()
            .await;
        let raised = interrupts(&events);
        let answer = resume_input("t", "r2", vec![approve(&raised[0])]);
        let mut stream = h.stream_with(&answer, with_deadline(&h)).await;
        let mut events = until_blocked(&mut stream);
        h.sleep.fire();
        events.extend(stream.collect::<Vec<_>>().await);
        assert_valid_stream(&events, &answer);
        assert_eq!(
            run_error(&events).code.as_deref(),
            Some("DEADLINE_EXCEEDED")
        );
        let thread = stored_thread(&h).await;
        assert_eq!(thread.status, ThreadStatus::Interrupted);
        assert_eq!(pending(&thread).pinned_answer, None);
        assert!(thread.lease.is_none());
    });
}

#[test]
fn re_raising_the_answered_interrupt_id_is_an_error_not_an_endless_replay() {
    block_on(async {
        let h = Harness::new(Scripted(|ctx| {
            let call = ctx.tool_call("refund", &json!({}));
            // A buggy agent that asks the same question under the same id every time.
            Ok(Finish::interrupt(
                Interrupt::new("int-fixed", "tool_call").with_tool_call(call),
            ))
        }));
        let raised = interrupts(&h.run(&user_input("t", "r1", "refund")).await);
        let answer = resume_input("t", "r2", vec![approve(&raised[0])]);
        let events = h.run(&answer).await;
        assert_eq!(
            run_error(&events).code.as_deref(),
            Some("INTERRUPT_ID_REUSED")
        );
        // Nothing executed, so the question stays open for a fixed agent.
        let view = h.thread("t").await;
        assert_eq!(view.status, ThreadStatus::Interrupted);
        assert_eq!(view.pending_interrupts[0].id, raised[0].id);
    });
}

#[test]
fn every_refused_finish_commit_releases_the_lease() {
    for error in [
        StoreError::TooLarge("thread over 400 KB".into()),
        StoreError::Backend("internal server error".into()),
        StoreError::Unavailable("throttled".into()),
    ] {
        block_on(async {
            let h = Harness::new(Chatty);
            // The finish writes the thread and its run record; the release only the thread.
            h.store.fail_commits_where(error.clone(), |_, writes| {
                writes.len() > 1 && thread_put_status(writes).as_deref() == Some("idle")
            });
            let events = h.run(&user_input("t", "r1", "hi")).await;
            assert!(run_error(&events).code.is_some());
            h.store.heal();
            // No 15-minute wait: the next run is accepted at once.
            let view = h.thread("t").await;
            assert_ne!(view.status, ThreadStatus::Running, "{error:?}");
            h.run(&user_input("t", "r2", "again")).await;
        });
    }
}

#[test]
fn a_refused_failure_record_still_releases_the_lease() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let raised = interrupts(&h.run(&user_input("t", "r1", "refund")).await);
        probe.fail_next_resume.store(true, Ordering::SeqCst);
        // The commit that records the failed run fails (a 5xx); only the release gets through.
        h.store.fail_commits_where(
            StoreError::Backend("internal server error".into()),
            |_, writes| writes.len() > 1 && thread_put_status(writes).as_deref() == Some("idle"),
        );
        let events = h
            .run(&resume_input("t", "r2", vec![approve(&raised[0])]))
            .await;
        assert_eq!(run_error(&events).code.as_deref(), Some("AGENT_ERROR"));
        h.store.heal();
        let thread = stored_thread(&h).await;
        assert!(thread.lease.is_none());
        // The refund executed: only the same answer may follow, and it does not pay twice.
        assert!(pending(&thread).pinned_answer.is_some());
        let err = h
            .reject(&resume_input("t", "r3", vec![deny(&raised[0])]))
            .await;
        assert_eq!(err.code().name, "ANSWER_IN_DOUBT");
        let events = h
            .run(&resume_input("t", "r4", vec![approve(&raised[0])]))
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(probe.calls(), 1);
    });
}

#[test]
fn a_holder_that_died_applying_an_answer_pins_it_for_whoever_comes_next() {
    block_on(async {
        let (probe, hold) = (Probe::new(), Gate::new());
        let config = handoff_core::EngineConfig {
            lease_ms: 10_000,
            ..handoff_core::EngineConfig::default()
        };
        let h = Harness::with_config(
            SlowRefund {
                probe: probe.clone(),
                hold: hold.clone(),
            },
            config,
        );
        let raised = interrupts(&h.run(&user_input("t", "r1", "refund")).await);
        let answer = resume_input("t", "r2", vec![approve(&raised[0])]);
        let mut dying = h.stream(&answer).await;
        let (_, ended) = drain_ready(&mut dying);
        assert!(
            !ended && probe.calls() == 1,
            "the refund call did not start"
        );
        // The process dies inside the payment call; nothing more is written by it.
        drop(dying);
        h.advance(10_000);

        let other = h.instance(
            SlowRefund {
                probe: probe.clone(),
                hold: hold.clone(),
            },
            "b",
        );
        let deny = resume_input("t", "r3", vec![deny(&raised[0])]);
        let err = other
            .start(deny, RunOptions::default())
            .await
            .err()
            .expect("a different answer was accepted while the refund is in doubt");
        assert_eq!(err.code().name, "ANSWER_IN_DOUBT");

        hold.open();
        let retry = resume_input("t", "r4", vec![approve(&raised[0])]);
        let events: Vec<_> = other
            .start(retry.clone(), RunOptions::default())
            .await
            .unwrap()
            .collect()
            .await;
        assert_valid_stream(&events, &retry);
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        let keys = probe.keys();
        assert_eq!(keys.len(), 2);
        assert_eq!(
            keys[0], keys[1],
            "the in-doubt refund was re-driven under a new key"
        );
    });
}

#[test]
fn a_failure_after_an_executed_effect_tells_the_client_what_executed() {
    block_on(async {
        let probe = Probe::new();
        let p = probe.clone();
        let h = Harness::new(Scripted(|ctx| {
            let call = ctx.tool_call("refund", &json!({ "amount": 40 }));
            Ok(Finish::interrupt(
                Interrupt::new(format!("int-{call}"), "tool_call").with_tool_call(call),
            ))
        }));
        let raised = interrupts(&h.run(&user_input("t", "r1", "refund")).await);
        // The resume refunds, then fails before it reports the result itself.
        let resumed = h.instance(FailsAfterEffect { probe: p }, "b");
        let answer = resume_input("t", "r2", vec![approve(&raised[0])]);
        let events: Vec<_> = resumed
            .start(answer.clone(), RunOptions::default())
            .await
            .unwrap()
            .collect()
            .await;
        assert_valid_stream(&events, &answer);
        assert_eq!(run_error(&events).code.as_deref(), Some("AGENT_ERROR"));
        let results = tool_results(&events);
        assert_eq!(results.len(), 1, "{}", dump(&events));
        assert_eq!(
            Some(&results[0].tool_call_id),
            raised[0].tool_call_id.as_ref()
        );
        let content: Value = serde_json::from_str(&results[0].content.text()).unwrap();
        assert_eq!(
            content["executedEffects"][0]["result"],
            json!({ "refundId": "rf-1" })
        );
        assert_eq!(probe.calls(), 1);
        // The client's copy (what it saw) is current: its next turn is accepted.
        let mut messages = h.thread("t").await.messages;
        assert_eq!(
            messages.last().map(|m| m.id().clone()),
            Some(results[0].message_id.clone())
        );
        messages.push(agui_protocol::Message::user("u-r3", "thanks"));
        let next = agui_protocol::RunAgentInput::new("t", "r3", messages);
        assert!(resumed.start(next, RunOptions::default()).await.is_ok());
    });
}

struct FailsAfterEffect {
    probe: Arc<Probe>,
}

#[async_trait]
impl Agent for FailsAfterEffect {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        let probe = self.probe.clone();
        let _: Value = ctx
            .effect("refund-1", move |_key| async move {
                let n = probe.effect_calls.fetch_add(1, Ordering::SeqCst) + 1;
                Ok::<_, String>(json!({ "refundId": format!("rf-{n}") }))
            })
            .await?;
        Err(AgentError::new("the receipt printer is on fire"))
    }
}

/// A payment API's failure: refused before sending, or a timeout after it.
#[derive(Debug)]
enum PaymentError {
    Refused,
    TimedOut,
}

impl std::fmt::Display for PaymentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PaymentError::Refused => "refused before sending",
            PaymentError::TimedOut => "timed out after sending",
        })
    }
}

impl EffectFailure for PaymentError {
    fn not_executed(&self) -> bool {
        matches!(self, PaymentError::Refused)
    }
}

/// Approves a refund whose first downstream call fails with `first_error`.
struct RefundFailsOnce {
    probe: Arc<Probe>,
    first_error: fn() -> PaymentError,
}

#[async_trait]
impl Agent for RefundFailsOnce {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        let call = match ask_or_take_approval(ctx)? {
            Ok(call) => call,
            Err(finish) => return Ok(finish),
        };
        let (probe, first_error) = (self.probe.clone(), self.first_error);
        let receipt: Value = ctx
            .effect(&format!("refund-{call}"), move |key| async move {
                let n = probe.effect_calls.fetch_add(1, Ordering::SeqCst) + 1;
                lock(&probe.keys).push(key);
                match n {
                    1 => Err(first_error()),
                    _ => Ok(json!({ "refundId": format!("rf-{n}") })),
                }
            })
            .await?;
        ctx.tool_result(&call, receipt.to_string());
        Ok(Finish::done())
    }
}

/// A refund asked for and approved, whose payment call failed with `first_error`: the
/// harness, the probe, the interrupts raised and the key of the effect's record.
async fn approval_failing_once(
    first_error: fn() -> PaymentError,
) -> (Harness, Arc<Probe>, Vec<Interrupt>, String) {
    let probe = Probe::new();
    let h = Harness::new(RefundFailsOnce {
        probe: probe.clone(),
        first_error,
    });
    let raised = interrupts(&h.run(&user_input("t", "r1", "refund")).await);
    let events = h
        .run(&resume_input("t", "r2", vec![approve(&raised[0])]))
        .await;
    assert_eq!(run_error(&events).code.as_deref(), Some("AGENT_ERROR"));
    let key = format!("effect#refund-{}", raised[0].tool_call_id.as_ref().unwrap());
    (h, probe, raised, key)
}

/// Before, any error deleted the effect's record: the timeout un-pinned the answer and
/// a denial was accepted although the refund may have gone through.
#[test]
fn an_effect_that_fails_after_sending_stays_in_doubt_and_pins_its_answer() {
    block_on(async {
        let (h, probe, raised, key) = approval_failing_once(|| PaymentError::TimedOut).await;
        let thread = stored_thread(&h).await;
        assert!(
            pending(&thread).pinned_answer.is_some(),
            "the answer stays pinned"
        );
        assert!(
            h.item("t", &key).await.is_some(),
            "the effect is still in doubt"
        );

        let err = h
            .reject(&resume_input("t", "r3", vec![deny(&raised[0])]))
            .await;
        assert_eq!(
            (err.code().name, err.http_status()),
            ("ANSWER_IN_DOUBT", 409)
        );

        let events = h
            .run(&resume_input("t", "r4", vec![approve(&raised[0])]))
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        let keys = lock(&probe.keys).clone();
        assert_eq!(keys.len(), 2);
        assert_eq!(keys[0], keys[1], "re-driven under the same idempotency key");
    });
}

#[test]
fn an_effect_that_was_never_sent_leaves_the_answer_free() {
    block_on(async {
        let (h, probe, raised, key) = approval_failing_once(|| PaymentError::Refused).await;
        let thread = stored_thread(&h).await;
        assert!(pending(&thread).pinned_answer.is_none());
        assert!(h.item("t", &key).await.is_none());
        // Nothing ran, so a different answer is fine.
        let events = h
            .run(&resume_input("t", "r3", vec![deny(&raised[0])]))
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(probe.calls(), 1);
    });
}
