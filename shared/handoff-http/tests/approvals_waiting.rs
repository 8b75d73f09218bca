//! `GET /approvals/waiting`, the console's bell: what the caller may answer now, under each
//! interrupt's approval policy (the demo's refunds need role `approver`, not the requester),
//! in its own tenant only, gone once answered by any route and once expired.

// The app sends its requests through it; its error-code reader is not needed here.
#[allow(dead_code)]
mod support;
mod thread_app;

use http::StatusCode;
use serde_json::{Value, json};
use thread_app::{App, T0, app_with_approvers};

/// `(count, [(threadId, requestedBy)])` as `who` sees it.
async fn waiting(app: &App, who: &str) -> (u64, Vec<(String, String)>) {
    let (status, body) = app
        .call(who, "GET", "/approvals/waiting", Value::Null)
        .await;
    assert_eq!(status, StatusCode::OK, "{who}: {body}");
    assert!(body.get("more").is_none(), "{body}");
    let listed: Vec<(String, String)> = body["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let field = |name: &str| a[name].as_str().unwrap_or_default().to_owned();
            (field("threadId"), field("requestedBy"))
        })
        .collect();
    let count = body["count"].as_u64().unwrap();
    assert_eq!(count as usize, listed.len(), "{body}");
    (count, listed)
}

/// Answers the one interrupt `thread` waits on, as `who`, over AG-UI.
async fn answer(app: &App, who: &str, thread: &str, interrupt: &str, status: &str) {
    let resume = json!({"threadId": thread, "runId": format!("{thread}-{who}-{status}"),
        "messages": [], "resume": [{"interruptId": interrupt, "status": status,
        "payload": {"approved": true}}]});
    let headers = [("host", "localhost"), ("authorization", who)];
    let (code, body) =
        support::send(&app.router, "POST", "/agent", &headers, resume.to_string()).await;
    assert_eq!(code, StatusCode::OK, "{body}");
    assert!(body.contains("RUN_FINISHED"), "{body}");
}

fn pair(thread: &str, who: &str) -> (String, String) {
    (thread.to_owned(), who.to_owned())
}

#[tokio::test]
async fn the_bell_counts_what_the_caller_may_answer_until_it_is_answered() {
    let app = app_with_approvers();
    app.say("alice", "w-1", 1, "Refund order A1024").await;
    app.say("carol", "w-2", 1, "Refund order B2048").await;

    // Carol holds the role but asked for w-2 herself: four eyes, so only alice's waits for her.
    assert_eq!(
        waiting(&app, "carol").await,
        (1, vec![pair("w-1", "alice")])
    );
    // Erin, another approver, has both, newest first.
    assert_eq!(
        waiting(&app, "erin").await,
        (2, vec![pair("w-2", "carol"), pair("w-1", "alice")])
    );
    // Without the role nothing waits for alice, her own request included; nor for an
    // approver of another tenant.
    for who in ["alice", "bob", "grace"] {
        assert_eq!(waiting(&app, who).await, (0, vec![]), "{who}");
    }

    // What one entry says: the interrupt, its message, who asked and when (Unix ms).
    let (_, body) = app
        .call("carol", "GET", "/approvals/waiting", Value::Null)
        .await;
    let entry = &body["approvals"][0];
    let interrupt_1 = entry["interruptId"].as_str().unwrap().to_owned();
    assert!(
        entry["message"].as_str().unwrap().contains("A1024"),
        "{entry}"
    );
    let requested_at = entry["requestedAt"].as_u64().unwrap();
    assert!(requested_at > T0, "{entry}");
    assert!(
        entry["expiresAt"].as_u64().unwrap() > requested_at,
        "{entry}"
    );
    let (_, inbox) = app.call("erin", "GET", "/approvals", Value::Null).await;
    let interrupt_2 = inbox["approvals"][0]["interruptId"]
        .as_str()
        .unwrap()
        .to_owned();

    // Erin approves carol's: gone for erin, carol's bell unchanged.
    answer(&app, "erin", "w-2", &interrupt_2, "resolved").await;
    assert_eq!(waiting(&app, "erin").await, (1, vec![pair("w-1", "alice")]));
    assert_eq!(
        waiting(&app, "carol").await,
        (1, vec![pair("w-1", "alice")])
    );

    // The requester withdraws hers (her right): it stops waiting for every approver.
    answer(&app, "alice", "w-1", &interrupt_1, "cancelled").await;
    for who in ["carol", "erin"] {
        assert_eq!(waiting(&app, who).await, (0, vec![]), "{who}");
    }
}

#[tokio::test]
async fn an_expired_interrupt_no_longer_rings_though_the_inbox_lists_it() {
    let app = app_with_approvers();
    app.say("alice", "x-1", 1, "Refund order A1024").await;
    assert_eq!(waiting(&app, "carol").await.0, 1);
    // The demo's interrupts expire after 300 s.
    app.clock.advance(301_000);
    assert_eq!(waiting(&app, "carol").await, (0, vec![]));
    let (_, inbox) = app.call("carol", "GET", "/approvals", Value::Null).await;
    assert_eq!(inbox["approvals"].as_array().unwrap().len(), 1, "{inbox}");
}

#[tokio::test]
async fn the_bell_needs_credentials() {
    let app = app_with_approvers();
    let (status, body) = app
        .call("nobody", "GET", "/approvals/waiting", Value::Null)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(body["code"].is_string(), "{body}");
}

/// A JSON-RPC call on `POST /a2a`; its result.
async fn a2a(app: &App, who: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (status, reply) = app.call(who, "POST", "/a2a", body).await;
    assert_eq!(status, StatusCode::OK, "{method}: {reply}");
    assert!(reply.get("error").is_none(), "{method}: {reply}");
    reply["result"].clone()
}

#[tokio::test]
async fn an_answer_over_a2a_clears_the_bell_too() {
    let app = app_with_approvers();
    let ask = json!({"message": {"messageId": "a2a-ask", "contextId": "w-a2a",
        "role": "ROLE_USER", "parts": [{"text": "Refund order A1024"}]}});
    let task = a2a(&app, "alice", "SendMessage", ask).await["task"].clone();
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{task}"
    );
    assert_eq!(
        waiting(&app, "carol").await,
        (1, vec![pair("w-a2a", "alice")])
    );

    let (_, body) = app
        .call("carol", "GET", "/approvals/waiting", Value::Null)
        .await;
    let interrupt = body["approvals"][0]["interruptId"].clone();
    let approve = json!({"message": {"messageId": "a2a-yes", "taskId": task["id"],
        "role": "ROLE_USER", "parts": [{"data": {"interruptId": interrupt,
        "payload": {"approved": true}}}]}});
    let done = a2a(&app, "carol", "SendMessage", approve).await;
    assert_eq!(
        done["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert_eq!(waiting(&app, "carol").await, (0, vec![]));
}
