//! The refund's approval policy holds in both demo modes, scripted and model-driven
//! (`DEMO_LLM`), because the engine enforces it: with `DEMO_APPROVER_ABOVE_CENTS=0`, the
//! requester cannot approve their own refund (with or without the role), an approver
//! cannot move the refund to another order or raise it, and only then does an
//! approval execute, once. Nothing is written by a refused answer.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use agui_protocol::{Event, Interrupt, Message, ResumeEntry, RunAgentInput};
use async_trait::async_trait;
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::outbound::{Body, Outbound, OutboundError, whole};
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Agent, CoreError, Engine, Principal, RunOptions, Store};
use handoff_demo::llm::{Demo, refund_agent};
use handoff_demo::{DemoAgent, DemoConfig, Ledger};
use handoff_llm::Provider;
use serde_json::{Value, json};

const T0: u64 = 1_764_421_200_000;
const ORDER: &str = "A1024";

/// An OpenAI-compatible model that looks the order up, proposes the full refund, then
/// answers in text.
#[derive(Default)]
struct RefundModel(Mutex<VecDeque<String>>);

impl RefundModel {
    fn new() -> Self {
        let turns = [
            call("c1", "get_order", &json!({"orderId": ORDER})),
            call(
                "c2",
                "refund_order",
                &json!({"orderId": ORDER, "amountCents": 12_800}),
            ),
        ];
        RefundModel(Mutex::new(turns.into_iter().collect()))
    }
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let chunk = json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] });
    format!("data: {chunk}\n\n")
}

fn call(id: &str, name: &str, args: &Value) -> String {
    chunk(
        json!({ "tool_calls": [{ "index": 0, "id": id, "function": { "name": name, "arguments": args.to_string() } }] }),
        None,
    ) + &chunk(json!({}), Some("tool_calls"))
        + "data: [DONE]\n\n"
}

#[async_trait]
impl Outbound for RefundModel {
    async fn send(
        &self,
        _request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError> {
        let body = self.0.lock().unwrap().pop_front().unwrap_or_else(|| {
            chunk(json!({ "content": "Done." }), None)
                + &chunk(json!({}), Some("stop"))
                + "data: [DONE]\n\n"
        });
        Ok(http::Response::new(whole(body.into_bytes())))
    }
}

struct Desk {
    engine: Engine,
    ledger: Ledger,
}

fn config() -> DemoConfig {
    DemoConfig {
        approver_above_cents: Some(0),
        ..DemoConfig::default()
    }
}

fn desk(llm: bool) -> Desk {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(ManualClock::new(T0), SequentialIds::new("d"), NeverSleep);
    let scripted = DemoAgent::new(store.clone(), config());
    let ledger = scripted.ledger().clone();
    let agent: Arc<dyn Agent> = if llm {
        let provider = Provider::OpenAi {
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key: "sk-test".into(),
            model: "test".into(),
        };
        let model = Arc::new(RefundModel::new());
        let agent = refund_agent(ledger.clone(), &config(), runtime.clone(), provider, model);
        Arc::new(Demo::Llm(Box::new(agent)))
    } else {
        Arc::new(Demo::Scripted(scripted))
    };
    let engine = Engine::with_config(agent, store, runtime, Default::default());
    Desk { engine, ledger }
}

fn alice() -> Principal {
    Principal::new("acme", "alice")
}
fn bob() -> Principal {
    Principal::new("acme", "bob").with_roles(["approver"])
}

impl Desk {
    async fn run(&self, who: Principal, input: RunAgentInput) -> Result<Vec<Event>, CoreError> {
        let options = RunOptions {
            principal: who,
            ..RunOptions::default()
        };
        Ok(self.engine.start(input, options).await?.collect().await)
    }

    async fn ask(&self, thread: &str) -> Interrupt {
        let ask = RunAgentInput::new(
            thread,
            "r-ask",
            vec![Message::user("m1", format!("Refund order {ORDER}"))],
        );
        let events = self.run(alice(), ask).await.expect("the request runs");
        let view = self.engine.thread(&alice(), thread).await.unwrap().unwrap();
        assert_eq!(view.pending_interrupts.len(), 1, "{events:?}");
        view.pending_interrupts[0].clone()
    }

    async fn answer(
        &self,
        who: Principal,
        thread: &str,
        run: &str,
        entry: ResumeEntry,
    ) -> Result<Vec<Event>, CoreError> {
        let input = RunAgentInput::new(thread, run, Vec::new()).with_resume(vec![entry]);
        self.run(who, input).await
    }

    /// bob's answer `payload` to `interrupt` on thread `t`, refused as an edit the policy
    /// does not allow.
    async fn refused_edit(&self, run: &str, interrupt: &Interrupt, payload: Value) -> CoreError {
        let err = self
            .answer(bob(), "t", run, approve(interrupt, payload))
            .await
            .expect_err("the edit is refused");
        assert_eq!(
            (err.code().name, err.http_status()),
            ("RESUME_PAYLOAD_INVALID", 422),
            "{err}"
        );
        err
    }

    async fn refunds(&self, order: &str) -> u64 {
        self.ledger.account(order, T0).await.unwrap().refunds
    }
}

fn approve(interrupt: &Interrupt, payload: Value) -> ResumeEntry {
    ResumeEntry::resolved(interrupt.id.clone(), payload)
}

fn refused_then_approved(llm: bool) {
    block_on(async {
        let desk = desk(llm);
        let interrupt = desk.ask("t").await;
        let yes = json!({"approved": true});

        // The requester, without the role and with it.
        for (who, run) in [
            (alice(), "r-self"),
            (alice().with_roles(["approver"]), "r-self-role"),
        ] {
            let err = desk
                .answer(who, "t", run, approve(&interrupt, yes.clone()))
                .await
                .expect_err("the requester may not approve");
            assert_eq!(
                (err.code().name, err.http_status()),
                ("FORBIDDEN", 403),
                "{err}"
            );
        }
        // Nor deny: a denial is a resolved answer; the requester withdraws by cancelling.
        let err = desk
            .answer(
                alice().with_roles(["approver"]),
                "t",
                "r-deny",
                approve(&interrupt, json!({"approved": false})),
            )
            .await
            .expect_err("the requester may not deny either");
        assert_eq!(err.code().name, "FORBIDDEN");

        // An approver moving the refund to another order, for 99,999,999 cents.
        let edited =
            json!({"approved": true, "editedArgs": {"orderId": "Z9", "amountCents": 99_999_999}});
        let err = desk.refused_edit("r-edit", &interrupt, edited).await;
        assert!(
            err.to_string().contains("editedArgs"),
            "names the rule: {err}"
        );
        assert_eq!(
            (desk.refunds(ORDER).await, desk.refunds("Z9").await),
            (0, 0)
        );
        let view = desk.engine.thread(&alice(), "t").await.unwrap().unwrap();
        assert_eq!(view.pending_interrupts.len(), 1, "nothing was written");
        assert!(view.answers.is_empty());

        // The approver's plain approval executes, once.
        desk.answer(bob(), "t", "r-ok", approve(&interrupt, yes.clone()))
            .await
            .expect("the approver approves");
        assert_eq!(desk.refunds(ORDER).await, 1);
        let view = desk.engine.thread(&alice(), "t").await.unwrap().unwrap();
        assert_eq!(view.answers[0].by, "bob");
    });
}

#[test]
fn scripted_mode_enforces_the_refund_policy() {
    refused_then_approved(false);
}

#[test]
fn llm_mode_enforces_the_same_refund_policy() {
    refused_then_approved(true);
}

fn the_requester_may_cancel(llm: bool) {
    block_on(async {
        let desk = desk(llm);
        let interrupt = desk.ask("t").await;
        desk.answer(
            alice(),
            "t",
            "r-cancel",
            ResumeEntry::cancelled(interrupt.id.clone()),
        )
        .await
        .expect("the requester withdraws the request");
        assert_eq!(desk.refunds(ORDER).await, 0);
        let view = desk.engine.thread(&alice(), "t").await.unwrap().unwrap();
        assert!(view.pending_interrupts.is_empty());
    });
}

#[test]
fn the_requester_may_cancel_in_both_modes() {
    the_requester_may_cancel(false);
    the_requester_may_cancel(true);
}

#[test]
fn an_approver_may_lower_the_amount_of_the_same_order() {
    for llm in [false, true] {
        block_on(async {
            let desk = desk(llm);
            let interrupt = desk.ask("t").await;
            let mut args = json!({"orderId": ORDER, "amountCents": 5_000});
            if !llm {
                args["currency"] = json!("USD");
            }
            let edited = json!({"approved": true, "editedArgs": args});
            desk.answer(bob(), "t", "r-lower", approve(&interrupt, edited))
                .await
                .expect("a lower amount is allowed");
            let account = desk.ledger.account(ORDER, T0).await.unwrap();
            assert_eq!(
                (account.refunds, account.refunded_cents),
                (1, 5_000),
                "llm: {llm}"
            );
        });
    }
}

/// The scripted refund's `responseSchema` only types an answer; how far an edit may go is
/// the policy's alone (the schema stopped bounding each order's amount, so one compiled
/// validator serves every refund). Raising the amount of the same order, or changing its
/// currency, is still refused with 422 and nothing written.
#[test]
fn the_policy_alone_bounds_edits_and_the_schema_is_the_same_for_every_order() {
    block_on(async {
        let desk = desk(false);
        let interrupt = desk.ask("t").await;
        let other = RunAgentInput::new(
            "t2",
            "r-ask",
            vec![Message::user("m1", "Refund order C2048")],
        );
        desk.run(alice(), other).await.expect("the request runs");
        let view = desk.engine.thread(&alice(), "t2").await.unwrap().unwrap();
        assert_eq!(
            view.pending_interrupts[0].response_schema, interrupt.response_schema,
            "one schema for refunds of any order"
        );

        for (edit, run) in [
            (
                json!({"orderId": ORDER, "amountCents": 12_801, "currency": "USD"}),
                "r-up",
            ),
            (
                json!({"orderId": ORDER, "amountCents": 100, "currency": "EUR"}),
                "r-eur",
            ),
        ] {
            let answer = json!({"approved": true, "editedArgs": edit});
            desk.refused_edit(run, &interrupt, answer).await;
        }
        assert_eq!(desk.refunds(ORDER).await, 0);
        let view = desk.engine.thread(&alice(), "t").await.unwrap().unwrap();
        assert_eq!(view.pending_interrupts.len(), 1, "nothing was written");
    });
}
