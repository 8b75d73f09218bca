//! The thread routes' test app: the demo agent behind `Routes`, callers named in the
//! `authorization` header (alice and bob of tenant acme, carol and erin approvers, dave an
//! auditor; grace an approver of tenant globex).

#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use crate::support;
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, Principal, Store};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_http::{AuthError, Authenticator, HttpConfig, Routes};
use http::StatusCode;
use serde_json::{Value, json};

pub const T0: u64 = 1_764_421_200_000;

/// `authorization: alice` or `bob`, both of tenant acme.
pub struct Named;

impl Authenticator for Named {
    fn authenticate<'a>(
        &'a self,
        request: &'a http::request::Parts,
    ) -> futures::future::BoxFuture<'a, Result<Principal, AuthError>> {
        let who = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        Box::pin(async move {
            match who.as_str() {
                "alice" | "bob" => Ok(Principal::new("acme", who)),
                "carol" | "erin" => Ok(Principal::new("acme", who).with_roles(["approver"])),
                "grace" => Ok(Principal::new("globex", who).with_roles(["approver"])),
                "dave" => Ok(Principal::new("acme", who).with_roles(["auditor"])),
                _ => Err(AuthError::unauthenticated("who are you?")),
            }
        })
    }
    fn scheme(&self) -> &'static str {
        "test-names"
    }
}

pub struct App {
    pub router: axum::Router,
    pub store: Arc<MemoryStore>,
    pub clock: Arc<ManualClock>,
}

pub fn app() -> App {
    app_with(DemoConfig::default())
}

/// Refunds above 0 cents need role `approver`, not the requester.
pub fn app_with_approvers() -> App {
    app_with(DemoConfig {
        approver_above_cents: Some(0),
        ..DemoConfig::default()
    })
}

pub fn app_with(config: DemoConfig) -> App {
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(ManualClock::new(T0));
    let runtime = Runtime::new(clock.clone(), SequentialIds::new("t"), NeverSleep);
    let dyn_store: Arc<dyn Store> = store.clone();
    let agent = DemoAgent::new(dyn_store.clone(), config);
    let engine = Engine::new(agent, dyn_store, runtime);
    let router = Routes::new(engine, HttpConfig::default())
        .authenticator(Arc::new(Named))
        .build();
    App {
        router,
        store,
        clock,
    }
}

impl App {
    pub async fn call(
        &self,
        who: &str,
        method: &str,
        uri: &str,
        body: Value,
    ) -> (StatusCode, Value) {
        let headers = [("host", "localhost"), ("authorization", who)];
        let body = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        let (status, text) = support::send(&self.router, method, uri, &headers, body).await;
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value)
    }

    /// One run of `who` on `thread` saying `text` (the clock moves a second first).
    pub async fn say(&self, who: &str, thread: &str, turn: u32, text: &str) {
        self.clock.advance(1_000);
        let input = json!({"threadId": thread, "runId": format!("{thread}-r{turn}"), "messages": [
            {"id": format!("{thread}-m{turn}"), "role": "user", "content": text}]});
        let headers = [("host", "localhost"), ("authorization", who)];
        let (status, body) =
            support::send(&self.router, "POST", "/agent", &headers, input.to_string()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.contains("RUN_FINISHED"), "{body}");
    }

    pub fn ids(page: &Value) -> Vec<String> {
        page["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Every key the store holds for `thread` (tenant acme).
    pub async fn keys(&self, thread: &str) -> Vec<String> {
        let partition = handoff_core::principal::partition("acme", thread).unwrap();
        self.store
            .list(&partition, "", T0 + 3_600_000)
            .await
            .unwrap()
    }
}
