//! The router through `tower::ServiceExt::oneshot`: rejections before the stream,
//! and the three encodings of the same run.

use std::sync::Arc;

use agui_protocol::sse::{SseDecoder, SseFrame};
use agui_protocol::verify::{VerifyOptions, verify_sse};
use axum::body::Body;
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, Store};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_http::HttpConfig;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

fn app(config: HttpConfig) -> axum::Router {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(
        ManualClock::new(1_764_421_200_000),
        SequentialIds::new("h"),
        NeverSleep,
    );
    let engine = Engine::new(
        DemoAgent::new(store.clone(), DemoConfig::default()),
        store,
        runtime,
    );
    handoff_http::router(engine, config)
}

async fn send(
    app: &axum::Router,
    method: &str,
    uri: &str,
    content_type: Option<&str>,
    body: &str,
) -> (StatusCode, http::HeaderMap, String) {
    let mut request = Request::builder().method(method).uri(uri);
    if let Some(ct) = content_type {
        request = request.header("content-type", ct);
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::from(body.to_owned())).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, headers, String::from_utf8(bytes.to_vec()).unwrap())
}

const REFUND: &str = r#"{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"Refund order A1024"}]}"#;

fn code(body: &str) -> String {
    serde_json::from_str::<Value>(body).unwrap()["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn rejections_come_before_the_stream_with_a_code() {
    let app = app(HttpConfig {
        body_limit: 512,
        ..HttpConfig::default()
    });
    let json = Some("application/json");
    let cases = [
        (
            Some("text/plain"),
            REFUND.to_owned(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            json,
            "{not json".to_owned(),
            StatusCode::BAD_REQUEST,
            "INVALID_INPUT",
        ),
        (
            json,
            r#"{"runId":"r","messages":[]}"#.to_owned(),
            StatusCode::BAD_REQUEST,
            "INVALID_INPUT",
        ),
        (
            json,
            r#"{"threadId":"t","messages":[]}"#.to_owned(),
            StatusCode::BAD_REQUEST,
            "INVALID_INPUT",
        ),
        (
            json,
            r#"{"threadId":"t","runId":"r"}"#.to_owned(),
            StatusCode::BAD_REQUEST,
            "INVALID_INPUT",
        ),
        (
            json,
            r#"{"threadId":"","runId":"r","messages":[]}"#.to_owned(),
            StatusCode::BAD_REQUEST,
            "INVALID_INPUT",
        ),
        (
            json,
            format!(
                r#"{{"threadId":"t","runId":"r","messages":[],"state":"{}"}}"#,
                "x".repeat(600)
            ),
            StatusCode::PAYLOAD_TOO_LARGE,
            "BODY_TOO_LARGE",
        ),
    ];
    for (content_type, body, status, expected) in cases {
        let (got, headers, text) = send(&app, "POST", "/agent", content_type, &body).await;
        assert_eq!(got, status, "{body}: {text}");
        assert_eq!(code(&text), expected, "{body}");
        assert!(
            headers["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json")
        );
    }
}

#[tokio::test]
async fn malformed_values_name_their_json_path() {
    let app = app(HttpConfig::default());
    let body = r#"{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":5}]}"#;
    let (status, _, text) = send(&app, "POST", "/agent", Some("application/json"), body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.contains("messages[0]"), "{text}");
}

#[tokio::test]
async fn agui_stream_is_valid_and_a_second_input_needs_resume() {
    let app = app(HttpConfig::default());
    let (status, headers, text) =
        send(&app, "POST", "/agent", Some("application/json"), REFUND).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "text/event-stream");
    assert_eq!(headers["cache-control"], "no-cache");
    assert_eq!(headers["x-accel-buffering"], "no");
    assert_eq!(headers["x-handoff-run-id"], "r1");
    let report = verify_sse(
        text.as_bytes(),
        VerifyOptions::strict().with_ids("t1", "r1"),
    )
    .unwrap();
    assert_eq!(report.runs[0].outcome.as_str(), "interrupt");

    let again = r#"{"threadId":"t1","runId":"r2","messages":[{"id":"m2","role":"user","content":"hello"}]}"#;
    let (status, _, text) = send(&app, "POST", "/agent", Some("application/json"), again).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(code(&text), "RESUME_INCOMPLETE");

    let (status, _, text) = send(&app, "GET", "/threads/t1", None, "").await;
    assert_eq!(status, StatusCode::OK);
    let view: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(view["status"], "interrupted");
    assert_eq!(view["pendingInterrupts"][0]["reason"], "tool_call");
    assert_eq!(view["state"]["step"], "await_decision");

    let (status, _, replay) = send(&app, "GET", "/threads/t1/runs/r1/events", None, "").await;
    assert_eq!(status, StatusCode::OK);
    verify_sse(
        replay.as_bytes(),
        VerifyOptions::strict().with_ids("t1", "r1"),
    )
    .unwrap();
    let (status, _, text) = send(&app, "GET", "/threads/nope", None, "").await;
    assert_eq!(
        (status, code(&text).as_str()),
        (StatusCode::NOT_FOUND, "THREAD_NOT_FOUND")
    );
}

#[tokio::test]
async fn a2ui_is_selected_by_header_or_query() {
    let app = app(HttpConfig::default());
    for uri in ["/agent?a2ui=true", "/agent"] {
        let body = REFUND.replace("t1", uri);
        let mut request = Request::post(uri).header("content-type", "application/json");
        if uri == "/agent" {
            request = request.header("x-a2ui", "true");
        }
        let response = app
            .clone()
            .oneshot(request.body(Body::from(body)).unwrap())
            .await
            .unwrap();
        let text = String::from_utf8(
            response
                .into_body()
                .collect()
                .await
                .unwrap()
                .to_bytes()
                .to_vec(),
        )
        .unwrap();
        assert!(text.starts_with("event: "), "{text}");
        for kind in ["tool_call", "tool_result", "text", "interrupt", "done"] {
            assert!(
                text.contains(&format!("event: {kind}\ndata: {{\"type\":\"{kind}\"")),
                "{kind} missing: {text}"
            );
        }
        assert!(text.ends_with("event: done\ndata: {\"type\":\"done\",\"timestamp\":1764421200000,\"data\":null}\n\n"), "{text}");
        let interrupt = text
            .split("event: interrupt\ndata: ")
            .nth(1)
            .and_then(|rest| rest.split('\n').next())
            .unwrap();
        let interrupt: Value = serde_json::from_str(interrupt).unwrap();
        assert_eq!(interrupt["data"]["fields"][0]["name"], "approved");
        assert_eq!(interrupt["data"]["fields"][0]["type"], "confirm");
        assert_eq!(interrupt["data"]["fields"][0]["required"], true);
    }
}

#[tokio::test]
async fn superagent_legacy_mode_streams_raw_tokens_and_done() {
    let app = app(HttpConfig::default());
    let body = r#"{"agent_id":"refund-demo","session_id":"s1","message":"Refund order A1024"}"#;
    let (status, _, text) = send(
        &app,
        "POST",
        "/api/v1/chat/stream",
        Some("application/json"),
        body,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(text.contains("data: Order \n\n"), "{text}");
    assert!(
        text.contains(r#"data: {"type":"interrupt","data":{"#),
        "{text}"
    );
    assert!(text.ends_with("data: [DONE]\n\n"), "{text}");

    let body = r#"{"agent_id":"refund-demo","session_id":"s1","input":{"approved":true}}"#;
    let (status, _, text) = send(
        &app,
        "POST",
        "/api/v1/chat/resume",
        Some("application/json"),
        body,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(
        text.contains(r#"data: {"type":"tool_result","data":{"#),
        "{text}"
    );
    assert!(text.ends_with("data: [DONE]\n\n"), "{text}");

    let (status, _, text) = send(
        &app,
        "POST",
        "/api/v1/chat/resume",
        Some("application/json"),
        body,
    )
    .await;
    assert_eq!(
        (status, code(&text).as_str()),
        (StatusCode::CONFLICT, "INTERRUPT_NOT_PENDING")
    );
}

#[tokio::test]
async fn health_reports_the_agent() {
    let (status, _, text) = send(&app(HttpConfig::default()), "GET", "/healthz", None, "").await;
    assert_eq!(status, StatusCode::OK);
    assert!(text.contains(r#""agent":"refund-demo""#), "{text}");
}

/// The frames of an SSE body.
fn frames(body: &str) -> Vec<SseFrame> {
    SseDecoder::new().feed(body.as_bytes())
}

#[tokio::test]
async fn frames_carry_ids_and_last_event_id_rejoins_the_run_where_the_client_left() {
    let app = app(HttpConfig::default());
    let (_, _, live) = send(&app, "POST", "/agent", Some("application/json"), REFUND).await;
    let live_frames = frames(&live);
    let ids: Vec<String> = live_frames.iter().filter_map(|f| f.id.clone()).collect();
    let expected: Vec<String> = (1..=live_frames.len()).map(|n| n.to_string()).collect();
    assert_eq!(ids, expected, "every frame is numbered in order");

    // A replay streams the very frames the run did (ids included).
    let (_, _, replay) = send(&app, "GET", "/threads/t1/runs/r1/events", None, "").await;
    assert_eq!(replay, live);

    for cut in 1..=live_frames.len() {
        let request = Request::get("/threads/t1/runs/r1/events")
            .header("last-event-id", cut.to_string())
            .body(Body::empty())
            .unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let joined = String::from_utf8(bytes.to_vec()).unwrap();
        let rejoined = frames(&joined);
        if cut == live_frames.len() {
            assert!(rejoined.is_empty(), "nothing is left after the last frame");
            continue;
        }
        // Valid on its own from its first frame: a new consumer may read it.
        for options in [VerifyOptions::official(), VerifyOptions::strict()] {
            if let Err(v) = verify_sse(joined.as_bytes(), options.with_ids("t1", "r1")) {
                panic!("rejoined after {cut}: {v:?}\n{joined}");
            }
        }
        // What the client had plus the frames it had not seen is the uninterrupted run.
        let mut merged: Vec<SseFrame> = live_frames[..cut].to_vec();
        merged.extend(
            rejoined
                .into_iter()
                .filter(|f| f.id.as_deref().and_then(|id| id.parse::<usize>().ok()) > Some(cut)),
        );
        assert_eq!(merged, live_frames, "rejoined after {cut}");
    }

    let request = Request::get("/threads/t1/runs/r1/events")
        .header("last-event-id", "seven")
        .body(Body::empty())
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
}
