//! The approval policy holds on every route that can answer an interrupt, because each
//! goes through the engine's claim: `POST /agent`, CopilotKit's run route and its
//! single-route envelope, and the Superagent resume. The demo's refund needs role
//! `approver` and someone other than the requester (`DEMO_APPROVER_ABOVE_CENTS=0`), and
//! an edit may only lower the amount of the same order. Seeing the thread to answer does
//! not let the approver fork it.

#[path = "support/named.rs"]
mod named;
mod support;

use std::sync::Arc;

use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, Store};
use handoff_demo::{DemoAgent, DemoConfig, Ledger};
use handoff_http::{HttpConfig, Routes};
use http::StatusCode;
use named::Named;
use serde_json::{Value, json};
use support::code;

fn app() -> (axum::Router, Ledger) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(
        ManualClock::new(1_764_421_200_000),
        SequentialIds::new("p"),
        NeverSleep,
    );
    let config = DemoConfig {
        approver_above_cents: Some(0),
        ..DemoConfig::default()
    };
    let agent = DemoAgent::new(store.clone(), config);
    let ledger = agent.ledger().clone();
    let engine = Engine::new(agent, store, runtime);
    let app = Routes::new(engine, HttpConfig::default())
        .authenticator(Arc::new(Named))
        .build();
    (app, ledger)
}

async fn post(app: &axum::Router, who: &str, uri: &str, body: Value) -> (StatusCode, String) {
    let headers = [("host", "localhost"), ("authorization", who)];
    support::send(app, "POST", uri, &headers, body.to_string()).await
}

/// Alice asks for a refund of A1024 on `thread`: the interrupt's id.
async fn ask(app: &axum::Router, thread: &str) -> String {
    let input = json!({"threadId": thread, "runId": format!("{thread}-ask"), "messages": [
        {"id": format!("{thread}-m1"), "role": "user", "content": "Refund order A1024"}]});
    let (status, body) = post(app, "alice", "/agent", input).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let finished = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .next_back()
        .unwrap();
    finished["outcome"]["interrupts"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The resume `payload` for `interrupt`, as each route carries it.
fn via(route: &str, thread: &str, run: &str, interrupt: &str, payload: Value) -> (String, Value) {
    let input = json!({"threadId": thread, "runId": run, "messages": [],
        "resume": [{"interruptId": interrupt, "status": "resolved", "payload": payload}]});
    match route {
        "agent" => ("/agent".to_owned(), input),
        "copilotkit" => ("/copilotkit/agent/refund-demo/run".to_owned(), input),
        "envelope" => (
            "/copilotkit".to_owned(),
            json!({"method": "agent/run", "params": {"agentId": "refund-demo"}, "body": input}),
        ),
        "superagent" => (
            "/api/v1/chat/resume".to_owned(),
            json!({"session_id": thread, "input": payload}),
        ),
        other => panic!("no route {other}"),
    }
}

#[tokio::test]
async fn every_answering_route_enforces_the_stored_policy() {
    let (app, ledger) = app();
    for route in ["agent", "copilotkit", "envelope", "superagent"] {
        let thread = format!("t-{route}");
        let interrupt = ask(&app, &thread).await;
        let approve = json!({"approved": true});
        let (uri, body) = via(
            route,
            &thread,
            &format!("{thread}-self"),
            &interrupt,
            approve.clone(),
        );
        let (status, text) = post(&app, "alice", &uri, body).await;
        assert_eq!(
            (status, code(&text).as_str()),
            (StatusCode::FORBIDDEN, "FORBIDDEN"),
            "{route}: {text}"
        );

        let widened = json!({"approved": true, "editedArgs": {"orderId": "Z9", "amountCents": 99_999_999, "currency": "USD"}});
        let (uri, body) = via(
            route,
            &thread,
            &format!("{thread}-wide"),
            &interrupt,
            widened,
        );
        let (status, text) = post(&app, "bob", &uri, body).await;
        assert_eq!(
            (status, code(&text).as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, "RESUME_PAYLOAD_INVALID"),
            "{route}: {text}"
        );
        let account = ledger.account("A1024", 0).await.unwrap();
        assert_eq!(account.refunds, 0, "{route}: nothing refunded yet");
    }
    // The approver's own approval goes through (once), on any of them.
    let interrupt = ask(&app, "t-ok").await;
    let (uri, body) = via(
        "copilotkit",
        "t-ok",
        "t-ok-yes",
        &interrupt,
        json!({"approved": true}),
    );
    let (status, text) = post(&app, "bob", &uri, body).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(ledger.account("A1024", 0).await.unwrap().refunds, 1);
}

/// Before, the approver's read access (lent while the interrupt is open) let them fork the
/// owner's thread and keep the copy after answering.
#[tokio::test]
async fn the_approver_may_not_fork_the_thread_they_approve_on() {
    let (app, _) = app();
    ask(&app, "t-fork").await;
    let fork = json!({"threadId": "t-copy"});
    let (status, text) = post(&app, "bob", "/threads/t-fork/fork", fork.clone()).await;
    assert_eq!(
        (status, code(&text).as_str()),
        (StatusCode::FORBIDDEN, "FORBIDDEN"),
        "{text}"
    );
    let headers = [("host", "localhost"), ("authorization", "bob")];
    let (status, text) =
        support::send(&app, "GET", "/threads/t-copy", &headers, String::new()).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing written: {text}");
    let (status, text) = post(&app, "alice", "/threads/t-fork/fork", fork).await;
    assert_eq!(status, StatusCode::CREATED, "the owner may: {text}");
}
