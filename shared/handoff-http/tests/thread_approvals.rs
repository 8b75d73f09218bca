//! Approvals over HTTP: the inbox of what each caller may resolve, and the audit trail of who
//! approved what (for auditors only).

// The app sends its requests through it; its error-code reader is not needed here.
#[allow(dead_code)]
mod support;
mod thread_app;

use http::StatusCode;
use serde_json::{Value, json};
use thread_app::{app, app_with_approvers};

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
