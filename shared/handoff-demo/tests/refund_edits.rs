//! `editedArgs` on the refund approval may only lower the refund: the
//! interrupt's approval policy (and its `responseSchema`) make the engine refuse a
//! wider edit with 422 before anything is written.

use std::sync::Arc;

use agui_protocol::{Event, Interrupt, Message, ResumeEntry, RunAgentInput};
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::records::{THREAD_KEY, ThreadRecord};
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Condition, CoreError, Engine, RunOptions, Store, Write};
use handoff_demo::{DemoAgent, DemoConfig, Ledger, Order};
use serde_json::{Value, json};

const T0: u64 = 1_764_421_200_000;
const ORDER: &str = "A1024";

struct Demo {
    engine: Engine,
    store: Arc<dyn Store>,
    ledger: Ledger,
}

impl Demo {
    fn new() -> Self {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let runtime = Runtime::new(ManualClock::new(T0), SequentialIds::new("d"), NeverSleep);
        let agent = DemoAgent::new(store.clone(), DemoConfig::default());
        let ledger = agent.ledger().clone();
        Demo {
            engine: Engine::new(agent, store.clone(), runtime),
            store,
            ledger,
        }
    }

    async fn run(&self, input: RunAgentInput) -> Result<Vec<Event>, CoreError> {
        let stream = self.engine.start(input, RunOptions::default()).await?;
        Ok(stream.collect().await)
    }

    /// Run 1 on `thread`: the refund proposal and its approval interrupt.
    async fn interrupt(&self, thread: &str) -> Interrupt {
        let ask = RunAgentInput::new(
            thread,
            "r1",
            vec![Message::user("m1", format!("Refund order {ORDER}"))],
        );
        self.run(ask).await.expect("the proposal run starts");
        let mut pending = self.pending(thread).await;
        assert_eq!(pending.len(), 1);
        pending.remove(0)
    }

    async fn pending(&self, thread: &str) -> Vec<Interrupt> {
        let view = self
            .engine
            .thread(&handoff_core::Principal::anonymous(), thread)
            .await
            .unwrap()
            .unwrap();
        view.pending_interrupts
    }

    async fn resume(
        &self,
        thread: &str,
        run: &str,
        interrupt: &Interrupt,
        payload: Value,
    ) -> Result<Vec<Event>, CoreError> {
        let entry = ResumeEntry::resolved(interrupt.id.clone(), payload);
        self.run(RunAgentInput::new(thread, run, Vec::new()).with_resume(vec![entry]))
            .await
    }

    async fn refunded(&self) -> (u64, u64) {
        let account = self.ledger.account(ORDER, T0).await.unwrap();
        (account.refunds, account.refunded_cents)
    }
}

fn paid() -> u64 {
    Order::lookup(ORDER).amount_cents
}

fn approve_with(edited: Value) -> Value {
    json!({"approved": true, "editedArgs": edited})
}

#[test]
fn edits_that_widen_the_refund_are_refused_before_the_run() {
    block_on(async {
        let demo = Demo::new();
        let interrupt = demo.interrupt("t").await;
        let refused = [
            json!({"orderId": ORDER, "amountCents": paid() + 1, "currency": "USD"}),
            json!({"orderId": ORDER, "amountCents": 0}),
            json!({"orderId": ORDER, "amountCents": -500}),
            json!({"orderId": "B2048", "amountCents": 100}),
            json!({"orderId": ORDER, "amountCents": 100, "currency": "EUR"}),
        ];
        for (i, edited) in refused.into_iter().enumerate() {
            let err = demo
                .resume(
                    "t",
                    &format!("bad-{i}"),
                    &interrupt,
                    approve_with(edited.clone()),
                )
                .await
                .expect_err(&format!("{edited} must be refused"));
            assert_eq!(
                (err.code().name, err.http_status()),
                ("RESUME_PAYLOAD_INVALID", 422),
                "{edited}: {err}"
            );
        }
        assert_eq!(demo.refunded().await, (0, 0), "nothing was refunded");
        assert_eq!(
            demo.pending("t").await,
            vec![interrupt.clone()],
            "still pending"
        );

        // A lower amount on the same order is what editing is for.
        let edited = json!({"orderId": ORDER, "amountCents": 5_000, "currency": "USD"});
        demo.resume("t", "good", &interrupt, approve_with(edited))
            .await
            .expect("a lower refund is accepted");
        assert_eq!(demo.refunded().await, (1, 5_000));
    });
}

#[test]
fn the_full_amount_is_the_upper_bound() {
    block_on(async {
        let demo = Demo::new();
        let interrupt = demo.interrupt("t").await;
        // editedArgs replaces the arguments: leaving one out changes it.
        let partial = json!({"orderId": ORDER, "amountCents": paid()});
        let err = demo
            .resume("t", "r1b", &interrupt, approve_with(partial))
            .await
            .expect_err("the currency may not be dropped");
        assert!(err.to_string().contains("editedArgs.currency"), "{err}");
        let edited = json!({"orderId": ORDER, "amountCents": paid(), "currency": "USD"});
        demo.resume("t", "r2", &interrupt, approve_with(edited))
            .await
            .expect("the full amount is allowed");
        assert_eq!(demo.refunded().await, (1, paid()));
    });
}

/// The policy, not the schema, is what holds: with the schema opened (as an interrupt
/// stored before it was bounded has it), the engine still refuses a wider edit or
/// another order before the run, naming the rule, and nothing is written.
#[test]
fn the_policy_holds_an_edit_the_schema_lets_through() {
    block_on(async {
        let demo = Demo::new();
        let interrupt = demo.interrupt("t").await;
        open_the_schema(&demo.store, "t").await;

        let wider = json!({"orderId": ORDER, "amountCents": paid() * 10, "currency": "USD"});
        let other_order = json!({"orderId": "B2048", "amountCents": 100, "currency": "USD"});
        for (run, edited, rule) in [
            ("r2", wider, "editedArgs.amountCents: may only decrease"),
            ("r3", other_order, "editedArgs.orderId"),
        ] {
            let err = demo
                .resume("t", run, &interrupt, approve_with(edited))
                .await
                .expect_err("refused by the policy");
            assert_eq!(
                (err.code().name, err.http_status()),
                ("RESUME_PAYLOAD_INVALID", 422)
            );
            assert!(err.to_string().contains(rule), "{err}");
        }
        assert_eq!(demo.refunded().await, (0, 0), "the refund did not execute");
        let account = demo.ledger.account("B2048", T0).await.unwrap();
        assert_eq!(account.refunds, 0, "no refund on another order either");
        let pending = demo.pending("t").await;
        assert_eq!(pending.len(), 1, "still pending");
        assert_eq!(pending[0].id, interrupt.id);
    });
}

/// Rewrites the pending interrupt's schema to the one the demo used before
/// `editedArgs` was bounded (`{"type": "object"}`), as a stored thread would have it.
async fn open_the_schema(store: &Arc<dyn Store>, thread: &str) {
    let item = store
        .get_one(thread, THREAD_KEY, T0)
        .await
        .unwrap()
        .unwrap();
    let mut record: ThreadRecord = serde_json::from_slice(&item.value).unwrap();
    record.pending[0].interrupt.response_schema = Some(std::sync::Arc::new(json!({
        "type": "object",
        "properties": {"approved": {"type": "boolean"}, "editedArgs": {"type": "object"}},
        "required": ["approved"]
    })));
    let value = serde_json::to_vec(&record).unwrap();
    let write = Write::put(
        THREAD_KEY,
        Condition::Version(item.version),
        value,
        item.expires_at_ms,
    );
    store.commit(thread, vec![write], T0).await.unwrap();
}
