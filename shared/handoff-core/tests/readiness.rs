//! `Agent::readiness`: an interrupt that waits on the outside world (a delegated
//! task) refuses `resolved` answers with `INTERRUPT_NOT_READY` before anything
//! is written, and accepts them once the agent says it is ready.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use agui_protocol::RunFinishedOutcome;
use async_trait::async_trait;
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::records::{RunStatus, ThreadStatus};
use handoff_core::{
    Agent, AgentError, CoreError, Decision, Finish, Readiness, RunContext, StoreError,
};
use support::*;

/// The refund flow, whose approvals are only answerable once `ready` is set.
struct Waiting {
    inner: RefundAgent,
    ready: Arc<AtomicBool>,
    store_down: Arc<AtomicBool>,
    asked: Arc<AtomicUsize>,
}

#[async_trait]
impl Agent for Waiting {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        self.inner.run(ctx).await
    }

    async fn readiness(
        &self,
        thread_id: &str,
        decision: &Decision,
    ) -> Result<Readiness, CoreError> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        if self.store_down.load(Ordering::SeqCst) {
            return Err(StoreError::Unavailable("injected".into()).into());
        }
        Ok(if self.ready.load(Ordering::SeqCst) {
            Readiness::Ready
        } else {
            Readiness::NotReady(format!("{thread_id}/{} still waits", decision.id()))
        })
    }
}

struct Fixture {
    h: Harness,
    probe: Arc<Probe>,
    ready: Arc<AtomicBool>,
    store_down: Arc<AtomicBool>,
    asked: Arc<AtomicUsize>,
}

fn fixture() -> Fixture {
    let probe = Probe::new();
    let ready = Arc::new(AtomicBool::new(false));
    let store_down = Arc::new(AtomicBool::new(false));
    let asked = Arc::new(AtomicUsize::new(0));
    let h = Harness::new(Waiting {
        inner: RefundAgent::new(probe.clone()),
        ready: ready.clone(),
        store_down: store_down.clone(),
        asked: asked.clone(),
    });
    Fixture {
        h,
        probe,
        ready,
        store_down,
        asked,
    }
}

#[test]
fn an_answer_before_ready_is_refused_and_changes_nothing_then_succeeds() {
    block_on(async {
        let f = fixture();
        let raised = interrupts(&f.h.run(&user_input("t", "r1", "refund order 7")).await);
        let before = f.h.thread("t").await;
        let commits = f.h.store.commits();
        let runs = f.probe.runs.load(Ordering::SeqCst);

        let input = resume_input("t", "r2", vec![approve(&raised[0])]);
        let err = f.h.reject(&input).await;
        assert_eq!(
            (err.code().name, err.http_status(), err.retryable()),
            ("INTERRUPT_NOT_READY", 409, false)
        );
        assert_eq!(
            err.public_message(),
            format!(
                "interrupt {} cannot be answered yet: t/{} still waits",
                raised[0].id, raised[0].id
            )
        );
        assert_eq!(f.asked.load(Ordering::SeqCst), 1);
        assert_eq!(f.h.store.commits(), commits, "nothing was written");
        assert_eq!(f.h.thread("t").await, before);
        assert!(f.h.run_record("t", "r2").await.is_none());
        assert_eq!(f.probe.runs.load(Ordering::SeqCst), runs);
        assert_eq!(f.probe.calls(), 0);

        // Once ready, the same request (same runId: nothing was recorded) runs.
        f.ready.store(true, Ordering::SeqCst);
        let events = f.h.run(&input).await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(f.probe.calls(), 1);
        let view = f.h.thread("t").await;
        assert_eq!(view.status, ThreadStatus::Idle);
        assert_eq!(
            view.last_run.map(|r| (r.run_id.to_string(), r.status)),
            Some(("r2".to_owned(), RunStatus::Succeeded))
        );
    });
}

#[test]
fn a_cancel_is_never_asked_about() {
    block_on(async {
        let f = fixture();
        let raised = interrupts(&f.h.run(&user_input("t", "r1", "refund order 7")).await);
        let events =
            f.h.run(&resume_input("t", "r2", vec![cancel(&raised[0])]))
                .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(f.asked.load(Ordering::SeqCst), 0);
        assert_eq!(f.probe.calls(), 0);
        assert!(f.h.thread("t").await.pending_interrupts.is_empty());
    });
}

#[test]
fn one_unready_answer_refuses_the_whole_resume() {
    block_on(async {
        let probe = Probe::new();
        let ready = Arc::new(AtomicBool::new(false));
        let h = Harness::new(Waiting {
            inner: RefundAgent::new(probe.clone()).with_interrupts(2),
            ready,
            store_down: Arc::new(AtomicBool::new(false)),
            asked: Arc::new(AtomicUsize::new(0)),
        });
        let raised = interrupts(&h.run(&user_input("t", "r1", "refund order 7")).await);
        assert_eq!(raised.len(), 2);
        let input = resume_input("t", "r2", vec![cancel(&raised[0]), approve(&raised[1])]);
        let err = h.reject(&input).await;
        assert_eq!(err.code().name, "INTERRUPT_NOT_READY");
        assert!(err.public_message().contains(raised[1].id.as_str()));
        assert_eq!(h.thread("t").await.pending_interrupts.len(), 2);
    });
}

#[test]
fn a_failing_check_is_answered_with_its_own_code() {
    block_on(async {
        let f = fixture();
        let raised = interrupts(&f.h.run(&user_input("t", "r1", "refund order 7")).await);
        f.store_down.store(true, Ordering::SeqCst);
        let commits = f.h.store.commits();
        let err =
            f.h.reject(&resume_input("t", "r2", vec![approve(&raised[0])]))
                .await;
        assert_eq!(
            (err.code().name, err.http_status()),
            ("STORE_UNAVAILABLE", 503)
        );
        assert_eq!(f.h.store.commits(), commits);
        assert_eq!(f.h.thread("t").await.pending_interrupts, raised);
    });
}

#[test]
fn a_retry_of_an_applied_answer_is_replayed_without_asking_again() {
    block_on(async {
        let f = fixture();
        let raised = interrupts(&f.h.run(&user_input("t", "r1", "refund order 7")).await);
        f.ready.store(true, Ordering::SeqCst);
        let first =
            f.h.run(&resume_input("t", "r2", vec![approve(&raised[0])]))
                .await;
        let asked = f.asked.load(Ordering::SeqCst);
        // Even if the outside world now says "not ready", the duplicate gets the recorded result.
        f.ready.store(false, Ordering::SeqCst);
        let again =
            f.h.run(&resume_input("t", "r3", vec![approve(&raised[0])]))
                .await;
        assert_eq!(outcome(&again), outcome(&first));
        assert_eq!(tool_results(&again), tool_results(&first));
        assert_eq!(f.asked.load(Ordering::SeqCst), asked);
        assert_eq!(f.probe.calls(), 1);
    });
}

/// Ready until the refund executed (nothing left to refund, as the demo's ledger says);
/// its first readiness check waits for `hold`.
struct SpentOnce {
    inner: RefundAgent,
    probe: Arc<Probe>,
    hold: Gate,
    first: AtomicBool,
}

#[async_trait]
impl Agent for SpentOnce {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        self.inner.run(ctx).await
    }

    async fn readiness(&self, _thread: &str, _decision: &Decision) -> Result<Readiness, CoreError> {
        if self.first.swap(false, Ordering::SeqCst) {
            self.hold.wait().await;
        }
        Ok(match self.probe.calls() {
            0 => Readiness::Ready,
            _ => Readiness::NotReady("nothing is left to refund".into()),
        })
    }
}

/// Before, a request whose readiness was judged after a concurrent identical answer had
/// been applied was refused (the race test on three processes saw a 422 beside the
/// replays); now a refusal is only answered while the thread is still as read, and this
/// request replays the applied answer like its twins.
#[test]
fn a_readiness_refusal_on_a_stale_read_is_decided_again() {
    block_on(async {
        let probe = Probe::new();
        let hold = Gate::new();
        let h = Harness::new(SpentOnce {
            inner: RefundAgent::new(probe.clone()),
            probe: probe.clone(),
            hold: hold.clone(),
            first: AtomicBool::new(true),
        });
        let raised = interrupts(&h.run(&user_input("t", "r1", "refund order 7")).await);
        let late = resume_input("t", "r-late", vec![approve(&raised[0])]);
        let mut late_start = Box::pin(h.engine.start(late, handoff_core::RunOptions::default()));
        assert!(
            futures::poll!(late_start.as_mut()).is_pending(),
            "parked in its readiness check"
        );
        let events = h
            .run(&resume_input("t", "r-first", vec![approve(&raised[0])]))
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(probe.calls(), 1);

        hold.open();
        let stream = late_start.await.expect("a replay, not a refusal");
        let replayed: Vec<_> = futures::StreamExt::collect(stream).await;
        assert_eq!(outcome(&replayed), &RunFinishedOutcome::success());
        assert_eq!(probe.calls(), 1, "executed once");
    });
}
