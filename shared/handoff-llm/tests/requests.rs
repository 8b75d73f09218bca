//! Request bodies: stored AG-UI history (not the client's copy) becomes each provider's
//! conversation, tool calls and results paired by id.

use agui_protocol::{Message, Tool};
use handoff_llm::{anthropic, openai};
use serde_json::{Value, json};

fn history() -> Vec<Message> {
    serde_json::from_value(json!([
        {"id": "s", "role": "system", "content": "Be brief."},
        {"id": "u1", "role": "user", "content": "Refund order A1024"},
        {"id": "a1", "role": "assistant", "content": "Checking.", "toolCalls": [
            {"id": "tc-1", "type": "function", "function": {"name": "get_order", "arguments": "{\"orderId\":\"A1024\"}"}},
            {"id": "tc-2", "type": "function", "function": {"name": "get_customer", "arguments": "{\"id\":7}"}}
        ]},
        {"id": "t1", "role": "tool", "toolCallId": "tc-1", "content": "{\"amount\":4000}"},
        {"id": "t2", "role": "tool", "toolCallId": "tc-2", "content": "{\"name\":\"Ada\"}"},
        {"id": "r", "role": "reasoning", "content": "internal"}
    ]))
    .unwrap()
}

fn tools() -> Vec<Tool> {
    serde_json::from_value(json!([{
        "name": "get_order", "description": "Look an order up",
        "parameters": {"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]}
    }]))
    .unwrap()
}

#[test]
fn openai_body_streams_with_usage_and_pairs_calls_with_results() {
    let body = openai::request_body("gpt-x", Some("You refund orders."), &history(), &tools());
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "system", "user", "assistant", "tool", "tool"]
    );
    let assistant = &body["messages"][3];
    assert_eq!(assistant["tool_calls"][1]["id"], "tc-2");
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        "{\"orderId\":\"A1024\"}"
    );
    assert_eq!(body["messages"][4]["tool_call_id"], "tc-1");
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["required"][0],
        "orderId"
    );
}

#[test]
fn anthropic_body_joins_system_prompts_and_groups_tool_results_in_one_user_turn() {
    let body = anthropic::request_body(
        "claude-x",
        Some("You refund orders."),
        &history(),
        &tools(),
        1024,
    );
    assert_eq!(body["system"], "You refund orders.\n\nBe brief.");
    assert_eq!(body["max_tokens"], 1024);
    let turns = body["messages"].as_array().unwrap();
    assert_eq!(turns.len(), 3, "{turns:?}");
    assert_eq!(turns[1]["content"][1]["type"], "tool_use");
    assert_eq!(turns[1]["content"][1]["input"], json!({"orderId": "A1024"}));
    let results: Vec<&Value> = turns[2]["content"].as_array().unwrap().iter().collect();
    assert_eq!(results.len(), 2);
    assert_eq!(results[1]["tool_use_id"], "tc-2");
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
}

#[test]
fn a_failed_tools_error_reaches_both_providers() {
    let mut messages = history();
    messages.push(
        serde_json::from_value(json!({"id": "t3", "role": "tool", "toolCallId": "tc-2",
            "content": "Invalid id", "error": "Invalid id"}))
        .unwrap(),
    );
    let body = openai::request_body("gpt-x", None, &messages, &tools());
    let told = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(told["content"], "Invalid id");
    let body = anthropic::request_body("claude-x", None, &messages, &tools(), 1024);
    let turn = body["messages"].as_array().unwrap().last().unwrap().clone();
    let result = turn["content"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(result["is_error"], true);
    assert_eq!(result["content"], "Invalid id");
    let ok = &turn["content"][0];
    assert!(ok.get("is_error").is_none(), "{ok}");
}
