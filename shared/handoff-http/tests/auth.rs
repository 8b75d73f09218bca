//! The authentication layer and ownership through the router: who is refused, with what,
//! and that a refused request writes nothing.

use std::sync::Arc;

use axum::body::Body;
use futures::future::BoxFuture;
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, Principal, Store};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_http::{AuthError, Authenticator, HttpConfig, Routes};
use http::request::Parts;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

/// `Authorization: Bearer tenant/subject`: enough to tell callers apart.
struct NamedCallers;

impl Authenticator for NamedCallers {
    fn authenticate<'a>(
        &'a self,
        request: &'a Parts,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        let header = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .and_then(|v| v.split_once('/'))
            .map(|(tenant, subject)| Principal::new(tenant, subject));
        Box::pin(async move {
            header.ok_or_else(|| AuthError::unauthenticated("a bearer token is required"))
        })
    }

    fn scheme(&self) -> &'static str {
        "test"
    }
}

fn app() -> (axum::Router, Arc<dyn Store>) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(
        ManualClock::new(1_764_421_200_000),
        SequentialIds::new("h"),
        NeverSleep,
    );
    let engine = Engine::new(
        DemoAgent::new(store.clone(), DemoConfig::default()),
        store.clone(),
        runtime,
    );
    let router = Routes::new(engine, HttpConfig::default())
        .authenticator(Arc::new(NamedCallers))
        .build();
    (router, store)
}

async fn send(
    app: &axum::Router,
    method: &str,
    uri: &str,
    caller: Option<&str>,
    body: &str,
) -> (StatusCode, http::HeaderMap, String) {
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json");
    if let Some(caller) = caller {
        request = request.header("authorization", format!("Bearer {caller}"));
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

fn code(body: &str) -> String {
    serde_json::from_str::<Value>(body).unwrap()["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

const REFUND: &str = r#"{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"Refund order A1024"}]}"#;

#[tokio::test]
async fn no_credentials_is_a_401_with_a_challenge_and_writes_nothing() {
    let (app, store) = app();
    let (status, headers, body) = send(&app, "POST", "/agent", None, REFUND).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(code(&body), "UNAUTHENTICATED");
    assert!(
        headers["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Bearer")
    );
    let nothing = store.get("t1", &["thread"], 0).await.unwrap();
    assert_eq!(nothing, vec![None]);
    for uri in [
        "/threads/t1",
        "/threads/t1/runs/r1/events",
        "/copilotkit/info",
    ] {
        let (status, _, _) = send(&app, "GET", uri, None, "").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{uri}");
    }
    for uri in [
        "/copilotkit/agent/refund-demo/run",
        "/copilotkit/agent/refund-demo/connect",
        "/copilotkit/agent/refund-demo/stop/t1",
        "/copilotkit",
    ] {
        let (status, _, _) = send(&app, "POST", uri, None, REFUND).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{uri}");
    }
    let nothing = store.get("t1", &["thread"], 0).await.unwrap();
    assert_eq!(
        nothing,
        vec![None],
        "no CopilotKit route ran unauthenticated"
    );
    let (status, _, _) = send(&app, "GET", "/healthz", None, "").await;
    assert_eq!(status, StatusCode::OK, "liveness needs no credentials");
}

#[tokio::test]
async fn a_thread_is_its_owners_alone_and_invisible_to_others() {
    let (app, _) = app();
    let (status, _, _) = send(&app, "POST", "/agent", Some("acme/alice"), REFUND).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, owner_view) = send(&app, "GET", "/threads/t1", Some("acme/alice"), "").await;
    assert_eq!(status, StatusCode::OK);
    let view: Value = serde_json::from_str(&owner_view).unwrap();
    assert_eq!(view["owner"], "alice");
    let interrupt = view["pendingInterrupts"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    for caller in ["acme/bob", "globex/alice"] {
        for uri in ["/threads/t1", "/threads/t1/runs/r1/events"] {
            let (status, _, body) = send(&app, "GET", uri, Some(caller), "").await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{caller} {uri}");
            assert_eq!(code(&body), "THREAD_NOT_FOUND", "{caller} {uri}");
        }
        let resume = format!(
            r#"{{"threadId":"t1","runId":"r2","messages":[],"resume":[{{"interruptId":"{interrupt}","status":"resolved","payload":{{"approved":true}}}}]}}"#
        );
        let (status, _, _) = send(&app, "POST", "/agent", Some(caller), &resume).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{caller} resume");
    }
    // Nothing the others tried changed the owner's thread.
    let (_, _, after) = send(&app, "GET", "/threads/t1", Some("acme/alice"), "").await;
    assert_eq!(after, owner_view);
}
