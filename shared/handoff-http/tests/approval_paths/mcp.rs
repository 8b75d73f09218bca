//! The approval-path scenario with the requester and the approver on MCP 2026-07-28
//! (`POST /mcp`, `input_required` and its retry) instead of AG-UI: the same policy holds,
//! because the retry's answer is the same resume through the engine's claim.

use http::StatusCode;
use serde_json::{Value, json};

use super::call;
use super::rows::Row;

const THREAD: &str = "t-mcp";

/// A JSON-RPC call on `/mcp`; the result or the error object.
async fn rpc(app: &axum::Router, who: &str, method: &str, params: Value) -> Result<Value, Value> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (status, text) = call(app, who, "POST", "/mcp", body).await;
    assert_eq!(status, StatusCode::OK, "{method}: {text}");
    let reply: Value = serde_json::from_str(&text).unwrap();
    match reply.get("error") {
        Some(error) => Err(error.clone()),
        None => Ok(reply["result"].clone()),
    }
}

/// `tools/call` of `tool` as a 2026-07-28 client that can elicit, with `extra` params.
async fn tool_call(
    app: &axum::Router,
    who: &str,
    tool: &str,
    arguments: Value,
    extra: Value,
) -> Result<Value, Value> {
    let mut params = json!({"name": tool, "arguments": arguments, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}});
    for (key, value) in extra.as_object().unwrap() {
        params[key] = value.clone();
    }
    rpc(app, who, "tools/call", params).await
}

pub(crate) async fn scenario(row: &Row) {
    let case = (row.build)();
    let name = row.name;
    let listed = rpc(&case.ask, "alice", "tools/list", json!({}))
        .await
        .unwrap();
    let tool = listed["tools"][0]["name"].as_str().unwrap().to_owned();
    let ask = json!({"message": case.text, "threadId": THREAD});
    let asked = tool_call(&case.ask, "alice", &tool, ask.clone(), json!({}))
        .await
        .unwrap();
    assert_eq!(asked["resultType"], "input_required", "{name}: {asked}");
    assert!(
        asked.get("inputRequests").is_none(),
        "{name}: the requester is not asked to approve her own request: {asked}"
    );
    let alice_state = asked["requestState"].as_str().unwrap().to_owned();
    let (_, thread) = call(
        &case.answer,
        "alice",
        "GET",
        &format!("/threads/{THREAD}"),
        Value::Null,
    )
    .await;
    let thread: Value = serde_json::from_str(&thread).unwrap();
    let id = thread["pendingInterrupts"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // Alice answers anyway: refused by the policy, naming it; nothing ran.
    let accept = json!({id.clone(): {"action": "accept", "content": {"approved": true}}});
    let own = tool_call(
        &case.answer,
        "alice",
        &tool,
        ask.clone(),
        json!({"requestState": alice_state, "inputResponses": accept}),
    )
    .await;
    let error = own.expect_err(&format!("{name}: the requester approved her own request"));
    assert_eq!(error["data"]["code"], "FORBIDDEN", "{name}: {error}");
    // Bob cannot use her state; a forged one opens for nobody.
    let stolen = tool_call(
        &case.answer,
        "bob",
        &tool,
        ask.clone(),
        json!({"requestState": alice_state, "inputResponses": accept}),
    )
    .await;
    assert_eq!(
        stolen.unwrap_err()["data"]["code"],
        "REQUEST_STATE_INVALID",
        "{name}"
    );
    let last = if alice_state.ends_with('0') { '1' } else { '0' };
    let forged = format!("{}{last}", &alice_state[..alice_state.len() - 1]);
    let forged = tool_call(
        &case.answer,
        "alice",
        &tool,
        ask.clone(),
        json!({"requestState": forged, "inputResponses": accept}),
    )
    .await;
    assert_eq!(
        forged.unwrap_err()["data"]["code"],
        "REQUEST_STATE_INVALID",
        "{name}"
    );
    assert_eq!(
        (case.executed)(),
        0,
        "{name}: nothing executed before the approval"
    );

    // Bob asks for the thread's outcome: he is asked to approve.
    let poll = json!({"threadId": THREAD});
    let pending = tool_call(&case.answer, "bob", &tool, poll.clone(), json!({}))
        .await
        .unwrap();
    assert_eq!(pending["resultType"], "input_required", "{name}: {pending}");
    let request = &pending["inputRequests"][&id];
    assert_eq!(request["method"], "elicitation/create", "{name}: {pending}");
    assert_eq!(
        request["params"]["requestedSchema"]["properties"]["approved"]["type"], "boolean",
        "{name}: {pending}"
    );
    let bob_state = pending["requestState"].clone();
    let retry = json!({"requestState": bob_state, "inputResponses": accept});
    let done = tool_call(&case.answer, "bob", &tool, poll.clone(), retry.clone())
        .await
        .unwrap();
    assert_eq!(done["resultType"], "complete", "{name}: {done}");
    assert_eq!(
        done["structuredContent"]["status"], "completed",
        "{name}: {done}"
    );
    assert_eq!((case.executed)(), 1, "{name}: exactly one execution");
    let again = tool_call(&case.ask, "bob", &tool, poll, retry)
        .await
        .unwrap();
    assert_eq!(
        again["structuredContent"], done["structuredContent"],
        "{name}: the replay"
    );
    assert_eq!(
        (case.executed)(),
        1,
        "{name}: a replayed requestState executes nothing"
    );

    // Alice's retry of her own state now learns the outcome, and runs nothing.
    let polled = tool_call(
        &case.ask,
        "alice",
        &tool,
        ask,
        json!({"requestState": alice_state}),
    )
    .await
    .unwrap();
    assert_eq!(
        polled["structuredContent"]["status"], "completed",
        "{name}: {polled}"
    );
    assert_eq!((case.executed)(), 1, "{name}: {polled}");
}
