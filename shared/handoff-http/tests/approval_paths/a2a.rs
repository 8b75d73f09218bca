//! The approval-path scenario with the requester and the approver on A2A (`POST /a2a`)
//! instead of AG-UI: the same policy holds, because the answer is the same resume.

use http::StatusCode;
use serde_json::{Value, json};

use super::call;
use super::rows::{Case, Row};

/// A JSON-RPC call; the result or the error object.
async fn rpc(app: &axum::Router, who: &str, method: &str, params: Value) -> Result<Value, Value> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (status, text) = call(app, who, "POST", "/a2a", body).await;
    assert_eq!(status, StatusCode::OK, "{method}: {text}");
    let reply: Value = serde_json::from_str(&text).unwrap();
    match reply.get("error") {
        Some(error) => Err(error.clone()),
        None => Ok(reply["result"].clone()),
    }
}

/// The Handoff code an A2A error names (`data[0].reason`).
fn reason(error: &Value) -> &str {
    error["data"][0]["reason"].as_str().unwrap_or_default()
}

fn answer(task: &str, message_id: &str, interrupt: &str, payload: Value) -> Value {
    json!({"message": {"messageId": message_id, "taskId": task, "role": "ROLE_USER",
        "parts": [{"data": {"interruptId": interrupt, "payload": payload}}]}})
}

pub(crate) async fn scenario(row: &Row) {
    let case = (row.build)();
    let name = row.name;
    let ask = json!({"message": {"messageId": "a2a-ask", "contextId": "t-a2a", "role": "ROLE_USER",
        "parts": [{"text": case.text}]}});
    let task = rpc(&case.ask, "alice", "SendMessage", ask).await.unwrap()["task"].clone();
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{name}: {task}"
    );
    let task_id = task["id"].as_str().unwrap();
    let question = &task["status"]["message"]["parts"][1]["data"];
    let id = question["interruptId"].as_str().unwrap();

    let app = &case.answer;
    let approve = json!({"approved": true});
    let own = rpc(
        app,
        "alice",
        "SendMessage",
        answer(task_id, "a2a-self", id, approve.clone()),
    )
    .await;
    let error = own.expect_err(&format!("{name}: the requester approved her own request"));
    assert_eq!(reason(&error), "FORBIDDEN", "{name}: {error}");
    let edit = json!({"approved": true, "editedArgs": case.bad_edit});
    let wide = rpc(
        app,
        "bob",
        "SendMessage",
        answer(task_id, "a2a-wide", id, edit),
    )
    .await;
    let error = wide.expect_err(&format!("{name}: an edit out of bounds"));
    assert_eq!(
        (error["code"].as_i64(), reason(&error)),
        (Some(-32602), "RESUME_PAYLOAD_INVALID"),
        "{name}: {error}"
    );
    assert_eq!(
        (case.executed)(),
        0,
        "{name}: nothing executed before the approval"
    );

    let yes = answer(task_id, "a2a-yes", id, approve);
    let done = rpc(app, "bob", "SendMessage", yes.clone()).await.unwrap();
    assert_eq!(
        done["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{name}: {done}"
    );
    assert_eq!((case.executed)(), 1, "{name}: exactly one execution");
    let again = rpc(app, "bob", "SendMessage", yes).await.unwrap();
    assert_eq!(
        again["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{name}: {again}"
    );
    assert_eq!(
        (case.executed)(),
        1,
        "{name}: a retried answer executes nothing"
    );
    let read = rpc(app, "alice", "GetTask", json!({"id": task_id}))
        .await
        .unwrap();
    assert_eq!(
        read["status"]["state"], "TASK_STATE_COMPLETED",
        "{name}: {read}"
    );
}

/// An interrupt answered over AG-UI (`POST /agent`) first: an A2A answer to it then lost
/// that race and is told `INTERRUPT_NOT_PENDING`, as a second AG-UI answer would be; the
/// refund ran once. (With no approval policy: the requester answers both.)
pub(crate) async fn answered_over_ag_ui_first(case: Case) {
    let ask = json!({"message": {"messageId": "a2a-ask", "contextId": "t-a2a", "role": "ROLE_USER",
        "parts": [{"text": case.text}]}});
    let task = rpc(&case.ask, "alice", "SendMessage", ask).await.unwrap()["task"].clone();
    let task_id = task["id"].as_str().unwrap();
    let id = task["status"]["message"]["parts"][1]["data"]["interruptId"]
        .as_str()
        .unwrap();
    let approve = json!({"approved": true});
    let resume = super::resume("t-a2a", "r-ag-ui", id, approve.clone());
    let (status, body) = call(&case.answer, "alice", "POST", "/agent", resume).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!((case.executed)(), 1, "the AG-UI answer refunded");
    let late = answer(task_id, "a2a-late", id, approve);
    let late = rpc(&case.answer, "alice", "SendMessage", late).await;
    let error = late.expect_err("an A2A answer after the AG-UI one");
    assert_eq!(reason(&error), "INTERRUPT_NOT_PENDING", "{error}");
    assert_eq!((case.executed)(), 1, "exactly one refund");
    let read = rpc(&case.answer, "alice", "GetTask", json!({"id": task_id}))
        .await
        .unwrap();
    assert_eq!(read["status"]["state"], "TASK_STATE_COMPLETED", "{read}");
}
