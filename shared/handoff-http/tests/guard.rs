//! The request guard wraps every route: a cross-site state-changing request and, on an
//! unauthenticated endpoint, a foreign `Host` are refused before anything is read or
//! written.

mod support;

use std::sync::Arc;

use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, Principal, Store};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_http::HttpConfig;
use http::StatusCode;
use support::code;

const REFUND: &str = r#"{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"Refund order A1024"}]}"#;

fn engine() -> Engine {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(
        ManualClock::new(1_764_421_200_000),
        SequentialIds::new("g"),
        NeverSleep,
    );
    Engine::new(
        DemoAgent::new(store.clone(), DemoConfig::default()),
        store,
        runtime,
    )
}

async fn send(
    app: &axum::Router,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, String) {
    let body = if method == "POST" { REFUND } else { "" };
    support::send(app, method, uri, headers, body.to_owned()).await
}

#[tokio::test]
async fn a_cross_site_run_is_refused_and_writes_nothing() {
    let engine = engine();
    let config = HttpConfig {
        cors_origins: handoff_http::CorsOrigins::parse("http://localhost:3000").unwrap(),
        ..HttpConfig::default()
    };
    let app = handoff_http::router(engine.clone(), config);
    let host = ("host", "localhost:8080");
    let (status, body) = send(
        &app,
        "POST",
        "/agent",
        &[host, ("origin", "https://evil.example")],
    )
    .await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::FORBIDDEN, "ORIGIN_NOT_ALLOWED"),
        "{body}"
    );
    let (status, body) = send(
        &app,
        "POST",
        "/api/v1/chat/stream",
        &[host, ("sec-fetch-site", "cross-site")],
    )
    .await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::FORBIDDEN, "ORIGIN_NOT_ALLOWED"),
        "{body}"
    );
    let thread = engine.thread(&Principal::anonymous(), "t1").await.unwrap();
    assert!(thread.is_none(), "nothing was written");

    for origin in ["http://localhost:8080", "http://localhost:3000"] {
        let (status, body) = send(&app, "POST", "/agent", &[host, ("origin", origin)]).await;
        assert_eq!(status, StatusCode::OK, "{origin}: {body}");
    }
}

#[tokio::test]
async fn an_unauthenticated_endpoint_answers_only_its_own_host_names() {
    let config = HttpConfig {
        allowed_hosts: vec!["agent.lan".to_owned()],
        ..HttpConfig::default()
    };
    let app = handoff_http::router(engine(), config);
    let (status, body) = send(
        &app,
        "GET",
        "/threads/t1",
        &[("host", "rebound.example:8080")],
    )
    .await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::FORBIDDEN, "HOST_NOT_ALLOWED"),
        "{body}"
    );
    let (status, body) = send(&app, "POST", "/agent", &[("host", "rebound.example")]).await;
    assert_eq!(code(&body), "HOST_NOT_ALLOWED", "{status} {body}");
    for host in ["127.0.0.1:8080", "agent.lan:8080"] {
        let (status, body) = send(&app, "GET", "/healthz", &[("host", host)]).await;
        assert_eq!(status, StatusCode::OK, "{host}: {body}");
    }
}

/// Before, a request without `Host` skipped the check: leaving the name out reached an
/// unauthenticated endpoint from any name. An HTTP/2 request names its host in the URI
/// (`:authority`) instead, which is checked the same way.
#[tokio::test]
async fn a_request_naming_no_host_is_refused_when_other_names_are_listed() {
    let config = HttpConfig {
        allowed_hosts: vec!["agent.lan".to_owned()],
        ..HttpConfig::default()
    };
    let engine = engine();
    let app = handoff_http::router(engine.clone(), config);
    for (method, uri) in [("GET", "/threads/t1"), ("POST", "/agent")] {
        let (status, body) = send(&app, method, uri, &[]).await;
        assert_eq!(
            (status, code(&body).as_str()),
            (StatusCode::FORBIDDEN, "HOST_NOT_ALLOWED"),
            "{method} {uri}: {body}"
        );
    }
    let thread = engine.thread(&Principal::anonymous(), "t1").await.unwrap();
    assert!(thread.is_none(), "nothing was written");

    let (status, body) = send(&app, "GET", "http://rebound.example/threads/t1", &[]).await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::FORBIDDEN, "HOST_NOT_ALLOWED"),
        "the URI's authority is the name: {body}"
    );
    for uri in ["http://agent.lan:8080/healthz", "http://[::1]/healthz"] {
        let (status, body) = send(&app, "GET", uri, &[]).await;
        assert_eq!(status, StatusCode::OK, "{uri}: {body}");
    }
}

/// Accepts `authorization: key-<name>` as tenant acme's `<name>`.
struct KeyAuth;

impl handoff_http::Authenticator for KeyAuth {
    fn authenticate<'a>(
        &'a self,
        request: &'a http::request::Parts,
    ) -> futures::future::BoxFuture<'a, Result<Principal, handoff_http::AuthError>> {
        let found = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("key-"))
            .map(|name| Principal::new("acme", name));
        Box::pin(
            async move { found.ok_or_else(|| handoff_http::AuthError::unauthenticated("no key")) },
        )
    }
    fn scheme(&self) -> &'static str {
        "test-key"
    }
}

#[tokio::test]
async fn a_hosts_protected_routes_run_the_authenticator_and_see_the_caller() {
    let own = axum::Router::new().route(
        "/demo/whoami",
        axum::routing::get(
            |axum::Extension(p): axum::Extension<Principal>| async move { p.subject },
        ),
    );
    let app = handoff_http::Routes::new(engine(), HttpConfig::default())
        .authenticator(Arc::new(KeyAuth))
        .protected(own)
        .build();
    let (status, body) = send(&app, "GET", "/demo/whoami", &[]).await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::UNAUTHORIZED, "UNAUTHENTICATED"),
        "{body}"
    );
    let (status, body) = send(
        &app,
        "GET",
        "/demo/whoami",
        &[("authorization", "key-alice")],
    )
    .await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "alice"));
}
