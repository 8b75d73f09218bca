//! Threads as a product over HTTP: the caller's list (paged by sealed cursors), rename and
//! archive, deletion of everything a thread stored, the history in pages, and the same
//! threads in CopilotKit's shapes (REST and the single-route envelope).

mod support;

use std::sync::Arc;

use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, Principal, Store};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_http::{AuthError, Authenticator, HttpConfig, Routes};
use http::StatusCode;
use serde_json::{Value, json};
use support::code;

const T0: u64 = 1_764_421_200_000;

/// `authorization: alice` or `bob`, both of tenant acme.
struct Named;

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
                "carol" => Ok(Principal::new("acme", who).with_roles(["approver"])),
                "dave" => Ok(Principal::new("acme", who).with_roles(["auditor"])),
                _ => Err(AuthError::unauthenticated("who are you?")),
            }
        })
    }
    fn scheme(&self) -> &'static str {
        "test-names"
    }
}

struct App {
    router: axum::Router,
    store: Arc<MemoryStore>,
    clock: Arc<ManualClock>,
}

fn app() -> App {
    app_with(DemoConfig::default())
}

/// Refunds above 0 cents need role `approver`, not the requester.
fn app_with_approvers() -> App {
    app_with(DemoConfig {
        approver_above_cents: Some(0),
        ..DemoConfig::default()
    })
}

fn app_with(config: DemoConfig) -> App {
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
    async fn call(&self, who: &str, method: &str, uri: &str, body: Value) -> (StatusCode, Value) {
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
    async fn say(&self, who: &str, thread: &str, turn: u32, text: &str) {
        self.clock.advance(1_000);
        let input = json!({"threadId": thread, "runId": format!("{thread}-r{turn}"), "messages": [
            {"id": format!("{thread}-m{turn}"), "role": "user", "content": text}]});
        let headers = [("host", "localhost"), ("authorization", who)];
        let (status, body) =
            support::send(&self.router, "POST", "/agent", &headers, input.to_string()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.contains("RUN_FINISHED"), "{body}");
    }

    fn ids(page: &Value) -> Vec<String> {
        page["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Every key the store holds for `thread` (tenant acme).
    async fn keys(&self, thread: &str) -> Vec<String> {
        let partition = handoff_core::principal::partition("acme", thread).unwrap();
        self.store
            .list(&partition, "", T0 + 3_600_000)
            .await
            .unwrap()
    }
}

#[tokio::test]
async fn a_caller_lists_its_own_threads_latest_first_in_sealed_pages() {
    let app = app();
    app.say("alice", "a-1", 1, "hello").await;
    app.say("alice", "a-2", 1, "hello").await;
    app.say("bob", "b-1", 1, "hello").await;
    app.say("alice", "a-3", 1, "hello").await;
    app.say("alice", "a-1", 2, "hello again").await;

    let (status, all) = app.call("alice", "GET", "/threads", Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{all}");
    assert_eq!(
        App::ids(&all),
        ["a-1", "a-3", "a-2"],
        "latest activity first, alice's only"
    );
    assert_eq!(all["nextCursor"], Value::Null);
    let first = &all["threads"][0];
    assert_eq!(first["status"], "idle");
    assert_eq!(first["archived"], false);
    assert_eq!(first["name"], Value::Null);
    assert_eq!(first["agentId"], "refund-demo");
    assert!(
        first["createdAt"].as_str().unwrap().ends_with('Z'),
        "{first}"
    );
    assert!(first["lastRunAt"].as_str().unwrap() > first["createdAt"].as_str().unwrap());

    let (_, page1) = app
        .call("alice", "GET", "/threads?limit=2", Value::Null)
        .await;
    assert_eq!(App::ids(&page1), ["a-1", "a-3"]);
    let cursor = page1["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let (_, page2) = app
        .call(
            "alice",
            "GET",
            &format!("/threads?limit=2&cursor={cursor}"),
            Value::Null,
        )
        .await;
    assert_eq!(App::ids(&page2), ["a-2"]);
    assert_eq!(page2["nextCursor"], Value::Null);

    // Bob sees his own; alice's cursor is not his list's, and an altered one is nobody's.
    let (_, bobs) = app.call("bob", "GET", "/threads", Value::Null).await;
    assert_eq!(App::ids(&bobs), ["b-1"]);
    let (status, body) = app
        .call(
            "bob",
            "GET",
            &format!("/threads?cursor={cursor}"),
            Value::Null,
        )
        .await;
    assert_eq!(
        (status, code(&body.to_string())),
        (StatusCode::BAD_REQUEST, "INVALID_CURSOR".into())
    );
    let mut altered = cursor.clone().into_bytes();
    altered[2] = if altered[2] == b'a' { b'b' } else { b'a' };
    let altered = String::from_utf8(altered).unwrap();
    let (status, body) = app
        .call(
            "alice",
            "GET",
            &format!("/threads?cursor={altered}"),
            Value::Null,
        )
        .await;
    assert_eq!(
        (status, code(&body.to_string())),
        (StatusCode::BAD_REQUEST, "INVALID_CURSOR".into())
    );
    for bad in ["0", "101", "ten", "-1"] {
        let (status, body) = app
            .call(
                "alice",
                "GET",
                &format!("/threads?limit={bad}"),
                Value::Null,
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "limit={bad}: {body}");
    }
    let (status, _) = app.call("mallory", "GET", "/threads", Value::Null).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn rename_and_archive_are_the_owners_and_archived_threads_leave_the_default_list() {
    let app = app();
    app.say("alice", "a-1", 1, "hello").await;
    app.say("alice", "a-2", 1, "hello").await;
    let (status, renamed) = app
        .call("alice", "PATCH", "/threads/a-1", json!({"name": "Refunds"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{renamed}");
    assert_eq!(renamed["name"], "Refunds");
    assert_eq!(renamed["id"], "a-1");
    let (status, _) = app
        .call("alice", "PATCH", "/threads/a-2", json!({"archived": true}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, list) = app.call("alice", "GET", "/threads", Value::Null).await;
    assert_eq!(App::ids(&list), ["a-1"]);
    assert_eq!(list["threads"][0]["name"], "Refunds");
    let (_, list) = app
        .call("alice", "GET", "/threads?includeArchived=true", Value::Null)
        .await;
    assert_eq!(App::ids(&list), ["a-2", "a-1"]);
    // An archived thread still works.
    app.say("alice", "a-2", 2, "still there?").await;

    let long = "x".repeat(201);
    for bad in [
        json!({"name": long}),
        json!({"name": "a\u{7}b"}),
        json!({"archived": "yes"}),
        json!([1]),
    ] {
        let (status, body) = app
            .call("alice", "PATCH", "/threads/a-1", bad.clone())
            .await;
        assert_eq!(
            (status, code(&body.to_string())),
            (StatusCode::BAD_REQUEST, "INVALID_INPUT".into()),
            "{bad}"
        );
    }
    let (status, body) = app
        .call("bob", "PATCH", "/threads/a-1", json!({"name": "mine now"}))
        .await;
    assert_eq!(
        (status, code(&body.to_string())),
        (StatusCode::NOT_FOUND, "THREAD_NOT_FOUND".into())
    );
    let (status, _) = app
        .call("alice", "PATCH", "/threads/nope", json!({"name": "x"}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn delete_erases_every_record_and_the_id_starts_afresh() {
    let app = app();
    app.say("alice", "a-1", 1, "hello").await;
    app.say("alice", "a-1", 2, "Refund order A1024").await;
    app.call("alice", "PATCH", "/threads/a-1", json!({"name": "Refunds"}))
        .await;
    let before = app.keys("a-1").await;
    assert!(before.len() >= 5, "{before:?}");

    let (status, body) = app.call("bob", "DELETE", "/threads/a-1", Value::Null).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = app
        .call("alice", "DELETE", "/threads/a-1", Value::Null)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"threadId": "a-1", "deleted": true}));
    assert_eq!(
        app.keys("a-1").await,
        Vec::<String>::new(),
        "was {before:?}"
    );
    for (method, uri) in [
        ("GET", "/threads/a-1"),
        ("GET", "/threads/a-1/messages"),
        ("PATCH", "/threads/a-1"),
        ("DELETE", "/threads/a-1"),
        ("GET", "/threads/a-1/runs/a-1-r1/events"),
    ] {
        let body = if method == "PATCH" {
            json!({"name": "x"})
        } else {
            Value::Null
        };
        let (status, _) = app.call("alice", method, uri, body).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {uri}");
    }
    let (_, list) = app.call("alice", "GET", "/threads", Value::Null).await;
    assert!(App::ids(&list).is_empty());

    app.say("alice", "a-1", 3, "hello").await;
    let (_, thread) = app.call("alice", "GET", "/threads/a-1", Value::Null).await;
    let ids: Vec<&str> = thread["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids[0], "a-1-m3", "a fresh thread: {ids:?}");
    let (_, list) = app.call("alice", "GET", "/threads", Value::Null).await;
    assert_eq!(
        list["threads"][0]["name"],
        Value::Null,
        "the old name went with it"
    );
}

#[tokio::test]
async fn history_pages_walk_back_to_the_first_message() {
    let app = app();
    for turn in 1..=4 {
        app.say("alice", "a-1", turn, &format!("hello {turn}"))
            .await;
    }
    let (_, thread) = app.call("alice", "GET", "/threads/a-1", Value::Null).await;
    let whole: Vec<Value> = thread["messages"].as_array().unwrap().clone();
    assert!(whole.len() >= 8, "{whole:?}");
    for limit in [1, 3, 100] {
        let mut pages: Vec<Vec<Value>> = Vec::new();
        let mut uri = format!("/threads/a-1/messages?limit={limit}");
        loop {
            let (status, page) = app.call("alice", "GET", &uri, Value::Null).await;
            assert_eq!(status, StatusCode::OK, "{page}");
            let messages = page["messages"].as_array().unwrap().clone();
            assert!(messages.len() <= limit && !messages.is_empty());
            pages.push(messages);
            match page["nextBefore"].as_str() {
                Some(before) => {
                    uri = format!("/threads/a-1/messages?limit={limit}&before={before}")
                }
                None => break,
            }
        }
        let joined: Vec<Value> = pages.into_iter().rev().flatten().collect();
        assert_eq!(joined, whole, "limit {limit}");
    }
    let (status, _) = app
        .call("bob", "GET", "/threads/a-1/messages", Value::Null)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = app
        .call(
            "alice",
            "GET",
            "/threads/a-1/messages?before=00.11",
            Value::Null,
        )
        .await;
    assert_eq!(
        (status, code(&body.to_string())),
        (StatusCode::BAD_REQUEST, "INVALID_CURSOR".into())
    );
}

#[tokio::test]
async fn copilotkit_thread_endpoints_answer_in_its_shapes_over_rest_and_the_envelope() {
    let app = app();
    app.say("alice", "a-1", 1, "hello").await;
    app.say("alice", "a-2", 1, "hello").await;
    let (_, info) = app
        .call("alice", "GET", "/copilotkit/info", Value::Null)
        .await;
    let flags =
        json!({"list": true, "inspect": true, "mutations": true, "realtimeMetadata": false});
    assert_eq!(info["threadEndpoints"], flags);
    assert_eq!(info["singleRoute"]["resourceOperations"], true);
    assert_eq!(info["singleRoute"]["threadEndpoints"], flags);

    let (status, list) = app
        .call(
            "alice",
            "GET",
            "/copilotkit/threads?agentId=refund-demo&limit=1",
            Value::Null,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let record = &list["threads"][0];
    assert_eq!(record["id"], "a-2");
    assert_eq!(record["organizationId"], "acme");
    assert_eq!(record["createdById"], "alice");
    assert_eq!(record["agentId"], "refund-demo");
    assert!(list["nextCursor"].is_string());
    let (_, other_agent) = app
        .call(
            "alice",
            "GET",
            "/copilotkit/threads?agentId=someone-else",
            Value::Null,
        )
        .await;
    assert!(App::ids(&other_agent).is_empty());

    let envelope = |path: &str, method: &str, body: Value| json!({"method": "resource/request", "params": {"path": path, "httpMethod": method}, "body": body});
    let (status, renamed) = app
        .call(
            "alice",
            "POST",
            "/copilotkit",
            envelope(
                "/threads/a-1",
                "PATCH",
                json!({"agentId": "refund-demo", "name": "First"}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{renamed}");
    assert_eq!(renamed["name"], "First");
    let (status, archived) = app
        .call(
            "alice",
            "POST",
            "/copilotkit/threads/a-1/archive",
            json!({"agentId": "refund-demo"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(archived, json!({"threadId": "a-1", "archived": true}));
    let (_, list) = app
        .call(
            "alice",
            "POST",
            "/copilotkit",
            envelope("/threads?agentId=refund-demo", "GET", Value::Null),
        )
        .await;
    assert_eq!(App::ids(&list), ["a-2"]);
    let (_, messages) = app
        .call(
            "alice",
            "GET",
            "/copilotkit/threads/a-1/messages",
            Value::Null,
        )
        .await;
    assert_eq!(messages["messages"][0]["id"], "a-1-m1");
    let (_, state) = app
        .call("alice", "GET", "/copilotkit/threads/a-1/state", Value::Null)
        .await;
    assert!(state["state"].is_object(), "{state}");
    let (_, events) = app
        .call(
            "alice",
            "GET",
            "/copilotkit/threads/a-1/events",
            Value::Null,
        )
        .await;
    assert_eq!(events["events"][0]["type"], "RUN_STARTED");
    let (status, _) = app
        .call("alice", "PUT", "/copilotkit/threads/a-1", json!({}))
        .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    let (status, deleted) = app
        .call(
            "alice",
            "DELETE",
            "/copilotkit/threads/a-1",
            json!({"agentId": "refund-demo"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(deleted, json!({"threadId": "a-1", "deleted": true}));
    let (status, _) = app
        .call(
            "bob",
            "POST",
            "/copilotkit",
            envelope("/threads/a-2", "DELETE", json!({})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

fn inbox(page: &Value) -> Vec<(String, String)> {
    page["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["threadId"].as_str().unwrap().to_owned(),
                a["requestedBy"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_approvals_inbox_shows_what_each_caller_may_resolve() {
    let app = app_with_approvers();
    app.say("alice", "r-1", 1, "Refund order A1024").await;
    app.say("alice", "r-2", 1, "Refund order B2048").await;
    app.say("bob", "r-3", 1, "Refund order C4096").await;

    // Carol holds the role: every request, newest first, in pages.
    let (status, all) = app.call("carol", "GET", "/approvals", Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{all}");
    assert_eq!(
        inbox(&all),
        [
            ("r-3".into(), "bob".into()),
            ("r-2".into(), "alice".into()),
            ("r-1".into(), "alice".into())
        ]
    );
    let card = &all["approvals"][2];
    assert_eq!(card["requiredRoles"], json!(["approver"]));
    assert_eq!(card["toolCall"]["args"]["orderId"], "A1024");
    assert!(
        card["interruptId"].is_string() && card["createdAt"].is_string(),
        "{card}"
    );
    let (_, first) = app
        .call("carol", "GET", "/approvals?limit=2", Value::Null)
        .await;
    assert_eq!(inbox(&first).len(), 2);
    let cursor = first["nextCursor"].as_str().unwrap();
    let (_, rest) = app
        .call(
            "carol",
            "GET",
            &format!("/approvals?limit=2&cursor={cursor}"),
            Value::Null,
        )
        .await;
    assert_eq!(inbox(&rest), [("r-1".into(), "alice".into())]);
    assert_eq!(rest["nextCursor"], Value::Null);
    let (status, _) = app
        .call(
            "alice",
            "GET",
            &format!("/approvals?cursor={cursor}"),
            Value::Null,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a cursor is its caller's");

    // Without the role, nobody else's, and not one's own: the policy says not the requester.
    for who in ["alice", "bob"] {
        let (_, page) = app.call(who, "GET", "/approvals", Value::Null).await;
        assert_eq!(inbox(&page), Vec::<(String, String)>::new(), "{who}");
    }

    // Once answered, it leaves the inbox.
    let interrupt = all["approvals"][0]["interruptId"].as_str().unwrap();
    let resume = json!({"threadId": "r-3", "runId": "r-3-yes", "messages": [],
        "resume": [{"interruptId": interrupt, "status": "resolved", "payload": {"approved": true}}]});
    let headers = [("host", "localhost"), ("authorization", "carol")];
    let (status, body) =
        support::send(&app.router, "POST", "/agent", &headers, resume.to_string()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, after) = app.call("carol", "GET", "/approvals", Value::Null).await;
    assert_eq!(inbox(&after).len(), 2);
    assert!(!inbox(&after).iter().any(|(t, _)| t == "r-3"));
}

#[tokio::test]
async fn without_a_role_an_owner_sees_its_own_requests() {
    let app = app();
    app.say("alice", "r-1", 1, "Refund order A1024").await;
    let (_, mine) = app.call("alice", "GET", "/approvals", Value::Null).await;
    assert_eq!(inbox(&mine), [("r-1".into(), "alice".into())]);
    assert_eq!(mine["approvals"][0]["requiredRoles"], json!([]));
    let (_, theirs) = app.call("bob", "GET", "/approvals", Value::Null).await;
    assert!(inbox(&theirs).is_empty());
}

#[tokio::test]
async fn a_fork_keeps_the_history_up_to_a_message_and_leaves_the_source_alone() {
    let app = app();
    app.say("alice", "a-1", 1, "Refund order A1024").await;
    let (_, then) = app.call("alice", "GET", "/threads/a-1", Value::Null).await;
    let interrupt = then["pendingInterrupts"][0]["id"].as_str().unwrap();
    let resume = json!({"threadId": "a-1", "runId": "a-1-yes", "messages": [],
        "resume": [{"interruptId": interrupt, "status": "resolved", "payload": {"approved": true}}]});
    let headers = [("host", "localhost"), ("authorization", "alice")];
    let (status, body) =
        support::send(&app.router, "POST", "/agent", &headers, resume.to_string()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, mid) = app.call("alice", "GET", "/threads/a-1", Value::Null).await;
    app.say("alice", "a-1", 2, "Refund order B2048").await;
    let (_, source) = app.call("alice", "GET", "/threads/a-1", Value::Null).await;
    assert_ne!(source["state"], then["state"], "the runs changed the state");
    let ids: Vec<String> = source["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect();
    let first_turn_end = ids.iter().position(|id| id == "a-1-m2").unwrap() - 1;

    let (status, forked) = app
        .call(
            "alice",
            "POST",
            "/threads/a-1/fork",
            json!({"atMessageId": ids[first_turn_end], "threadId": "a-1-fork"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{forked}");
    assert_eq!(forked, json!({"threadId": "a-1-fork"}));
    let (_, fork) = app
        .call("alice", "GET", "/threads/a-1-fork", Value::Null)
        .await;
    let fork_ids: Vec<&str> = fork["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(fork_ids, ids[..=first_turn_end]);
    assert_eq!(
        fork["state"], mid["state"],
        "the state as it stood after that message"
    );
    assert_ne!(fork["state"], source["state"]);
    let (_, resumed) = app
        .call(
            "alice",
            "GET",
            "/threads/a-1/messages?limit=100",
            Value::Null,
        )
        .await;
    assert!(resumed["messages"].as_array().unwrap().len() > fork_ids.len());
    assert_eq!(fork["status"], "idle");
    assert_eq!(fork["pendingInterrupts"], json!([]));
    assert_eq!(fork["owner"], "alice");
    let (_, again) = app.call("alice", "GET", "/threads/a-1", Value::Null).await;
    assert_eq!(again, source, "the source is unchanged");

    // The whole history (and the state as it stands) without a message; a fresh id.
    let (status, whole) = app
        .call("alice", "POST", "/threads/a-1/fork", Value::Null)
        .await;
    assert_eq!(status, StatusCode::CREATED, "{whole}");
    let whole_id = whole["threadId"].as_str().unwrap();
    let (_, copy) = app
        .call("alice", "GET", &format!("/threads/{whole_id}"), Value::Null)
        .await;
    assert_eq!(copy["messages"], source["messages"]);
    assert_eq!(copy["state"], source["state"]);
    let (_, list) = app.call("alice", "GET", "/threads", Value::Null).await;
    assert!(
        App::ids(&list).contains(&whole_id.to_owned()),
        "a fork is listed"
    );

    // Regenerate: run on the fork.
    app.say("alice", "a-1-fork", 3, "Refund order B2048 instead")
        .await;

    let (status, body) = app
        .call(
            "alice",
            "POST",
            "/threads/a-1/fork",
            json!({"threadId": "a-1-fork"}),
        )
        .await;
    assert_eq!(
        (status, code(&body.to_string())),
        (StatusCode::CONFLICT, "THREAD_EXISTS".into())
    );
    let (status, _) = app
        .call(
            "alice",
            "POST",
            "/threads/a-1/fork",
            json!({"atMessageId": "nope"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = app
        .call("bob", "POST", "/threads/a-1/fork", Value::Null)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn parent_run_id_is_echoed_on_run_started() {
    let app = app();
    let input = json!({"threadId": "p-1", "runId": "p-1-r1", "parentRunId": "elsewhere-7",
        "messages": [{"id": "p-1-m1", "role": "user", "content": "hello"}]});
    let headers = [("host", "localhost"), ("authorization", "alice")];
    let (status, body) =
        support::send(&app.router, "POST", "/agent", &headers, input.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    let started = body.lines().find(|l| l.contains("RUN_STARTED")).unwrap();
    assert!(
        started.contains("\"parentRunId\":\"elsewhere-7\""),
        "{started}"
    );
}

#[tokio::test]
async fn the_audit_trail_records_who_approved_what_for_auditors_only() {
    let app = app_with_approvers();
    app.say("alice", "au-1", 1, "Refund order A1024").await;
    let (_, inbox_page) = app.call("carol", "GET", "/approvals", Value::Null).await;
    let interrupt = inbox_page["approvals"][0]["interruptId"].as_str().unwrap();
    let resume = json!({"threadId": "au-1", "runId": "au-1-yes", "messages": [],
        "resume": [{"interruptId": interrupt, "status": "resolved", "payload": {"approved": true}}]});
    let headers = [("host", "localhost"), ("authorization", "carol")];
    let (status, body) =
        support::send(&app.router, "POST", "/agent", &headers, resume.to_string()).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    for who in ["alice", "carol"] {
        let (status, body) = app.call(who, "GET", "/audit", Value::Null).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{who}: {body}");
    }
    let (status, page) = app.call("dave", "GET", "/audit", Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let entries = page["entries"].as_array().unwrap();
    let answer = entries
        .iter()
        .find(|e| e["kind"] == "answer")
        .expect("an answer entry");
    assert_eq!(answer["principal"], "carol");
    assert_eq!(answer["roles"], json!(["approver"]));
    assert_eq!(answer["decision"], "approved");
    assert_eq!(answer["interruptId"], interrupt);
    assert_eq!(answer["runId"], "au-1-yes");
    assert_eq!(answer["threadId"], "au-1");
    assert_eq!(answer["payloadHash"].as_str().map(str::len), Some(64));
    assert!(answer["time"].as_str().unwrap().ends_with('Z'), "{answer}");
    let effect = entries
        .iter()
        .find(|e| e["kind"] == "effect")
        .expect("an effect entry");
    assert_eq!(effect["replayed"], false);
    assert!(effect["effectKey"].is_string(), "{effect}");
    // Chained: every entry links to the one before it in its thread.
    let mut seqs: Vec<(u64, String, String)> = entries
        .iter()
        .map(|e| {
            (
                e["seq"].as_u64().unwrap(),
                e["prevHash"].as_str().unwrap().into(),
                e["hash"].as_str().unwrap().into(),
            )
        })
        .collect();
    seqs.sort();
    for pair in seqs.windows(2) {
        assert_eq!(
            pair[1].1, pair[0].2,
            "entry {} links to {}",
            pair[1].0, pair[0].0
        );
    }

    // One entry per line on request.
    let request = http::Request::get("/audit?threadId=au-1&limit=1")
        .header("host", "localhost")
        .header("authorization", "dave")
        .header("accept", "application/x-ndjson")
        .body(axum::body::Body::empty())
        .unwrap();
    let response = tower::ServiceExt::oneshot(app.router.clone(), request)
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "application/x-ndjson");
    assert!(response.headers().contains_key("x-handoff-next-cursor"));
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(serde_json::from_str::<Value>(text.trim()).is_ok());

    let (status, verdict) = app
        .call("dave", "GET", "/audit/verify?threadId=au-1", Value::Null)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(verdict["intact"], true);
    assert_eq!(verdict["entries"], entries.len());
    assert!(verdict.get("firstBroken").is_none());

    // The trail outlives the thread.
    let (status, _) = app
        .call("alice", "DELETE", "/threads/au-1", Value::Null)
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, verdict) = app.call("dave", "GET", "/audit/verify", Value::Null).await;
    assert_eq!(verdict["intact"], true, "{verdict}");
    assert_eq!(verdict["entries"], entries.len());
}
