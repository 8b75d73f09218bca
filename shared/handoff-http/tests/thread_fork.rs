//! Forking a thread over HTTP, and `parentRunId` on `RUN_STARTED`.

mod support;
mod thread_app;

use http::StatusCode;
use serde_json::{Value, json};
use support::code;
use thread_app::{App, app};

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
