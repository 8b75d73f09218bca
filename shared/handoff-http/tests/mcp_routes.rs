//! `POST /mcp` (issue 52): the JSON-RPC envelope, version negotiation, the session
//! revisions' path, and the `requestState` rules that no peer client exercises (expiry, a
//! retry without answers, cancel). The approval policy over MCP is in `approval_paths`.

mod support;

use std::sync::Arc;

use axum::body::Body;
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, Store};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_http::{HttpConfig, Routes};
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use support::{code, send};
use tower::ServiceExt;

const ORDER: &str = "A1024";

struct Host {
    app: axum::Router,
    clock: Arc<ManualClock>,
    refunds: Box<dyn Fn() -> u64>,
}

fn host() -> Host {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let clock = Arc::new(ManualClock::new(1_764_421_200_000));
    let runtime = Runtime::new(clock.clone(), SequentialIds::new("m"), NeverSleep);
    let agent = DemoAgent::new(store.clone(), DemoConfig::default());
    let ledger = agent.ledger().clone();
    let app = Routes::new(Engine::new(agent, store, runtime), HttpConfig::default()).build();
    let refunds = Box::new(move || {
        futures::executor::block_on(ledger.account(ORDER, 0))
            .unwrap()
            .refunds
    });
    Host {
        app,
        clock,
        refunds,
    }
}

/// One message to `/mcp`: the status, the `Mcp-Session-Id` header and the body.
async fn post(
    app: &axum::Router,
    body: Value,
    headers: &[(&str, &str)],
) -> (StatusCode, Option<String>, String) {
    let mut request = Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::from(body.to_string())).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, session, String::from_utf8(bytes.to_vec()).unwrap())
}

async fn rpc(app: &axum::Router, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let (status, _, text) = post(app, body, &[]).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let reply: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(reply["id"], 7, "{reply}");
    reply
}

fn stateless(mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    params
}

fn refund() -> Value {
    json!({"name": "refund-demo", "arguments": {"message": format!("Refund order {ORDER}")}})
}

#[tokio::test]
async fn initialize_negotiates_a_session_revision_and_issues_a_session_id() {
    let host = host();
    for (asked, agreed) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let (status, session, text) = post(&host.app, body, &[]).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        let result = &serde_json::from_str::<Value>(&text).unwrap()["result"];
        assert_eq!(result["protocolVersion"], agreed, "{result}");
        assert_eq!(result["serverInfo"]["name"], "refund-demo");
        assert_eq!(
            result["capabilities"]["tools"],
            json!({"listChanged": false})
        );
        assert_eq!(result["resultType"], "complete");
        assert!(session.is_some_and(|s| !s.is_empty()), "an Mcp-Session-Id");
    }
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, session, text) = post(&host.app, note, &[]).await;
    assert_eq!(
        (status, session, text.as_str()),
        (StatusCode::ACCEPTED, None, "")
    );
}

#[tokio::test]
async fn bad_envelopes_methods_versions_and_arguments_are_json_rpc_errors() {
    let host = host();
    let (_, text) = send(
        &host.app,
        "POST",
        "/mcp",
        &[("host", "localhost")],
        "{nope".into(),
    )
    .await;
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["error"]["code"],
        -32700
    );
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]);
    let (_, _, text) = post(&host.app, batch, &[]).await;
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["error"]["code"],
        -32600
    );
    assert_eq!(
        rpc(&host.app, "resources/list", json!({})).await["error"]["code"],
        -32601
    );
    let old = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (_, _, text) = post(&host.app, old, &[("mcp-protocol-version", "2024-01-01")]).await;
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["error"]["code"],
        -32022
    );
    let unknown = rpc(
        &host.app,
        "tools/call",
        json!({"name": "other", "arguments": {}}),
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let empty = json!({"name": "refund-demo", "arguments": {}});
    assert_eq!(
        rpc(&host.app, "tools/call", empty).await["error"]["code"],
        -32602
    );
    let extra = json!({"name": "refund-demo", "arguments": {"message": "hi", "x": 1}});
    assert_eq!(
        rpc(&host.app, "tools/call", extra).await["error"]["code"],
        -32602
    );
    // No GET stream: server-to-client messages are never sent outside a call.
    let (status, body) = send(
        &host.app,
        "GET",
        "/mcp",
        &[("host", "localhost")],
        String::new(),
    )
    .await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED")
    );
    assert_eq!((host.refunds)(), 0);
}

#[tokio::test]
async fn a_session_client_is_told_the_run_waits_and_polls_its_thread_without_a_new_turn() {
    let host = host();
    let waiting = rpc(&host.app, "tools/call", refund()).await["result"].clone();
    let info = &waiting["structuredContent"];
    assert_eq!(info["status"], "input_required", "{waiting}");
    let thread = info["threadId"].as_str().unwrap();
    assert_eq!(
        info["consoleUrl"],
        format!("http://localhost/?thread={thread}")
    );
    assert!(
        waiting["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("waits for an approver")
    );
    assert!(
        waiting.get("inputRequests").is_none(),
        "no MRTR on a session revision"
    );
    let poll = json!({"name": "refund-demo", "arguments": {"threadId": thread}});
    let again = rpc(&host.app, "tools/call", poll).await["result"].clone();
    assert_eq!(
        again["structuredContent"]["runId"], info["runId"],
        "{again}"
    );
    assert_eq!((host.refunds)(), 0);
}

#[tokio::test]
async fn an_expired_state_runs_nothing_and_a_retry_without_answers_is_asked_again() {
    let host = host();
    let asked = rpc(&host.app, "tools/call", stateless(refund())).await["result"].clone();
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let key = asked["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let state = asked["requestState"].clone();

    let mut bare = stateless(refund());
    bare["requestState"] = state.clone();
    let again = rpc(&host.app, "tools/call", bare).await["result"].clone();
    assert_eq!(again["resultType"], "input_required", "{again}");
    assert!(
        again["inputRequests"].get(&key).is_some(),
        "asked again: {again}"
    );

    host.clock.advance(301_000);
    let mut late = stateless(refund());
    late["requestState"] = state;
    late["inputResponses"] = json!({key: {"action": "accept", "content": {"approved": true}}});
    let refused = rpc(&host.app, "tools/call", late).await;
    assert_eq!(
        refused["error"]["data"]["code"], "REQUEST_STATE_INVALID",
        "{refused}"
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("expired")
    );
    assert_eq!((host.refunds)(), 0, "an expired state runs nothing");
}

#[tokio::test]
async fn cancel_cancels_the_interrupt_and_refunds_nothing() {
    let host = host();
    let asked = rpc(&host.app, "tools/call", stateless(refund())).await["result"].clone();
    let key = asked["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut retry = stateless(refund());
    retry["requestState"] = asked["requestState"].clone();
    retry["inputResponses"] = json!({key.clone(): {"action": "cancel"}});
    let done = rpc(&host.app, "tools/call", retry).await["result"].clone();
    assert_eq!(done["resultType"], "complete", "{done}");
    let thread = done["structuredContent"]["threadId"].as_str().unwrap();
    let (_, body) = send(
        &host.app,
        "GET",
        &format!("/threads/{thread}"),
        &[("host", "localhost")],
        String::new(),
    )
    .await;
    let answers = &serde_json::from_str::<Value>(&body).unwrap()["answers"];
    assert_eq!(answers[0]["interruptId"], key.as_str(), "{answers}");
    assert_eq!(answers[0]["status"], "cancelled", "{answers}");
    assert_eq!((host.refunds)(), 0);
}

#[tokio::test]
async fn a_call_asking_for_progress_streams_notifications_then_its_response() {
    let host = host();
    let mut params = refund();
    params["_meta"] = json!({"progressToken": "p-1"});
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params});
    let sse = [("accept", "application/json, text/event-stream")];
    let (status, _, text) = post(&host.app, body.clone(), &sse).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let frames: Vec<Value> = text
        .split("\n\n")
        .filter_map(|f| f.strip_prefix("data: "))
        .map(|f| serde_json::from_str(f).unwrap())
        .collect();
    let (last, notes) = frames.split_last().expect("frames");
    assert_eq!(last["id"], 9, "the response comes last: {text}");
    assert_eq!(
        last["result"]["structuredContent"]["status"],
        "input_required"
    );
    assert!(!notes.is_empty(), "progress before the response: {text}");
    for (n, note) in notes.iter().enumerate() {
        assert_eq!(note["method"], "notifications/progress", "{note}");
        assert_eq!(note["params"]["progressToken"], "p-1");
        assert_eq!(note["params"]["progress"], n as u64 + 1);
    }
    // A client that takes JSON only gets JSON.
    let (_, _, text) = post(&host.app, body, &[("accept", "application/json")]).await;
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["id"],
        9,
        "{text}"
    );
}
