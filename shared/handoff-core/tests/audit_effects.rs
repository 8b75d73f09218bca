//! Issue 49: an approved effect is on the audit trail from the moment it starts, whatever
//! becomes of the call. The entry (its key, the idempotency key the downstream saw, who
//! approved the answer driving it) is written with the record marking the effect started,
//! so a call left in doubt (failing after sending, stopped mid-call) is audited, and
//! deleting the thread afterwards leaves the trail whole.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agui_protocol::{Interrupt, RunFinishedOutcome};
use async_trait::async_trait;
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::records::audit::{AuditEntry, AuditKind};
use handoff_core::runtime::{ManualClock, NeverSleep, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{
    Agent, AgentError, ApprovalPolicy, AuditQuery, Engine, Finish, Principal, RunContext,
    RunOptions, Runtime, StopOutcome, WithApproval,
};
use serde_json::{Value, json};
use support::*;

const EFFECT: &str = "refund-A1024";

/// What the refund's downstream call does on its first attempt (later ones succeed).
#[derive(Clone, Copy)]
enum FirstCall {
    /// Fails after sending: the refund may have gone through.
    FailsInDoubt,
    /// Never answers: the run is stopped while it waits.
    Hangs,
}

/// Asks an approver (role `approver`) to approve a refund; the approved resume refunds
/// through `ctx.effect`.
struct ApprovedRefund {
    first: FirstCall,
    calls: Arc<AtomicUsize>,
    keys: Arc<std::sync::Mutex<Vec<String>>>,
}

#[async_trait]
impl Agent for ApprovedRefund {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        if !ctx.is_resume() {
            let call = ctx.tool_call("refund", &json!({ "order": "A1024" }));
            let interrupt = Interrupt::new(format!("int-{call}"), "tool_call")
                .with_tool_call(call)
                .with_response_schema(approval_schema())
                .with_approval(&ApprovalPolicy::new().role("approver"));
            return Ok(Finish::interrupt(interrupt));
        }
        let call = ctx.decisions()[0]
            .tool_call_id()
            .cloned()
            .ok_or("no tool call")?;
        let (calls, keys, first) = (self.calls.clone(), self.keys.clone(), self.first);
        let receipt: Value = ctx
            .effect(EFFECT, move |key| async move {
                lock(&keys).push(key);
                match (calls.fetch_add(1, Ordering::SeqCst), first) {
                    (0, FirstCall::FailsInDoubt) => Err("timed out after sending".to_owned()),
                    (0, FirstCall::Hangs) => futures::future::pending().await,
                    _ => Ok(json!({ "refundId": "rf-1" })),
                }
            })
            .await?;
        ctx.tool_result(&call, receipt.to_string());
        Ok(Finish::done())
    }
}

struct Setup {
    engine: Engine,
    calls: Arc<AtomicUsize>,
    keys: Arc<std::sync::Mutex<Vec<String>>>,
}

fn setup(first: FirstCall) -> Setup {
    let (calls, keys) = (Arc::default(), Arc::default());
    let agent = ApprovedRefund {
        first,
        calls: Arc::clone(&calls),
        keys: Arc::clone(&keys),
    };
    let runtime = Runtime::new(ManualClock::new(T0), SequentialIds::new("a"), NeverSleep);
    let engine = Engine::new(agent, Arc::new(MemoryStore::new()), runtime);
    Setup {
        engine,
        calls,
        keys,
    }
}

fn alice() -> Principal {
    Principal::new("acme", "alice")
}

fn carol() -> Principal {
    Principal::new("acme", "carol").with_roles(["approver"])
}

fn auditor() -> Principal {
    Principal::new("acme", "audrey").with_roles(["auditor"])
}

fn as_(principal: Principal) -> RunOptions {
    RunOptions {
        principal,
        ..RunOptions::default()
    }
}

/// Alice asks; the interrupt she gets.
async fn asked(engine: &Engine) -> Interrupt {
    let input = user_input("t", "r1", "refund order A1024");
    let stream = engine.start(input, as_(alice())).await.expect("accepted");
    interrupts(&stream.collect::<Vec<_>>().await).remove(0)
}

/// The thread's trail as an auditor lists it, in chain order from the newest (its entries
/// share one time here: the clock stands still).
async fn trail(engine: &Engine) -> Vec<AuditEntry> {
    let query = AuditQuery {
        thread_id: Some("t".into()),
        limit: 100,
        ..AuditQuery::default()
    };
    let mut entries = engine.list_audit(&auditor(), &query).await.unwrap().entries;
    entries.sort_by_key(|e| std::cmp::Reverse(e.seq));
    entries
}

/// The entry of attempt `attempt` at the refund, approved by carol in run `run_id`.
fn assert_attempt(entry: &AuditEntry, interrupt: &Interrupt, key: &str, run_id: &str, n: u32) {
    assert_eq!(entry.kind, AuditKind::Effect, "{entry:?}");
    assert_eq!(entry.effect_key.as_deref(), Some(EFFECT));
    assert_eq!(entry.idempotency_key.as_deref(), Some(key));
    assert_eq!(entry.attempt, Some(n));
    assert_eq!(entry.replayed, Some(false));
    assert_eq!(entry.principal, "carol");
    assert_eq!(entry.roles, ["approver"]);
    assert_eq!(entry.interrupt_id.as_deref(), Some(interrupt.id.as_str()));
    assert_eq!(entry.decision.as_deref(), Some("approved"));
    assert_eq!(entry.run_id, run_id);
}

/// After the thread's deletion, the trail still holds exactly `expected` entries, whole.
async fn assert_whole_after_delete(engine: &Engine, expected: u64) {
    engine
        .delete_thread(&alice(), "t")
        .await
        .expect("the owner deletes the thread");
    assert!(engine.thread(&alice(), "t").await.unwrap().is_none());
    for thread in [Some("t"), None] {
        let verdict = engine.verify_audit(&auditor(), thread).await.unwrap();
        assert!(verdict.intact, "{verdict:?}");
        assert_eq!(verdict.entries, expected, "{thread:?}: {verdict:?}");
    }
}

/// Before the fix, the entry was written with the effect's result only: a call failing
/// after sending left none, and the trail of the deleted thread was empty and "intact".
#[test]
fn an_approved_effect_left_in_doubt_is_on_the_trail_after_the_thread_is_deleted() {
    block_on(async {
        let s = setup(FirstCall::FailsInDoubt);
        let interrupt = asked(&s.engine).await;
        let answer = resume_input("t", "r2", vec![approve(&interrupt)]);
        let events = s
            .engine
            .start(answer, as_(carol()))
            .await
            .expect("accepted")
            .collect::<Vec<_>>()
            .await;
        assert_eq!(run_error(&events).code.as_deref(), Some("AGENT_ERROR"));
        assert_eq!(s.calls.load(Ordering::SeqCst), 1);
        let key = lock(&s.keys)[0].clone();

        assert_whole_after_delete(&s.engine, 1).await;
        let entries = trail(&s.engine).await;
        assert_eq!(entries.len(), 1, "{entries:?}");
        assert_attempt(&entries[0], &interrupt, &key, "r2", 1);
        // The tenant-wide listing shows it too.
        let everything = AuditQuery {
            limit: 100,
            ..AuditQuery::default()
        };
        let page = s.engine.list_audit(&auditor(), &everything).await.unwrap();
        assert_eq!(page.entries, entries);
    });
}

#[test]
fn an_approved_effect_stopped_mid_call_is_on_the_trail_after_the_thread_is_deleted() {
    block_on(async {
        let s = setup(FirstCall::Hangs);
        let interrupt = asked(&s.engine).await;
        let answer = resume_input("t", "r2", vec![approve(&interrupt)]);
        let mut stream = s
            .engine
            .start(answer.clone(), as_(carol()))
            .await
            .expect("accepted");
        let (mut events, ended) = drain_ready(&mut stream);
        assert!(
            !ended && s.calls.load(Ordering::SeqCst) == 1,
            "not mid-call"
        );

        let stopped = s.engine.stop(&alice(), "t", "r2").await;
        assert_eq!(stopped, Ok(StopOutcome::Stopping));
        let (more, ended) = drain_ready(&mut stream);
        events.extend(more);
        assert!(ended, "the run did not stop\n{}", dump(&events));
        assert_valid_stream(&events, &answer);
        assert_eq!(outcome(&events), &RunFinishedOutcome::Cancelled);
        let key = lock(&s.keys)[0].clone();

        assert_whole_after_delete(&s.engine, 1).await;
        let entries = trail(&s.engine).await;
        assert_eq!(entries.len(), 1, "{entries:?}");
        assert_attempt(&entries[0], &interrupt, &key, "r2", 1);
    });
}

/// Each attempt has its entry, under the same idempotency key; a call that completes
/// adds none of its own (its attempt's entry is the one), and the answer's follows.
#[test]
fn a_re_driven_effect_adds_an_attempt_and_a_completed_one_no_second_entry() {
    block_on(async {
        let s = setup(FirstCall::FailsInDoubt);
        let interrupt = asked(&s.engine).await;
        for run in ["r2", "r3"] {
            let answer = resume_input("t", run, vec![approve(&interrupt)]);
            let stream = s.engine.start(answer, as_(carol())).await.unwrap();
            stream.collect::<Vec<_>>().await;
        }
        assert_eq!(s.calls.load(Ordering::SeqCst), 2);
        let keys = lock(&s.keys).clone();
        assert_eq!(keys[0], keys[1]);

        let entries = trail(&s.engine).await;
        let seqs: Vec<u64> = entries.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [3, 2, 1], "{entries:?}");
        assert_eq!(entries[0].kind, AuditKind::Answer);
        assert_eq!(entries[0].run_id, "r3");
        assert_attempt(&entries[1], &interrupt, &keys[0], "r3", 2);
        assert_attempt(&entries[2], &interrupt, &keys[0], "r2", 1);
        assert_whole_after_delete(&s.engine, 3).await;
    });
}
