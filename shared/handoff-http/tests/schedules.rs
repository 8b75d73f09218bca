//! Schedules through the router and the scheduler: bad definitions refused with stable
//! codes, each schedule managed by its owner or an admin of its tenant only, and a due
//! tick claimed by one of two schedulers sharing the store, its run started as the owner.
#![cfg(feature = "schedules")]

mod support;

use std::sync::Arc;

use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Agent, AgentError, Engine, Finish, Principal, RunContext, Store};
use handoff_http::schedules::Scheduler;
use handoff_http::{AuthError, Authenticator, HttpConfig, Routes};
use http::StatusCode;
use serde_json::{Value, json};
use support::{code, send};

const T0: u64 = 1_764_421_200_000;

/// `alice`, `bob` (acme, no role), `carol` (acme, admin), `mallory` (globex, admin).
struct People;

impl Authenticator for People {
    fn authenticate<'a>(
        &'a self,
        request: &'a http::request::Parts,
    ) -> futures::future::BoxFuture<'a, Result<Principal, AuthError>> {
        let who = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        let principal = match who {
            Some("alice") => Ok(Principal::new("acme", "alice")),
            Some("bob") => Ok(Principal::new("acme", "bob")),
            Some("carol") => Ok(Principal::new("acme", "carol").with_roles(["admin"])),
            Some("mallory") => Ok(Principal::new("globex", "mallory").with_roles(["admin"])),
            _ => Err(AuthError::unauthenticated("who are you?")),
        };
        Box::pin(async move { principal })
    }
    fn scheme(&self) -> &'static str {
        "test-people"
    }
}

struct Reporter;

#[async_trait::async_trait]
impl Agent for Reporter {
    fn name(&self) -> &str {
        "reporter"
    }
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        ctx.say("report ready");
        Ok(Finish::done())
    }
}

struct World {
    app: axum::Router,
    clock: Arc<ManualClock>,
    store: Arc<dyn Store>,
}

impl World {
    fn new() -> Self {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let clock = Arc::new(ManualClock::new(T0));
        let app = Routes::new(self_engine(&store, &clock, "h"), HttpConfig::default())
            .authenticator(Arc::new(People))
            .build();
        World { app, clock, store }
    }

    async fn call(&self, who: &str, method: &str, uri: &str, body: Value) -> (StatusCode, Value) {
        let body = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        let (status, text) = send(&self.app, method, uri, &[("authorization", who)], body).await;
        let value = serde_json::from_str(&text).unwrap_or(json!({ "code": code(&text) }));
        (status, value)
    }

    async fn ids(&self, who: &str) -> Vec<String> {
        let (status, body) = self.call(who, "GET", "/schedules", Value::Null).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let schedules = body["schedules"].as_array().unwrap();
        schedules
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect()
    }
}

fn self_engine(store: &Arc<dyn Store>, clock: &Arc<ManualClock>, tag: &str) -> Engine {
    let runtime = Runtime::new(clock.clone(), SequentialIds::new(tag), NeverSleep);
    Engine::new(Reporter, store.clone(), runtime)
}

fn every(seconds: u64, thread: &str) -> Value {
    json!({ "everySeconds": seconds, "agentId": "reporter", "thread": thread,
            "messages": [{ "role": "user", "content": "the daily report" }] })
}

#[tokio::test]
async fn bad_definitions_are_refused_with_stable_codes() {
    let world = World::new();
    let msgs = json!([{ "role": "user", "content": "hi" }]);
    let rows = [
        (
            json!({ "cron": "* * * * *", "everySeconds": 5, "agentId": "reporter", "thread": "new", "messages": msgs }),
            "INVALID_SCHEDULE",
        ),
        (
            json!({ "agentId": "reporter", "thread": "new", "messages": msgs }),
            "INVALID_SCHEDULE",
        ),
        (
            json!({ "cron": "0 * * * * *", "agentId": "reporter", "thread": "new", "messages": msgs }),
            "INVALID_SCHEDULE",
        ),
        (
            json!({ "cron": "99 * * * *", "agentId": "reporter", "thread": "new", "messages": msgs }),
            "INVALID_SCHEDULE",
        ),
        (
            json!({ "everySeconds": 0, "agentId": "reporter", "thread": "new", "messages": msgs }),
            "INVALID_SCHEDULE",
        ),
        (
            json!({ "everySeconds": "5", "agentId": "reporter", "thread": "new", "messages": msgs }),
            "INVALID_SCHEDULE",
        ),
        (
            json!({ "everySeconds": 5, "thread": "new", "messages": msgs }),
            "INVALID_SCHEDULE",
        ),
        (
            json!({ "everySeconds": 5, "agentId": "nobody", "thread": "new", "messages": msgs }),
            "AGENT_NOT_FOUND",
        ),
        (
            json!({ "everySeconds": 5, "agentId": "reporter", "messages": msgs }),
            "INVALID_SCHEDULE",
        ),
        (
            json!({ "everySeconds": 5, "agentId": "reporter", "thread": "a\u{1}b", "messages": msgs }),
            "INVALID_SCHEDULE",
        ),
        (
            json!({ "everySeconds": 5, "agentId": "reporter", "thread": "new", "messages": [] }),
            "INVALID_SCHEDULE",
        ),
        (
            json!({ "everySeconds": 5, "agentId": "reporter", "thread": "new", "messages": [{ "role": 7 }] }),
            "INVALID_SCHEDULE",
        ),
        (json!([1, 2]), "INVALID_SCHEDULE"),
    ];
    for (body, expected) in rows {
        let (status, answer) = world
            .call("alice", "POST", "/schedules", body.clone())
            .await;
        assert!(status.is_client_error(), "{body} → {status}");
        assert_eq!(answer["code"], expected, "{body}");
        assert!(
            answer["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{answer}"
        );
    }
    assert!(world.ids("alice").await.is_empty(), "nothing was stored");
    let (status, _) = world.call("nobody", "GET", "/schedules", Value::Null).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn only_the_owner_or_an_admin_of_its_tenant_manages_a_schedule() {
    let world = World::new();
    let (status, created) = world
        .call(
            "alice",
            "POST",
            "/schedules",
            json!({ "cron": "0 6 * * MON-FRI", "agentId": "reporter",
              "thread": "weekday-report", "messages": [{ "role": "user", "content": "go" }] }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["cron"], "0 6 * * MON-FRI");
    assert_eq!(created["thread"], "weekday-report");
    assert_eq!(created["createdBy"], "alice");
    // 2025-11-29 is a Saturday: the next weekday 06:00 UTC is Monday 2025-12-01.
    assert_eq!(created["nextDueAt"], 1_764_568_800_000u64);

    assert_eq!(world.ids("alice").await, vec![id.clone()]);
    assert_eq!(
        world.ids("carol").await,
        vec![id.clone()],
        "an admin of the tenant sees it"
    );
    assert!(
        world.ids("bob").await.is_empty(),
        "another user of the tenant does not"
    );
    assert!(
        world.ids("mallory").await.is_empty(),
        "another tenant's admin does not"
    );

    let path = format!("/schedules/{id}");
    for who in ["bob", "mallory"] {
        let (status, body) = world.call(who, "DELETE", &path, Value::Null).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{who}: {body}");
        assert_eq!(body["code"], "SCHEDULE_NOT_FOUND");
    }
    assert_eq!(world.ids("alice").await, vec![id.clone()], "still there");
    let (status, body) = world.call("carol", "DELETE", &path, Value::Null).await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({ "id": id, "deleted": true }))
    );
    assert!(world.ids("alice").await.is_empty());
    let (status, body) = world.call("alice", "DELETE", &path, Value::Null).await;
    assert_eq!(
        (status, body["code"].clone()),
        (StatusCode::NOT_FOUND, json!("SCHEDULE_NOT_FOUND"))
    );

    // The owner deletes its own.
    let (_, created) = world
        .call("alice", "POST", "/schedules", every(60, "new"))
        .await;
    let path = format!("/schedules/{}", created["id"].as_str().unwrap());
    let (status, _) = world.call("alice", "DELETE", &path, Value::Null).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_due_tick_is_claimed_once_by_two_schedulers_and_runs_as_its_owner() {
    let world = World::new();
    let (status, created) = world
        .call("alice", "POST", "/schedules", every(2, "new"))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    // Two instances over the same store, neither with a background executor: each drives
    // the runs it starts before `tick` returns.
    let one = Scheduler::new(self_engine(&world.store, &world.clock, "one"));
    let two = Scheduler::new(self_engine(&world.store, &world.clock, "two"));
    assert_eq!(one.tick().await.started, 0, "not due yet");
    world.clock.advance(7_000); // three ticks missed: T0+2 s, +4 s, +6 s
    let (a, b) = futures::join!(one.tick(), two.tick());
    assert_eq!(a.started + b.started, 1, "{a:?} {b:?}");
    assert_eq!(a.failed + b.failed, 0);
    assert_eq!(
        one.tick().await.started + two.tick().await.started,
        0,
        "missed ticks ran once"
    );

    let (_, listed) = world.call("alice", "GET", "/schedules", Value::Null).await;
    let schedule = &listed["schedules"][0];
    assert_eq!(schedule["ticks"], 1);
    assert_eq!(schedule["nextDueAt"], T0 + 8_000);
    assert_eq!(schedule["lastRun"]["tickAt"], T0 + 2_000);
    let thread = schedule["lastRun"]["threadId"].as_str().unwrap();
    let run = schedule["lastRun"]["runId"].as_str().unwrap();
    let (status, status_view) = world
        .call(
            "alice",
            "GET",
            &format!("/threads/{thread}/runs/{run}"),
            Value::Null,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{status_view}");
    assert_eq!(status_view["status"], "succeeded");
    let (status, view) = world
        .call("alice", "GET", &format!("/threads/{thread}"), Value::Null)
        .await;
    assert_eq!(status, StatusCode::OK, "the owner's thread: {view}");
    let text = view.to_string();
    assert!(
        text.contains("the daily report") && text.contains("report ready"),
        "{text}"
    );
    let (status, _) = world
        .call("bob", "GET", &format!("/threads/{thread}"), Value::Null)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "not bob's");

    world.clock.advance(1_000);
    let (a, b) = futures::join!(two.tick(), one.tick());
    assert_eq!(a.started + b.started, 1, "the next tick, once");
}

#[tokio::test]
async fn a_fixed_thread_gets_each_ticks_messages_appended() {
    let world = World::new();
    let (status, created) = world
        .call("alice", "POST", "/schedules", every(60, "digest"))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let scheduler = Scheduler::new(self_engine(&world.store, &world.clock, "one"));
    for _ in 0..2 {
        world.clock.advance(60_000);
        let report = scheduler.tick().await;
        assert_eq!((report.started, report.failed), (1, 0), "{report:?}");
    }
    let (status, view) = world
        .call("alice", "GET", "/threads/digest", Value::Null)
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    let texts: Vec<&str> = view["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(
        texts,
        [
            "the daily report",
            "report ready",
            "the daily report",
            "report ready"
        ]
    );
}
