//! The session revisions' server-initiated elicitation (issue 52), in what the SDK client
//! flows in tests/node do not reach: a client that answers the request with a JSON-RPC
//! error (the call says the run waits, at once), `cancel` (nothing refunded, the answer
//! recorded as cancelled), a response to no ask, and a client that declared no elicitation
//! (never asked). Real sleeps (the call's wait polls the store) on a clock that stands
//! still, so a wait ends only on what it reads; the memory store.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use futures::FutureExt;
use futures::future::BoxFuture;
use handoff_core::runtime::{ManualClock, Runtime, SequentialIds, Sleep};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, Store};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_http::{HttpConfig, Routes};
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

const ORDER: &str = "A1024";

struct TokioSleep;
impl Sleep for TokioSleep {
    fn sleep(&self, millis: u64) -> BoxFuture<'static, ()> {
        tokio::time::sleep(Duration::from_millis(millis)).boxed()
    }
}

struct Host {
    app: axum::Router,
    refunds: Box<dyn Fn() -> u64>,
}

fn host() -> Host {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(
        ManualClock::new(1_764_421_200_000),
        SequentialIds::new("e"),
        TokioSleep,
    );
    let agent = DemoAgent::new(store.clone(), DemoConfig::default());
    let ledger = agent.ledger().clone();
    let config = HttpConfig {
        mcp_elicit_wait_ms: 60_000,
        ..HttpConfig::default()
    };
    let app = Routes::new(Engine::new(agent, store, runtime), config).build();
    let refunds = Box::new(move || {
        futures::executor::block_on(ledger.account(ORDER, 0))
            .unwrap()
            .refunds
    });
    Host { app, refunds }
}

async fn post(app: &axum::Router, body: Value, session: Option<&str>) -> http::Response<Body> {
    let mut request = Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let request = request.body(Body::from(body.to_string())).unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    response.map(Body::new)
}

/// `initialize` declaring `capabilities`: the session id.
async fn initialize(app: &axum::Router, capabilities: Value) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "t", "version": "1"}}});
    let response = post(app, body, None).await;
    let session = response.headers()["mcp-session-id"].to_str().unwrap();
    session.to_owned()
}

/// The next JSON-RPC message of an SSE body.
async fn next_message(body: &mut Body, buffer: &mut String) -> Value {
    loop {
        if let Some(end) = buffer.find("\n\n") {
            let frame: String = buffer.drain(..end + 2).collect();
            let data: String = frame
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            if !data.is_empty() {
                return serde_json::from_str(&data).unwrap();
            }
            continue;
        }
        let frame = body.frame().await.expect("the stream ended early").unwrap();
        if let Ok(bytes) = frame.into_data() {
            buffer.push_str(std::str::from_utf8(&bytes).unwrap());
        }
    }
}

/// A refund call on `session`'s stream: the stream, and the elicitation it sent.
async fn ask_refund(app: &axum::Router, session: &str) -> (Body, String, Value) {
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "refund-demo", "arguments": {"message": format!("Refund order {ORDER}")}}});
    let response = post(app, call, Some(session)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let mut buffer = String::new();
    let request = next_message(&mut body, &mut buffer).await;
    assert_eq!(request["method"], "elicitation/create", "{request}");
    (body, buffer, request)
}

/// The call's final message.
async fn result_of(mut body: Body, mut buffer: String) -> Value {
    loop {
        let message = next_message(&mut body, &mut buffer).await;
        if message["id"] == 2 {
            return message["result"].clone();
        }
    }
}

#[tokio::test]
async fn a_client_error_for_the_request_ends_the_wait_at_once() {
    let host = host();
    let session = initialize(&host.app, json!({"elicitation": {}})).await;
    let (body, buffer, request) = ask_refund(&host.app, &session).await;
    let error = json!({"jsonrpc": "2.0", "id": request["id"],
        "error": {"code": -32600, "message": "the user closed the dialog"}});
    assert_eq!(
        post(&host.app, error, Some(&session)).await.status(),
        StatusCode::ACCEPTED
    );
    let waited = tokio::time::timeout(Duration::from_secs(10), result_of(body, buffer)).await;
    let result = waited.expect("the call answered on the error, not at its wait's end");
    assert_eq!(result["structuredContent"]["status"], "input_required");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("waits for an approver"), "{text}");
    assert_eq!((host.refunds)(), 0);
}

#[tokio::test]
async fn cancel_refunds_nothing_and_a_response_to_no_ask_changes_nothing() {
    let host = host();
    let session = initialize(&host.app, json!({"elicitation": {"form": {}}})).await;
    let (body, buffer, request) = ask_refund(&host.app, &session).await;
    assert_eq!(request["params"]["mode"], "form");
    for id in [
        json!("nobody/0"),
        json!(17),
        json!(format!("{}9", request["id"].as_str().unwrap())),
    ] {
        let stray = json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept",
            "content": {"approved": true}}});
        assert_eq!(
            post(&host.app, stray, Some(&session)).await.status(),
            StatusCode::ACCEPTED
        );
    }
    let cancel = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "cancel"}});
    post(&host.app, cancel, Some(&session)).await;
    let result = result_of(body, buffer).await;
    assert_ne!(
        result["structuredContent"]["status"], "input_required",
        "{result}"
    );
    assert_eq!((host.refunds)(), 0, "cancelled: nothing refunded");
}

#[tokio::test]
async fn a_client_without_elicitation_is_told_the_run_waits() {
    let host = host();
    let session = initialize(&host.app, json!({})).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "refund-demo", "arguments": {"message": format!("Refund order {ORDER}")}}});
    let response = post(&host.app, call, Some(&session)).await;
    let content_type = response.headers()["content-type"].to_str().unwrap();
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let reply: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        reply["result"]["structuredContent"]["status"],
        "input_required"
    );
    // Another deployment's (or a forged) session id declares nothing either.
    let forged = "7b226e223a2278222c2266223a747275657d.00000000000000000000000000000000";
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "refund-demo", "arguments": {"message": format!("Refund order {ORDER}")}}});
    let response = post(&host.app, call, Some(forged)).await;
    let content_type = response.headers()["content-type"].to_str().unwrap();
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
}
