//! The CopilotKit runtime routes through `tower::ServiceExt::oneshot`: info, several
//! agents, the base path, the single-route envelope and `connect`'s rehydration.

use std::sync::Arc;

use agui_protocol::verify::{VerifyOptions, verify_sse};
use axum::body::Body;
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, Store};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_http::{HttpConfig, Routes};
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

fn engine(prefix: &str) -> Engine {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(
        ManualClock::new(1_764_421_200_000),
        SequentialIds::new(prefix),
        NeverSleep,
    );
    Engine::new(
        DemoAgent::new(store.clone(), DemoConfig::default()),
        store,
        runtime,
    )
}

/// The demo as its own name plus a second demo engine (own store) as `billing`.
fn app(config: HttpConfig) -> axum::Router {
    Routes::new(engine("h"), config)
        .description("Refunds, with approval")
        .agent("billing", engine("b"), Some("Billing questions".to_owned()))
        .build()
}

async fn send(
    app: &axum::Router,
    method: &str,
    uri: &str,
    body: Option<Value>,
) -> (StatusCode, String) {
    let mut request = Request::builder().method(method).uri(uri);
    if body.is_some() {
        request = request.header("content-type", "application/json");
    }
    let body = body.map(|b| Body::from(b.to_string())).unwrap_or_default();
    let response = app
        .clone()
        .oneshot(request.body(body).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

fn json_of(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

fn events(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter_map(|frame| frame.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(json_of)
        .collect()
}

fn refund(thread: &str, run: &str) -> Value {
    json!({"threadId": thread, "runId": run,
           "messages": [{"id": "m1", "role": "user", "content": "Refund order A1024"}]})
}

#[tokio::test]
async fn info_lists_every_agent_in_sse_mode_under_the_configured_base() {
    let app = app(HttpConfig {
        copilotkit_base: "/api/ck/".to_owned(),
        ..HttpConfig::default()
    });
    let (status, body) = send(&app, "GET", "/api/ck/info", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let info = json_of(&body);
    assert_eq!(info["mode"], "sse");
    assert!(info["version"].is_string());
    let agents = info["agents"].as_object().unwrap();
    assert_eq!(
        agents.keys().collect::<Vec<_>>(),
        ["billing", "refund-demo"]
    );
    assert_eq!(agents["refund-demo"]["name"], "refund-demo");
    assert_eq!(
        agents["refund-demo"]["description"],
        "Refunds, with approval"
    );
    assert_eq!(agents["billing"]["description"], "Billing questions");
    assert_eq!(
        agents["billing"]["capabilities"]["humanInTheLoop"]["supported"],
        true
    );

    let (status, envelope) = send(&app, "POST", "/api/ck", Some(json!({"method": "info"}))).await;
    assert_eq!(status, StatusCode::OK, "{envelope}");
    assert_eq!(json_of(&envelope), info);
    let (status, _) = send(&app, "POST", "/api/ck/", Some(json!({"method": "info"}))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = send(&app, "GET", "/copilotkit/info", None).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "only the configured base is served"
    );
}

#[tokio::test]
async fn each_agent_runs_on_its_own_engine_and_unknown_ones_are_404() {
    let app = app(HttpConfig::default());
    let (status, body) = send(
        &app,
        "POST",
        "/copilotkit/agent/billing/run",
        Some(refund("t1", "r1")),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    verify_sse(
        body.as_bytes(),
        VerifyOptions::strict().with_ids("t1", "r1"),
    )
    .unwrap();
    // The thread lives in billing's store: the primary engine has never seen it.
    let (status, _) = send(&app, "GET", "/threads/t1", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let connect = json!({"threadId": "t1", "runId": "c1", "messages": []});
    let (_, primary) = send(
        &app,
        "POST",
        "/copilotkit/agent/refund-demo/connect",
        Some(connect.clone()),
    )
    .await;
    assert!(events(&primary).is_empty(), "{primary}");
    let (_, billing) = send(
        &app,
        "POST",
        "/copilotkit/agent/billing/connect",
        Some(connect),
    )
    .await;
    assert_eq!(events(&billing).len(), 4, "{billing}");

    for (method, uri, body) in [
        (
            "POST",
            "/copilotkit/agent/nope/run",
            Some(refund("t2", "r2")),
        ),
        (
            "POST",
            "/copilotkit/agent/nope/connect",
            Some(refund("t2", "r2")),
        ),
        ("POST", "/copilotkit/agent/nope/stop/t2", None),
        (
            "POST",
            "/copilotkit",
            Some(
                json!({"method": "agent/connect", "params": {"agentId": "nope"}, "body": refund("t2", "r2")}),
            ),
        ),
    ] {
        let (status, body) = send(&app, method, uri, body).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{uri}: {body}");
        let error = json_of(&body);
        assert_eq!(error["code"], "AGENT_NOT_FOUND", "{uri}");
        assert!(error["message"].as_str().unwrap().contains("nope"));
    }
}

#[tokio::test]
async fn connect_rehydrates_an_interrupted_thread_as_one_valid_run() {
    let app = app(HttpConfig::default());
    let (_, run) = send(
        &app,
        "POST",
        "/copilotkit/agent/refund-demo/run",
        Some(refund("t1", "r1")),
    )
    .await;
    let interrupt = events(&run).last().unwrap()["outcome"]["interrupts"][0].clone();
    assert!(interrupt["id"].is_string(), "{run}");

    let envelope = json!({"method": "agent/connect", "params": {"agentId": "refund-demo"},
                          "body": {"threadId": "t1", "runId": "c1", "messages": []}});
    let (status, body) = send(&app, "POST", "/copilotkit", Some(envelope)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!body.contains('\r'), "LF-only frames");
    // One run, under the interrupted run's id, valid by the strict AG-UI rules.
    verify_sse(
        body.as_bytes(),
        VerifyOptions::strict().with_ids("t1", "r1"),
    )
    .unwrap();
    let events = events(&body);
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "RUN_STARTED",
            "STATE_SNAPSHOT",
            "MESSAGES_SNAPSHOT",
            "RUN_FINISHED"
        ]
    );
    assert!(
        events.iter().all(|e| e["timestamp"].is_u64()),
        "integer ms timestamps"
    );
    assert_eq!(events[1]["snapshot"]["order"]["orderId"], "A1024");
    assert_eq!(events[2]["messages"][0]["content"], "Refund order A1024");
    assert_eq!(events[3]["outcome"]["type"], "interrupt");
    assert_eq!(
        events[3]["outcome"]["interrupts"][0], interrupt,
        "the pending interrupt, as asked"
    );

    // Answered: connect shows a plain finished run, nothing pending.
    let mut resume = json!({"threadId": "t1", "runId": "r2", "messages": [],
        "resume": [{"interruptId": interrupt["id"], "status": "cancelled"}]});
    resume["messages"] = events[2]["messages"].clone();
    let (status, body) = send(
        &app,
        "POST",
        "/copilotkit/agent/refund-demo/run",
        Some(resume),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let connect = json!({"threadId": "t1", "runId": "c2", "messages": []});
    let (_, body) = send(
        &app,
        "POST",
        "/copilotkit/agent/refund-demo/connect",
        Some(connect),
    )
    .await;
    verify_sse(
        body.as_bytes(),
        VerifyOptions::strict().with_ids("t1", "r2"),
    )
    .unwrap();
    let last = events_last(&body);
    assert_eq!(
        last["outcome"],
        json!({"type": "success"}),
        "nothing pending: {last}"
    );
}

fn events_last(body: &str) -> Value {
    events(body).pop().unwrap()
}

#[tokio::test]
async fn stop_without_a_running_run_says_so_and_bad_scopes_are_400() {
    let app = app(HttpConfig::default());
    let (status, body) = send(&app, "POST", "/copilotkit/agent/refund-demo/stop/t9", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        json_of(&body),
        json!({"threadId": "t9", "stopped": false, "message": "No active run for thread 't9'."})
    );
    let (status, body) = send(
        &app,
        "POST",
        "/copilotkit/agent/refund-demo/stop/t9",
        Some(json!({"runId": 7})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(json_of(&body)["code"], "INVALID_INPUT");
    let (status, body) = send(
        &app,
        "POST",
        "/copilotkit",
        Some(json!({"method": "agent/run"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = send(
        &app,
        "POST",
        "/copilotkit",
        Some(json!({"method": "transcribe"})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(json_of(&body)["code"], "METHOD_NOT_FOUND");
}

#[tokio::test]
async fn an_oversized_stop_body_is_413_like_any_other() {
    let app = app(HttpConfig {
        body_limit: 64,
        ..HttpConfig::default()
    });
    let scope = json!({"runId": "r".repeat(200)});
    let (status, body) = send(
        &app,
        "POST",
        "/copilotkit/agent/refund-demo/stop/t9",
        Some(scope),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(json_of(&body)["code"], "BODY_TOO_LARGE");
}
