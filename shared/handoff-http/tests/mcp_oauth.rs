//! OAuth protected-resource metadata for MCP clients (issue 52): served only when the
//! authenticator takes OAuth tokens, and named by a 401 from `/mcp`.

mod support;

use std::sync::Arc;

use axum::body::Body;
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, Store};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_http::{HttpConfig, Routes};
use http::{Request, StatusCode};
use serde_json::{Value, json};
use support::{code, send};
use tower::ServiceExt;

fn app(authenticator: Option<Arc<dyn handoff_http::Authenticator>>) -> axum::Router {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(ManualClock::new(1), SequentialIds::new("o"), NeverSleep);
    let agent = DemoAgent::new(store.clone(), DemoConfig::default());
    let routes = Routes::new(Engine::new(agent, store, runtime), HttpConfig::default());
    match authenticator {
        Some(authenticator) => routes.authenticator(authenticator).build(),
        None => routes.build(),
    }
}

/// Takes OAuth access tokens from `https://issuer.example` (the token `ok`, here).
struct OAuth;

impl handoff_http::Authenticator for OAuth {
    fn authenticate<'a>(
        &'a self,
        request: &'a http::request::Parts,
    ) -> futures::future::BoxFuture<'a, Result<handoff_core::Principal, handoff_http::AuthError>>
    {
        let ok = request
            .headers
            .get("authorization")
            .is_some_and(|v| v == "Bearer ok");
        Box::pin(async move {
            match ok {
                true => Ok(handoff_core::Principal::new("t", "someone")),
                false => Err(handoff_http::AuthError::unauthenticated("a token, please")),
            }
        })
    }
    fn challenge(&self) -> String {
        "Bearer realm=\"handoff\"".into()
    }
    fn scheme(&self) -> &'static str {
        "oauth-test"
    }
    fn authorization_servers(&self) -> Vec<String> {
        vec!["https://issuer.example".into()]
    }
}

#[tokio::test]
async fn oauth_callers_find_the_protected_resource_metadata_from_a_401() {
    let (status, _) = send(
        &app(None),
        "GET",
        "/.well-known/oauth-protected-resource",
        &[("host", "localhost")],
        String::new(),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "not served without OAuth");

    let app = app(Some(Arc::new(OAuth)));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let request = Request::post("/mcp")
        .header("host", "agents.example")
        .header("x-forwarded-proto", "https")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let challenge = response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    let metadata_url = "https://agents.example/.well-known/oauth-protected-resource/mcp";
    assert_eq!(
        challenge,
        format!("Bearer realm=\"handoff\", resource_metadata=\"{metadata_url}\"")
    );
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let headers = [("host", "agents.example"), ("x-forwarded-proto", "https")];
        let (status, text) = send(&app, "GET", path, &headers, String::new()).await;
        assert_eq!(status, StatusCode::OK, "{path}: {text}");
        let document: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(document["resource"], "https://agents.example/mcp");
        assert_eq!(
            document["authorization_servers"],
            json!(["https://issuer.example"])
        );
    }
    // Other routes keep their own challenge.
    let request = Request::get("/threads")
        .header("host", "agents.example")
        .body(Body::empty())
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        response.headers()["www-authenticate"],
        "Bearer realm=\"handoff\""
    );
    let (_, text) = send(&app, "POST", "/mcp", &[("host", "x")], String::new()).await;
    assert_eq!(code(&text), "UNAUTHENTICATED", "{text}");
    let headers = [("host", "localhost"), ("authorization", "Bearer ok")];
    let (_, text) = send(&app, "POST", "/mcp", &headers, body.to_string()).await;
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["result"]["tools"][0]["name"],
        "refund-demo"
    );
}
