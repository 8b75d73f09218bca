//! `HANDOFF_TEST_FAULT=error-after-refund`: the refund moves the money, then fails as a
//! payment API's timeout after sending does. The effect stays in doubt: the answer stays
//! pinned (a denial is 409 `ANSWER_IN_DOUBT`), the same approval re-drives the refund
//! under the same idempotency key, and the ledger, honouring the key, pays once.

use std::sync::Arc;

use agui_protocol::{Event, Message, ResumeEntry, RunAgentInput};
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{CoreError, Engine, Principal, RunOptions, Store};
use handoff_demo::{DemoAgent, DemoConfig, Ledger, Order};
use serde_json::json;

const ORDER: &str = "A1024";

async fn run(engine: &Engine, input: RunAgentInput) -> Result<Vec<Event>, CoreError> {
    Ok(engine
        .start(input, RunOptions::default())
        .await?
        .collect()
        .await)
}

/// A demo engine over a memory store and its ledger.
fn demo(config: DemoConfig) -> (Engine, Ledger) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(ManualClock::new(1_000), SequentialIds::new("f"), NeverSleep);
    let agent = DemoAgent::new(store.clone(), config);
    let ledger = agent.ledger().clone();
    (Engine::new(agent, store, runtime), ledger)
}

/// Asks for a refund of ORDER on thread `t`; the id of its approval interrupt.
async fn ask(engine: &Engine) -> agui_protocol::InterruptId {
    let ask = RunAgentInput::new(
        "t",
        "r1",
        vec![Message::user("m1", format!("Refund order {ORDER}"))],
    );
    run(engine, ask).await.unwrap();
    let view = engine
        .thread(&Principal::anonymous(), "t")
        .await
        .unwrap()
        .unwrap();
    view.pending_interrupts[0].id.clone()
}

#[test]
fn a_refund_that_fails_after_paying_is_re_driven_under_its_key_and_pays_once() {
    block_on(async {
        let (engine, ledger) = demo(DemoConfig {
            error_after_refund: true,
            ..DemoConfig::default()
        });
        let id = ask(&engine).await;
        let answer = |run_id: &str, approved: bool| {
            let entry = ResumeEntry::resolved(id.clone(), json!({"approved": approved}));
            RunAgentInput::new("t", run_id, Vec::new()).with_resume(vec![entry])
        };

        let events = run(&engine, answer("r2", true)).await.unwrap();
        assert!(
            matches!(events.last(), Some(Event::RunError(_))),
            "{events:?}"
        );
        let account = ledger.account(ORDER, 1_000).await.unwrap();
        assert_eq!(account.refunds, 1, "the money moved");

        let err = run(&engine, answer("r3", false)).await.unwrap_err();
        assert_eq!(
            (err.code().name, err.http_status()),
            ("ANSWER_IN_DOUBT", 409)
        );

        // The order has nothing left to refund, yet the re-drive is not refused.
        let events = run(&engine, answer("r4", true)).await.unwrap();
        assert!(
            matches!(events.last(), Some(Event::RunFinished(_))),
            "{events:?}"
        );
        let account = ledger.account(ORDER, 1_000).await.unwrap();
        assert_eq!(
            (account.refunds, account.refunded_cents),
            (1, Order::lookup(ORDER).amount_cents)
        );
        assert_eq!(account.idempotency_keys.len(), 2, "called twice");
        assert_eq!(
            account.idempotency_keys[0], account.idempotency_keys[1],
            "under one key"
        );
        let view = engine
            .thread(&Principal::anonymous(), "t")
            .await
            .unwrap()
            .unwrap();
        assert!(view.pending_interrupts.is_empty());
    });
}

#[test]
fn a_refund_beyond_what_was_paid_is_refused_before_the_run() {
    block_on(async {
        let (engine, ledger) = demo(DemoConfig::default());
        let paid = Order::lookup(ORDER).amount_cents;
        ledger
            .refund(ORDER, paid - 100, "elsewhere", 1_000)
            .await
            .unwrap();
        let id = ask(&engine).await;
        let full = ResumeEntry::resolved(id.clone(), json!({"approved": true}));
        let err = run(
            &engine,
            RunAgentInput::new("t", "r2", Vec::new()).with_resume(vec![full]),
        )
        .await
        .unwrap_err();
        assert_eq!(
            (err.code().name, err.http_status()),
            ("RESUME_PAYLOAD_INVALID", 422)
        );
        assert!(err.to_string().contains("left to refund"), "{err}");
        let lower = json!({"approved": true, "editedArgs": {"orderId": ORDER, "amountCents": 100, "currency": "USD"}});
        let entry = ResumeEntry::resolved(id, lower);
        run(
            &engine,
            RunAgentInput::new("t", "r3", Vec::new()).with_resume(vec![entry]),
        )
        .await
        .expect("what is left may be refunded");
        assert_eq!(ledger.refundable(ORDER, 1_000).await.unwrap(), 0);
    });
}
