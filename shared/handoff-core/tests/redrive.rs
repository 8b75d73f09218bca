//! Issue 53: a run whose instance dies mid-way is finished by another, replaying its
//! journaled steps and recorded effects: the sweep, the next request on the thread and a
//! reconnecting reader each re-drive it, and nothing it did is done twice.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agui_protocol::{Event, RunFinishedOutcome};
use async_trait::async_trait;
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::records::RunStatus;
use handoff_core::{
    Agent, AgentError, EngineConfig, Finish, Principal, REDRIVE_SCOPE, RunContext, RunOptions,
    Store,
};
use serde_json::{Value, json};
use support::*;

const LEASE: u64 = 10_000;

/// A "model call" (journaled), then a charge (an effect), then the answer. The first
/// execution stops at its gate between the two: the instance dies there.
struct ModelThenCharge {
    model_calls: Arc<AtomicUsize>,
    charges: Arc<Probe>,
    executions: Arc<AtomicUsize>,
    gate: Gate,
}

impl ModelThenCharge {
    fn new() -> Self {
        ModelThenCharge {
            model_calls: Arc::new(AtomicUsize::new(0)),
            charges: Probe::new(),
            executions: Arc::new(AtomicUsize::new(0)),
            gate: Gate::new(),
        }
    }

    /// The same agent on another instance (sharing the counters; it does not block).
    fn twin(&self) -> Self {
        let gate = Gate::new();
        gate.open();
        ModelThenCharge {
            model_calls: self.model_calls.clone(),
            charges: self.charges.clone(),
            executions: self.executions.clone(),
            gate,
        }
    }
}

#[async_trait]
impl Agent for ModelThenCharge {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        self.executions.fetch_add(1, Ordering::SeqCst);
        let answer = match ctx.replay_step().await? {
            Some(recorded) => recorded,
            None => {
                let mark = ctx.step_mark();
                let n = self.model_calls.fetch_add(1, Ordering::SeqCst) + 1;
                let id = ctx.text_start();
                ctx.text_delta(&id, "Let me ");
                ctx.text_delta(&id, "refund that.");
                ctx.text_end(&id);
                let answer = json!({ "call": n });
                ctx.record_step(mark, &answer).await?;
                answer
            }
        };
        ctx.custom("test:blocked", Value::Null);
        self.gate.wait().await;
        let probe = self.charges.clone();
        let key = format!("charge-{}", ctx.run_id());
        let charged: Value = ctx
            .effect(&key, move |_key| async move {
                let n = probe.effect_calls.fetch_add(1, Ordering::SeqCst) + 1;
                Ok::<_, String>(json!({ "charge": n }))
            })
            .await?;
        ctx.say(&format!("model {answer}, charged {charged}"));
        Ok(Finish::done())
    }
}

fn config() -> EngineConfig {
    EngineConfig {
        lease_ms: LEASE,
        ..EngineConfig::default()
    }
}

/// Starts r1 on `t` and lets its instance die at the gate (its stream, which drives it,
/// is dropped); returns the events its client had.
async fn started_then_died(h: &Harness) -> Vec<Event> {
    let mut stream = h.stream(&user_input("t", "r1", "refund me")).await;
    let events = until_blocked(&mut stream);
    drop(stream);
    events
}

fn text_ids(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TextMessageStart(s) => Some(s.message_id.to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_sweep_finishes_a_dead_run_once_its_lease_lapsed_replaying_its_model_answer() {
    block_on(async {
        let agent = ModelThenCharge::new();
        let (model, charges) = (agent.model_calls.clone(), agent.charges.clone());
        let other = agent.twin();
        let h = Harness::with_config(agent, config());
        let twin = h.instance(other, "b");
        let seen = started_then_died(&h).await;
        assert_eq!(model.load(Ordering::SeqCst), 1);

        h.advance(LEASE - 1);
        let early = twin.redrive_due(10, None).await;
        assert_eq!(early.redriven, 0, "the lease still runs: {early:?}");

        h.advance(1);
        let report = twin.redrive_due(10, None).await;
        assert_eq!(report.redriven, 1, "{report:?}");
        assert_eq!(
            model.load(Ordering::SeqCst),
            1,
            "the model answer was replayed"
        );
        assert_eq!(charges.calls(), 1, "the charge ran once");

        let (record, events) = h.run_record("t", "r1").await.unwrap();
        assert_eq!(record.status, RunStatus::Succeeded);
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(
            text_ids(&events)[0],
            text_ids(&seen)[0],
            "the same message, by id"
        );
        assert!(text(&events).contains("charged {\"charge\":1}"));

        // Nothing is left to re-drive.
        let now = h.now();
        let listed = h.store.list_index(REDRIVE_SCOPE, None, 10, now).await;
        assert!(listed.unwrap().is_empty());
        assert_eq!(twin.redrive_due(10, None).await.redriven, 0);
    });
}

#[test]
fn the_next_request_on_the_thread_finishes_the_dead_run_first() {
    block_on(async {
        let agent = ModelThenCharge::new();
        let (model, charges) = (agent.model_calls.clone(), agent.charges.clone());
        let other = agent.twin();
        let h = Harness::with_config(agent, config());
        let twin = h.instance(other, "b");
        started_then_died(&h).await;
        h.advance(LEASE);

        let next = user_input("t", "r2", "and the other one");
        let events: Vec<Event> = twin
            .start(next.clone(), RunOptions::default())
            .await
            .expect("accepted")
            .collect()
            .await;
        assert_valid_stream(&events, &next);
        assert_eq!(
            outcome(&events),
            &RunFinishedOutcome::success(),
            "{}",
            dump(&events)
        );
        // r1 was finished (its model answer replayed) before r2 ran its own.
        assert_eq!(model.load(Ordering::SeqCst), 2);
        assert_eq!(charges.calls(), 2);
        let (first, _) = h.run_record("t", "r1").await.unwrap();
        assert_eq!(first.status, RunStatus::Succeeded);
        let view = h.thread("t").await;
        let said: Vec<String> = view.messages.iter().filter_map(|m| m.text()).collect();
        let r1_reply = said.iter().position(|t| t.contains("charge\":1"));
        let r2_asked = said.iter().position(|t| t == "and the other one");
        assert!(r1_reply < r2_asked, "r1's reply comes first: {said:?}");
    });
}

#[test]
fn a_reader_reconnecting_to_the_dead_run_gets_the_rest_of_it_from_its_re_drive() {
    block_on(async {
        let agent = ModelThenCharge::new();
        let (model, charges) = (agent.model_calls.clone(), agent.charges.clone());
        let other = agent.twin();
        let h = Harness::with_config(agent, config());
        let twin = h.instance(other, "b");
        let seen = started_then_died(&h).await;
        h.advance(LEASE);

        let principal = Principal::anonymous();
        let frames: Vec<(u64, Event)> = twin
            .follow_run(&principal, "t", "r1", seen.len() as u64)
            .await
            .expect("readable")
            .expect("the run exists")
            .collect()
            .await;
        // The join prelude repeats what the client has under the same ids (it drops
        // them); what follows is new, numbered on from its last id.
        let last = seen.len() as u64;
        for (id, event) in frames.iter().filter(|(id, _)| *id <= last) {
            assert_eq!(event.event_type(), seen[*id as usize - 1].event_type());
        }
        let fresh: Vec<u64> = frames
            .iter()
            .map(|(id, _)| *id)
            .filter(|id| *id > last)
            .collect();
        let expected: Vec<u64> = (last + 1..=last + fresh.len() as u64).collect();
        assert_eq!(fresh, expected, "no gap, no repeat");
        assert!(!fresh.is_empty());
        let frames: Vec<(u64, Event)> = frames.into_iter().filter(|(id, _)| *id > last).collect();
        let mut whole = seen.clone();
        whole.extend(frames.into_iter().map(|(_, e)| e));
        assert_valid_stream(&whole, &user_input("t", "r1", "refund me"));
        assert_eq!(outcome(&whole), &RunFinishedOutcome::success());
        assert_eq!(model.load(Ordering::SeqCst), 1);
        assert_eq!(charges.calls(), 1);
    });
}

#[test]
fn a_run_that_ends_leaves_nothing_to_re_drive() {
    block_on(async {
        let h = Harness::with_config(Chatty, config());
        h.run(&user_input("t", "r1", "hi")).await;
        h.advance(LEASE * 2);
        let now = h.now();
        assert!(
            h.store
                .list_index(REDRIVE_SCOPE, None, 10, now)
                .await
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            h.engine.redrive_due(10, None).await,
            Default::default(),
            "nothing listed, nothing read"
        );
    });
}

#[test]
fn a_run_handed_over_at_its_deadline_is_finished_by_the_next_sweep() {
    block_on(async {
        let agent = ModelThenCharge::new();
        let (model, charges) = (agent.model_calls.clone(), agent.charges.clone());
        let other = agent.twin();
        let h = Harness::with_config(agent, config());
        let twin = h.instance(other, "b");
        let options = RunOptions {
            deadline_ms: Some(h.now() + 5_000),
            hand_off_at_deadline: true,
            ..RunOptions::default()
        };
        let input = user_input("t", "r1", "refund me");
        let mut stream = h.stream_with(&input, options).await;
        until_blocked(&mut stream);
        h.advance(5_000);
        h.sleep.fire();
        let (rest, ended) = drain_ready(&mut stream);
        assert!(ended, "the stream ends at the hand-over");
        assert!(!contains_run_finished(&rest), "{}", dump(&rest));
        let (record, _) = h.run_record("t", "r1").await.unwrap();
        assert_eq!(
            record.status,
            RunStatus::Running,
            "not cancelled: handed over"
        );

        let report = twin.redrive_due(10, None).await;
        assert_eq!(report.redriven, 1, "due at once: {report:?}");
        let (record, events) = h.run_record("t", "r1").await.unwrap();
        assert_eq!(record.status, RunStatus::Succeeded);
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!((model.load(Ordering::SeqCst), charges.calls()), (1, 1));
    });
}

#[test]
fn a_detached_start_claims_and_leaves_the_run_to_the_sweep() {
    block_on(async {
        let agent = ModelThenCharge::new();
        let executions = agent.executions.clone();
        let h = Harness::with_config(agent.twin(), config());
        let input = user_input("t", "r1", "refund me");
        h.engine
            .start_detached(input.clone(), RunOptions::default())
            .await
            .expect("claimed");
        assert_eq!(executions.load(Ordering::SeqCst), 0, "nothing ran yet");
        assert_eq!(
            h.thread("t").await.status,
            handoff_core::records::ThreadStatus::Running
        );
        // The same request again is the same run, not a second one.
        h.engine
            .start_detached(input, RunOptions::default())
            .await
            .expect("a repeat is accepted");
        assert_eq!(h.engine.redrive_due(10, None).await.redriven, 1);
        assert_eq!(executions.load(Ordering::SeqCst), 1);
        let (record, _) = h.run_record("t", "r1").await.unwrap();
        assert_eq!(record.status, RunStatus::Succeeded);
    });
}

#[test]
fn a_re_drive_handed_over_at_its_own_deadline_replays_its_steps_at_the_next() {
    block_on(async {
        let agent = ModelThenCharge::new();
        let (model, charges, gate) = (
            agent.model_calls.clone(),
            agent.charges.clone(),
            agent.gate.clone(),
        );
        let h = Harness::with_config(agent, config());
        let input = user_input("t", "r1", "refund me");
        h.engine
            .start_detached(input, RunOptions::default())
            .await
            .expect("claimed");
        // The first re-drive runs out of time at the gate, after its model step.
        let deadline = h.now() + 5_000;
        let first = h.engine.redrive_due(10, Some(deadline));
        let expire = async {
            for _ in 0..50 {
                yield_now().await;
            }
            h.advance(5_000);
            h.sleep.fire();
        };
        let (report, ()) = futures::join!(first, expire);
        assert_eq!(report.redriven, 1, "{report:?}");
        assert_eq!(model.load(Ordering::SeqCst), 1);
        let (record, _) = h.run_record("t", "r1").await.unwrap();
        assert_eq!(record.status, RunStatus::Running, "handed over again");

        gate.open();
        let report = h.engine.redrive_due(10, None).await;
        assert_eq!(report.redriven, 1, "{report:?}");
        assert_eq!(
            model.load(Ordering::SeqCst),
            1,
            "the model step was replayed"
        );
        assert_eq!(charges.calls(), 1);
        let (record, _) = h.run_record("t", "r1").await.unwrap();
        assert_eq!(record.status, RunStatus::Succeeded);
    });
}

/// Lets the other futures of a `join!` run once.
async fn yield_now() {
    let mut yielded = false;
    futures::future::poll_fn(|cx| {
        if std::mem::replace(&mut yielded, true) {
            std::task::Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await;
}
