//! An MCP tool in the agent's loop, with a fault the reference server will not make on
//! demand: the server acts but its answer never arrives (a timeout after sending). The
//! approval stays in doubt, the re-drive sends `tools/call` again under the same
//! idempotency key, and a replay of the re-drive calls nothing.

#[path = "support/mcp_answer.rs"]
mod mcp_answer;

use mcp_answer::Answer;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use agui_protocol::{Event, RunAgentInput, RunFinishedOutcome};
use async_trait::async_trait;
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::outbound::{Body, Outbound, OutboundError, whole};
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{ApprovalPolicy, Engine, RunOptions};
use handoff_llm::mcp::McpServer;
use handoff_llm::{LlmAgent, Provider};
use serde_json::{Value, json};

#[derive(Default)]
struct Model {
    turns: Mutex<VecDeque<String>>,
    requests: Mutex<Vec<Value>>,
}

#[async_trait]
impl Outbound for Model {
    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError> {
        let body = serde_json::from_slice(request.body()).unwrap();
        self.requests.lock().unwrap().push(body);
        let body = self.turns.lock().unwrap().pop_front().unwrap_or_default();
        Ok(http::Response::new(whole(body.into_bytes())))
    }
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let chunk = json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] });
    format!("data: {chunk}\n\n")
}

fn text_turn(text: &str) -> String {
    chunk(json!({ "content": text }), None) + &chunk(json!({}), Some("stop")) + "data: [DONE]\n\n"
}

fn call_turn(name: &str, args: &str) -> String {
    chunk(
        json!({ "tool_calls": [{ "index": 0, "id": "call_1", "function": { "name": name, "arguments": args } }] }),
        None,
    ) + &chunk(json!({}), Some("tool_calls"))
        + "data: [DONE]\n\n"
}

/// An MCP server in process: one tool, `pay`; with `lose_first`, its first call acts and
/// then loses its answer; with `listing_down`, `tools/list` never gets through.
#[derive(Default)]
struct Bank {
    /// Each `tools/call`: its arguments and `_meta.idempotencyKey`.
    calls: Mutex<Vec<(Value, String)>>,
    lose_first: bool,
    listing_down: bool,
}

#[async_trait]
impl Outbound for Bank {
    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError> {
        self.post(&request).map(Answer::into_response)
    }
}

impl Bank {
    fn post(&self, request: &http::Request<Vec<u8>>) -> Result<Answer, OutboundError> {
        let message: Value = serde_json::from_slice(request.body()).unwrap();
        let answer = |result: Value| {
            let body = json!({ "jsonrpc": "2.0", "id": message["id"], "result": result });
            Ok(Answer {
                status: 200,
                content_type: "application/json".into(),
                session_id: Some("s".into()),
                body: serde_json::to_vec(&body).unwrap(),
            })
        };
        match message["method"].as_str().unwrap() {
            // A session server: 2026-07-28's probe is an unknown method.
            "server/discover" => Ok(Answer {
                status: 200,
                content_type: "application/json".into(),
                session_id: None,
                body: serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": message["id"],
                    "error": { "code": -32601, "message": "Method not found" } }))
                .unwrap(),
            }),
            "initialize" => answer(json!({ "protocolVersion": "2025-06-18", "capabilities": {} })),
            "notifications/initialized" => Ok(Answer {
                status: 202,
                content_type: String::new(),
                session_id: None,
                body: Vec::new(),
            }),
            "tools/list" if self.listing_down => Err(OutboundError::NotSent("refused".into())),
            "tools/list" => answer(json!({ "tools": [{ "name": "pay", "description": "Pays",
                "inputSchema": { "type": "object", "properties": { "cents": { "type": "integer" } } } }] })),
            "tools/call" => {
                let params = &message["params"];
                let key = params["_meta"]["idempotencyKey"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                let mut calls = self.calls.lock().unwrap();
                calls.push((params["arguments"].clone(), key));
                if self.lose_first && calls.len() == 1 {
                    return Err(OutboundError::InDoubt("timed out".into()));
                }
                answer(json!({ "content": [{ "type": "text", "text": "paid 700" }] }))
            }
            other => panic!("unexpected {other}"),
        }
    }
}

fn run(engine: &Engine, input: Value) -> Vec<Event> {
    let input: RunAgentInput = serde_json::from_value(input).unwrap();
    block_on(async {
        let stream = engine
            .start(input, RunOptions::default())
            .await
            .expect("accepted");
        stream.collect::<Vec<_>>().await
    })
}

/// An engine (one instance) whose agent pays through `bank`, approval required, on `store`.
fn payer(model: &Arc<Model>, bank: &Arc<Bank>, store: &Arc<MemoryStore>) -> Engine {
    let provider = Provider::OpenAi {
        base_url: "http://127.0.0.1:1/v1".into(),
        api_key: "k".into(),
        model: "m".into(),
    };
    let agent = LlmAgent::new("payer", provider, model.clone())
        .mcp_http(bank.clone())
        .mcp(
            McpServer::streamable_http("bank", "https://bank.example/mcp")
                .requiring_approval(ApprovalPolicy::new()),
        );
    let runtime = Runtime::new(
        ManualClock::new(1_764_421_200_000),
        SequentialIds::new("t"),
        NeverSleep,
    );
    Engine::new(agent, store.clone(), runtime)
}

#[test]
fn an_mcp_call_in_doubt_is_re_driven_under_its_key_and_a_replay_calls_nothing() {
    let model = Arc::new(Model::default());
    model.turns.lock().unwrap().extend([
        call_turn("bank__pay", r#"{"cents":700}"#),
        text_turn("Paid."),
    ]);
    let bank = Arc::new(Bank {
        lose_first: true,
        ..Bank::default()
    });
    let engine = payer(&model, &bank, &Arc::new(MemoryStore::new()));

    let first = run(
        &engine,
        json!({ "threadId": "t1", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "Pay 7" }] }),
    );
    let offered = model.requests.lock().unwrap()[0]["tools"].clone();
    assert_eq!(offered[0]["function"]["name"], "bank__pay");
    let Some(Event::RunFinished(finished)) = first.last() else {
        panic!("{first:?}")
    };
    let Some(RunFinishedOutcome::Interrupt { interrupts, .. }) = finished.outcome.clone() else {
        panic!("expected an approval interrupt")
    };
    assert!(
        bank.calls.lock().unwrap().is_empty(),
        "nothing before the approval"
    );

    let approve = |run_id: &str| {
        json!({ "threadId": "t1", "runId": run_id, "messages": [],
        "resume": [{ "interruptId": interrupts[0].id, "status": "resolved", "payload": { "approved": true } }] })
    };
    let lost = run(&engine, approve("r2"));
    assert!(
        matches!(lost.last(), Some(Event::RunError(_))),
        "in doubt: {lost:?}"
    );
    let redriven = run(&engine, approve("r3"));
    let result = redriven.iter().find_map(|e| match e {
        Event::ToolCallResult(r) => Some(r.content.text()),
        _ => None,
    });
    assert_eq!(
        result.as_deref(),
        Some("paid 700"),
        "the text itself, not a JSON string"
    );
    let replay = run(&engine, approve("r3"));
    assert!(replay.iter().any(|e| matches!(e, Event::ToolCallResult(_))));
    let calls = bank.calls.lock().unwrap();
    assert_eq!(
        calls.len(),
        2,
        "the re-drive called again, the replay did not"
    );
    assert_eq!(calls[0], calls[1], "same arguments, same idempotency key");
    assert_eq!(calls[0].0, json!({ "cents": 700 }));
}

#[test]
fn an_approval_answered_while_the_server_cannot_be_listed_still_calls_once() {
    let model = Arc::new(Model::default());
    model.turns.lock().unwrap().extend([
        call_turn("bank__pay", r#"{"cents":700}"#),
        text_turn("Paid."),
    ]);
    let store = Arc::new(MemoryStore::new());
    let listed = Arc::new(Bank::default());
    let first = run(
        &payer(&model, &listed, &store),
        json!({ "threadId": "t1", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "Pay 7" }] }),
    );
    let Some(Event::RunFinished(finished)) = first.last() else {
        panic!("{first:?}")
    };
    let Some(RunFinishedOutcome::Interrupt { interrupts, .. }) = finished.outcome.clone() else {
        panic!("expected an approval interrupt")
    };
    let named = interrupts[0].metadata.as_ref().and_then(|m| m.get("mcp"));
    assert_eq!(named, Some(&json!({ "server": "bank", "tool": "pay" })));

    // Another instance answers; its tools/list does not get through.
    let unlisted = Arc::new(Bank {
        listing_down: true,
        ..Bank::default()
    });
    let approve = json!({ "threadId": "t1", "runId": "r2", "messages": [],
        "resume": [{ "interruptId": interrupts[0].id, "status": "resolved", "payload": { "approved": true } }] });
    let approved = run(&payer(&model, &unlisted, &store), approve);
    let result = approved.iter().find_map(|e| match e {
        Event::ToolCallResult(r) => Some(r.content.text()),
        _ => None,
    });
    assert_eq!(result.as_deref(), Some("paid 700"), "{approved:?}");
    let calls = unlisted.calls.lock().unwrap();
    assert_eq!(calls.len(), 1, "the approved call ran once");
    assert_eq!(calls[0].0, json!({ "cents": 700 }));
    assert!(matches!(approved.last(), Some(Event::RunFinished(_))));
}
