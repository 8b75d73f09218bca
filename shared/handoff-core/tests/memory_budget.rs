//! A budgeted memory store keeps serving answered threads: their audit trail must not
//! pin them (entries without an expiry would make every answered thread's partition
//! permanent, so nothing could be evicted and the process would grow with every pair).

mod support;

use std::sync::Arc;

use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::runtime::{ManualClock, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, EngineConfig, Principal, RunOptions, Runtime};
use support::*;

#[test]
fn answered_threads_are_evicted_like_any_other_under_a_budget() {
    block_on(async {
        const BUDGET: usize = 64 * 1024;
        let store = Arc::new(MemoryStore::with_max_bytes(BUDGET));
        let runtime = Runtime::new(
            Arc::new(ManualClock::new(T0)),
            SequentialIds::new("b"),
            ControlSleep::new(),
        );
        let agent = Arc::new(RefundAgent::new(Probe::new()));
        let engine = Engine::with_config(agent, store.clone(), runtime, EngineConfig::default());
        let run = |input| {
            let engine = engine.clone();
            async move {
                let stream = engine
                    .start(input, RunOptions::default())
                    .await
                    .expect("accepted");
                stream.collect::<Vec<_>>().await
            }
        };
        for n in 0..200 {
            let thread = format!("t{n}");
            let raised = interrupts(&run(user_input(&thread, "r1", "refund order 7")).await);
            let resumed = run(resume_input(&thread, "r2", vec![approve(&raised[0])])).await;
            assert!(contains_run_finished(&resumed), "pair {n} finished");
        }
        // The oldest answered threads were dropped to stay within the budget.
        let first = engine
            .thread(&Principal::anonymous(), "t0")
            .await
            .expect("readable");
        assert!(
            first.is_none(),
            "t0 (answered, with an audit trail) is still held"
        );
        let last = engine
            .thread(&Principal::anonymous(), "t199")
            .await
            .expect("readable");
        assert!(last.is_some(), "the thread written last is kept");
        assert!(
            store.budgeted_bytes() <= BUDGET,
            "{} bytes",
            store.budgeted_bytes()
        );
    });
}
