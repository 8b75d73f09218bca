//! Threads as a product over HTTP: the caller's list (paged by sealed cursors), rename and
//! archive, deletion of everything a thread stored, the history in pages, and the same
//! threads in CopilotKit's shapes (REST and the single-route envelope).

mod support;
mod thread_app;

use http::StatusCode;
use serde_json::{Value, json};
use support::code;
use thread_app::{App, app};

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
