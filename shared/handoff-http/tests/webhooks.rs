//! Webhooks through the engine and the router: the events a run's end writes, posted
//! signed to every endpoint, retried with backoff under one `webhook-id` (a served endpoint
//! not sent again), and listed by `GET /webhooks/deliveries` for admins only. The
//! receivers are a fake `Outbound` (it fails on purpose); the rest is the real thing.
#![cfg(feature = "webhooks")]

#[path = "support/named.rs"]
mod named;
mod support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use base64::Engine as _;
use handoff_core::outbound::{Body, Outbound, OutboundError, whole};
use handoff_core::outbox::Outbox;
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, Store};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_http::webhooks::{WEBHOOK_KIND, WebhookConfig, WebhookNotifier, WebhookSender};
use handoff_http::{HttpConfig, Routes};
use hmac::{KeyInit, Mac};
use http::StatusCode;
use named::Named;
use serde_json::{Value, json};
use support::{code, send};

const T0: u64 = 1_764_421_200_000;
const OPS_SECRET: &[u8] = b"ops-signing-key-0123456789";

#[derive(Debug, Clone)]
struct Post {
    endpoint: String,
    headers: http::HeaderMap,
    body: Value,
    raw: Vec<u8>,
}

/// Two receivers: `ops` answers 500 while `failures` lasts, `audit` always 204.
#[derive(Default)]
struct Receivers {
    posts: Mutex<Vec<Post>>,
    failures: Mutex<usize>,
}

struct Shared(Arc<Receivers>);

#[async_trait]
impl Outbound for Shared {
    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError> {
        let endpoint = request.uri().host().unwrap_or_default().to_owned();
        let (parts, raw) = request.into_parts();
        self.0.posts.lock().unwrap().push(Post {
            endpoint: endpoint.clone(),
            headers: parts.headers,
            body: serde_json::from_slice(&raw).unwrap(),
            raw,
        });
        let mut failures = self.0.failures.lock().unwrap();
        let status = if endpoint == "ops.example" && *failures > 0 {
            *failures -= 1;
            500
        } else {
            204
        };
        Ok(http::Response::builder()
            .status(status)
            .body(whole(Vec::new()))
            .unwrap())
    }
}

struct World {
    app: axum::Router,
    clock: Arc<ManualClock>,
    outbox: Outbox,
    receivers: Arc<Receivers>,
}

impl World {
    fn new(demo: DemoConfig, failures: usize) -> Self {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let clock = Arc::new(ManualClock::new(T0));
        let runtime = Runtime::new(clock.clone(), SequentialIds::new("h"), NeverSleep);
        let receivers = Arc::new(Receivers {
            failures: Mutex::new(failures),
            ..Receivers::default()
        });
        let config = WebhookConfig::from_lookup(|key| match key {
            "HANDOFF_WEBHOOK_URLS" => {
                Some("ops=https://ops.example/hook,audit=https://audit.example/in".to_owned())
            }
            "HANDOFF_WEBHOOK_SECRETS" => Some(format!(
                "ops=whsec_{},audit=plain-audit-key",
                base64::engine::general_purpose::STANDARD.encode(OPS_SECRET)
            )),
            _ => None,
        })
        .unwrap()
        .unwrap();
        let sender = WebhookSender::new(
            config,
            Arc::new(Shared(receivers.clone())),
            runtime.clock.clone(),
        );
        let outbox =
            Outbox::new(store.clone(), runtime.clone()).sender(WEBHOOK_KIND, Arc::new(sender));
        let engine = Engine::new(DemoAgent::new(store.clone(), demo), store, runtime)
            .with_notifier(Arc::new(WebhookNotifier::new(Some(
                "https://console.example".to_owned(),
            ))))
            .with_outbox(outbox.clone());
        let app = Routes::new(engine, HttpConfig::default())
            .authenticator(Arc::new(Named))
            .build();
        World {
            app,
            clock,
            outbox,
            receivers,
        }
    }

    async fn post(&self, who: &str, body: Value) -> String {
        let (status, text) = send(
            &self.app,
            "POST",
            "/agent",
            &[("authorization", who)],
            body.to_string(),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{text}");
        text
    }

    async fn deliveries(&self, who: &str) -> (StatusCode, Value) {
        let (status, text) = send(
            &self.app,
            "GET",
            "/webhooks/deliveries",
            &[("authorization", who)],
            String::new(),
        )
        .await;
        let body = match status {
            StatusCode::OK => serde_json::from_str(&text).unwrap(),
            _ => json!({ "code": code(&text) }),
        };
        (status, body)
    }

    fn posts(&self) -> Vec<Post> {
        self.receivers.posts.lock().unwrap().clone()
    }
}

fn refund(thread: &str, run: &str) -> Value {
    json!({"threadId": thread, "runId": run,
           "messages": [{"id": format!("m-{run}"), "role": "user", "content": "Refund order A1024"}]})
}

fn approve(thread: &str, run: &str, interrupt: &str) -> Value {
    json!({"threadId": thread, "runId": run, "messages": [],
           "resume": [{"interruptId": interrupt, "status": "resolved", "payload": {"approved": true}}]})
}

fn header(post: &Post, name: &str) -> String {
    post.headers[name].to_str().unwrap().to_owned()
}

/// Checks the Standard Webhooks signature by hand: HMAC-SHA256 over `id.timestamp.body`.
fn assert_signed(post: &Post, secret: &[u8]) {
    let id = header(post, "webhook-id");
    let timestamp = header(post, "webhook-timestamp");
    let mut mac = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(secret).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(&post.raw);
    let expected = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    assert_eq!(header(post, "webhook-signature"), format!("v1,{expected}"));
}

fn secret_of(post: &Post) -> &'static [u8] {
    match post.endpoint.as_str() {
        "ops.example" => OPS_SECRET,
        _ => b"plain-audit-key",
    }
}

#[tokio::test]
async fn an_approval_is_told_signed_retried_under_one_id_and_listed_for_admins() {
    let demo = DemoConfig {
        approver_above_cents: Some(0),
        ..DemoConfig::default()
    };
    let world = World::new(demo, 2);
    world.post("alice", refund("t1", "r1")).await;

    // The first attempt follows the run's end: two events, each to both endpoints.
    let first = world.posts();
    let kinds: Vec<_> = first
        .iter()
        .map(|p| (p.body["type"].as_str().unwrap(), p.endpoint.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("interrupt.created", "ops.example"),
            ("interrupt.created", "audit.example"),
            ("run.finished", "ops.example"),
            ("run.finished", "audit.example"),
        ]
    );
    let created = &first[0].body;
    let data = &created["data"];
    assert_eq!(
        (&data["tenant"], &data["threadId"], &data["runId"]),
        (&json!("acme"), &json!("t1"), &json!("r1"))
    );
    assert_eq!(data["requestedBy"], "alice");
    assert_eq!(data["requiredRoles"], json!(["approver"]));
    assert_eq!(data["notRequester"], true);
    assert_eq!(data["consoleUrl"], "https://console.example/?thread=t1");
    assert_eq!(created["timestamp"], "2025-11-29T13:00:00.000Z");
    assert_eq!(first[2].body["data"]["outcome"], "interrupt");
    for post in &first {
        assert_signed(post, secret_of(post));
        assert_eq!(header(post, "webhook-timestamp"), (T0 / 1000).to_string());
    }
    let ids: Vec<_> = first.iter().map(|p| header(p, "webhook-id")).collect();
    assert_eq!(ids[0], ids[1], "one id per event, whichever endpoint");
    assert_ne!(ids[0], ids[2]);

    let (status, body) = world.deliveries("alice").await;
    assert_eq!(
        (status, &body["code"]),
        (StatusCode::FORBIDDEN, &json!("FORBIDDEN"))
    );
    let (status, listed) = world.deliveries("carol").await;
    assert_eq!(status, StatusCode::OK);
    let entries = listed["deliveries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{listed}");
    for entry in entries {
        assert_eq!(entry["status"], "pending", "{entry}");
        assert_eq!(entry["attempts"], 1);
        assert_eq!(entry["servedEndpoints"], json!(["audit"]));
        assert_eq!(entry["nextAttemptAt"], T0 + 5_000);
        assert!(
            entry["lastError"]
                .as_str()
                .unwrap()
                .starts_with("ops: answered 500")
        );
    }

    // Not before 5 s; then only ops, under the same ids, signed again for the new time.
    world.clock.advance(4_999);
    assert_eq!(world.outbox.deliver_due(10).await.retried, 0);
    assert_eq!(world.posts().len(), 4);
    world.clock.advance(1);
    let report = world.outbox.deliver_due(10).await;
    assert_eq!(report.delivered, 2, "{report:?}");
    let retried = world.posts()[4..].to_vec();
    assert!(retried.iter().all(|p| p.endpoint == "ops.example"));
    // Items due at once are retried in no particular order.
    let mut retried_ids: Vec<_> = retried.iter().map(|p| header(p, "webhook-id")).collect();
    let mut first_ids = vec![ids[0].clone(), ids[2].clone()];
    retried_ids.sort();
    first_ids.sort();
    assert_eq!(retried_ids, first_ids);
    for post in &retried {
        assert_signed(post, OPS_SECRET);
        assert_eq!(
            header(post, "webhook-timestamp"),
            ((T0 + 5_000) / 1000).to_string()
        );
    }
    let (_, listed) = world.deliveries("carol").await;
    for entry in listed["deliveries"].as_array().unwrap() {
        assert_eq!(
            (&entry["status"], &entry["attempts"]),
            (&json!("delivered"), &json!(2))
        );
        assert!(entry.get("nextAttemptAt").is_none(), "{entry}");
    }

    // bob approves: the answering run is told too, newest first in the listing.
    let interrupt = data["interruptId"].as_str().unwrap();
    world.post("bob", approve("t1", "r2", interrupt)).await;
    let last = world.posts()[6..].to_vec();
    assert_eq!(last.len(), 2);
    assert_eq!(last[0].body["type"], "run.finished");
    assert_eq!(last[0].body["data"]["outcome"], "success");
    assert_eq!(last[0].body["data"]["runId"], "r2");
    let (_, listed) = world.deliveries("carol").await;
    let runs: Vec<_> = listed["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["type"].clone(), e["runId"].clone(), e["status"].clone()))
        .collect();
    assert_eq!(
        runs[0],
        (json!("run.finished"), json!("r2"), json!("delivered"))
    );
    assert_eq!(runs.len(), 3);
}

#[tokio::test]
async fn a_run_that_fails_is_told_as_run_failed() {
    let demo = DemoConfig {
        error_after_refund: true,
        ..DemoConfig::default()
    };
    let world = World::new(demo, 0);
    world.post("alice", refund("t2", "r1")).await;
    let created = world.posts()[0].body.clone();
    assert_eq!(created["type"], "interrupt.created");
    assert_eq!(created["data"]["requiredRoles"], json!([]));
    assert_eq!(created["data"]["notRequester"], false);
    let interrupt = created["data"]["interruptId"].as_str().unwrap().to_owned();
    world.post("alice", approve("t2", "r2", &interrupt)).await;
    let failed: Vec<_> = world
        .posts()
        .into_iter()
        .filter(|p| p.body["data"]["runId"] == "r2")
        .collect();
    assert_eq!(failed.len(), 2, "both endpoints");
    assert_eq!(failed[0].body["type"], "run.failed");
    let error = &failed[0].body["data"]["error"];
    assert!(
        error["code"].as_str().is_some_and(|c| !c.is_empty()),
        "{error}"
    );
    assert!(error["message"].is_string());
}
