//! Every path that raises an approval, through the same scenario (issue 49): the policy
//! is role `approver` and someone other than the requester.
//!
//! - alice (the requester, no role) approves → 403 `FORBIDDEN` naming the rule; her edit
//!   is refused too;
//! - bob (approver) edits out of bounds → 422 `RESUME_PAYLOAD_INVALID`;
//! - bob sees the interrupt in `GET /approvals` and can read the thread;
//! - bob approves → the action executes exactly once; a replay executes nothing.
//!
//! The table is built from [`ApprovalSource::ALL`]: a source without a row fails, and each
//! row checks that its interrupt was raised by the source it claims (the policy's echo).
//! The A2A delegation path (the demo's fraud review, then its refund approval, an `Agent`
//! source) needs a real A2A peer: it runs the same scenario in `tests/node/a2a-policy.test.mjs`,
//! and the MCP rows run against real servers on every host in `tests/node/lib/mcp-policy.mjs`.
//! Each row runs a second time with the request and the answers over A2A (`a2a.rs`), and a
//! third time over MCP 2026-07-28 (`mcp.rs`).

#[path = "approval_paths/a2a.rs"]
mod a2a;
#[path = "approval_paths/mcp.rs"]
mod mcp;
#[path = "../../handoff-llm/tests/support/mcp_answer.rs"]
mod mcp_answer;
#[path = "support/named.rs"]
mod named;
#[path = "approval_paths/rows.rs"]
mod rows;
mod support;

use handoff_core::ApprovalSource;
use http::StatusCode;
use serde_json::{Value, json};
use support::{code, send};

async fn call(
    app: &axum::Router,
    who: &str,
    method: &str,
    uri: &str,
    body: Value,
) -> (StatusCode, String) {
    let headers = [("host", "localhost"), ("authorization", who)];
    send(app, method, uri, &headers, body.to_string()).await
}

fn last_event(body: &str) -> Value {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .next_back()
        .unwrap_or_default()
}

fn resume(thread: &str, run: &str, interrupt: &str, payload: Value) -> Value {
    json!({"threadId": thread, "runId": run, "messages": [],
        "resume": [{"interruptId": interrupt, "status": "resolved", "payload": payload}]})
}

async fn scenario(row: &rows::Row) {
    let case = (row.build)();
    let name = row.name;
    let thread = "t-path";
    let ask = json!({"threadId": thread, "runId": "r-ask", "messages": [
        {"id": "m1", "role": "user", "content": case.text}]});
    let (status, body) = call(&case.ask, "alice", "POST", "/agent", ask).await;
    assert_eq!(status, StatusCode::OK, "{name}: {body}");
    let finished = last_event(&body);
    assert_eq!(
        finished["outcome"]["type"], "interrupt",
        "{name}: {finished}"
    );
    let interrupt = &finished["outcome"]["interrupts"][0];
    let id = interrupt["id"].as_str().unwrap();
    let echo = &interrupt["metadata"]["handoff.approval"];
    assert_eq!(
        echo["roles"],
        json!(["approver"]),
        "{name}: the policy's echo: {interrupt}"
    );
    assert_eq!(
        echo["source"],
        serde_json::to_value(row.source).unwrap(),
        "{name}: raised by {:?}",
        row.source
    );

    let app = &case.answer;
    let approve = json!({"approved": true});
    let (status, body) = call(
        app,
        "alice",
        "POST",
        "/agent",
        resume(thread, "r-self", id, approve.clone()),
    )
    .await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::FORBIDDEN, "FORBIDDEN"),
        "{name}: {body}"
    );
    assert!(
        body.contains("someone other than its requester") || body.contains("needs the role"),
        "{name}: the rule is named: {body}"
    );
    let edit = json!({"approved": true, "editedArgs": case.bad_edit});
    let (status, body) = call(
        app,
        "alice",
        "POST",
        "/agent",
        resume(thread, "r-self-edit", id, edit.clone()),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "{name}: the requester's edit: {body}"
    );
    let (status, body) = call(
        app,
        "bob",
        "POST",
        "/agent",
        resume(thread, "r-wide", id, edit),
    )
    .await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, "RESUME_PAYLOAD_INVALID"),
        "{name}: {body}"
    );
    assert_eq!(
        (case.executed)(),
        0,
        "{name}: nothing executed before the approval"
    );

    let (status, body) = call(app, "bob", "GET", "/approvals", Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{name}: {body}");
    let listed: Value = serde_json::from_str(&body).unwrap();
    let ids: Vec<&str> = listed["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["interruptId"].as_str())
        .collect();
    assert_eq!(ids, [id], "{name}: bob's inbox: {body}");
    let (status, body) = call(
        app,
        "bob",
        "GET",
        &format!("/threads/{thread}"),
        Value::Null,
    )
    .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{name}: bob reads the thread: {body}"
    );

    let (status, body) = call(
        app,
        "bob",
        "POST",
        "/agent",
        resume(thread, "r-yes", id, approve.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{name}: {body}");
    assert_eq!(
        last_event(&body)["outcome"]["type"],
        "success",
        "{name}: {body}"
    );
    assert_eq!((case.executed)(), 1, "{name}: exactly one execution");
    let (status, body) = call(
        app,
        "bob",
        "POST",
        "/agent",
        resume(thread, "r-yes", id, approve),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{name}: the replay: {body}");
    assert_eq!((case.executed)(), 1, "{name}: a replay executes nothing");
}

#[test]
fn every_approval_source_has_a_row() {
    for source in ApprovalSource::ALL {
        assert!(
            rows::ROWS.iter().any(|row| row.source == source),
            "no row raises approvals through {source:?}: add one to tests/approval_paths/rows.rs"
        );
    }
}

#[tokio::test]
async fn every_path_that_raises_an_approval_holds_its_policy() {
    for row in rows::ROWS {
        scenario(row).await;
    }
}

/// The same rows with the request and the answers sent over A2A (issue 51).
#[tokio::test]
async fn every_path_holds_its_policy_when_asked_and_answered_over_a2a() {
    for row in rows::ROWS {
        a2a::scenario(row).await;
    }
}

/// The same rows over MCP 2026-07-28: the requester's own answer is refused, the
/// approver's runs once, a replayed `requestState` runs nothing (issue 52).
#[tokio::test]
async fn every_path_holds_its_policy_when_asked_and_answered_over_mcp() {
    for row in rows::ROWS {
        mcp::scenario(row).await;
    }
}

/// An A2A answer after the same interrupt was answered over AG-UI is refused, naming why.
#[tokio::test]
async fn an_a2a_answer_after_an_ag_ui_one_is_told_the_interrupt_is_not_pending() {
    a2a::answered_over_ag_ui_first(rows::open_demo()).await;
}

/// A policy chosen from the arguments is chosen again for edited ones: an edit cannot
/// cross into a more lenient policy.
#[tokio::test]
async fn an_edit_is_held_to_the_policy_of_the_edited_arguments() {
    let case = rows::by_args_small();
    let ask = json!({"threadId": "t", "runId": "r1", "messages": [{"id": "m1", "role": "user", "content": "Charge 0.50"}]});
    let (status, body) = call(&case.ask, "alice", "POST", "/agent", ask).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let finished = last_event(&body);
    let id = finished["outcome"]["interrupts"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // 50 cents: the owner may approve, and the amount is editable upwards by the owner's policy.
    let raise = json!({"approved": true, "editedArgs": {"cents": 5_000}});
    let (status, body) = call(
        &case.answer,
        "alice",
        "POST",
        "/agent",
        resume("t", "r2", &id, raise),
    )
    .await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::FORBIDDEN, "FORBIDDEN"),
        "{body}"
    );
    assert_eq!((case.executed)(), 0);
    let (status, body) = call(
        &case.answer,
        "alice",
        "POST",
        "/agent",
        resume("t", "r3", &id, json!({"approved": true})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!((case.executed)(), 1);
}
