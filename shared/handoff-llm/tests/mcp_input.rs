//! 2026-07-28 in the agent's loop against an in-process stateless server: discovery (no
//! `initialize`), `_meta` and the `Mcp-Method` / `Mcp-Name` headers, and a call answered
//! `input_required` that becomes an interrupt; the answer's run retries with the
//! `inputResponses` and the `requestState` once, a replay and a second answer do not.
//! Handoff's own `/mcp` as the server: tests/node/mcp-client.test.mjs.

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
use handoff_core::{ApprovalPolicy, CoreError, Engine, RunOptions};
use handoff_llm::mcp::McpServer;
use handoff_llm::{LlmAgent, Provider};
use serde_json::{Value, json};

#[derive(Default)]
struct Model {
    turns: Mutex<VecDeque<String>>,
}

#[async_trait]
impl Outbound for Model {
    async fn send(&self, _: http::Request<Vec<u8>>) -> Result<http::Response<Body>, OutboundError> {
        let body = self.turns.lock().unwrap().pop_front().unwrap_or_default();
        Ok(http::Response::new(whole(body.into_bytes())))
    }
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let chunk = json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] });
    format!("data: {chunk}\n\n")
}

fn call_turn(name: &str, args: &str) -> String {
    chunk(
        json!({ "tool_calls": [{ "index": 0, "id": "call_1", "function": { "name": name, "arguments": args } }] }),
        None,
    ) + &chunk(json!({}), Some("tool_calls"))
        + "data: [DONE]\n\n"
}

fn text_turn(text: &str) -> String {
    chunk(json!({ "content": text }), None) + &chunk(json!({}), Some("stop")) + "data: [DONE]\n\n"
}

/// A request as the desk saw it: method, `Mcp-Method`, `Mcp-Name`, params.
type Seen = (String, Option<String>, Option<String>, Value);

/// A stateless server with one tool, `refund`, that asks for an approval first.
#[derive(Default)]
struct Desk {
    seen: Mutex<Vec<Seen>>,
    refunds: Mutex<u32>,
}

#[async_trait]
impl Outbound for Desk {
    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError> {
        let message: Value = serde_json::from_slice(request.body()).unwrap();
        let header = |name: &str| {
            let value = request.headers().get(name)?;
            Some(value.to_str().unwrap().to_owned())
        };
        let method = message["method"].as_str().unwrap().to_owned();
        let params = message["params"].clone();
        let seen = (
            method.clone(),
            header("mcp-method"),
            header("mcp-name"),
            params.clone(),
        );
        self.seen.lock().unwrap().push(seen);
        let result = match method.as_str() {
            "server/discover" => {
                json!({ "supportedVersions": ["2026-07-28"], "capabilities": { "tools": {} },
                "serverInfo": { "name": "desk", "version": "1" } })
            }
            "tools/list" => json!({ "resultType": "complete", "tools": [{ "name": "refund",
                "inputSchema": { "type": "object", "properties": { "order": { "type": "string" } } } }] }),
            "tools/call" => match (params.get("requestState"), &params["inputResponses"]["ok"]) {
                (Some(state), answer) if state == "sealed-1" && answer["action"] == "accept" => {
                    *self.refunds.lock().unwrap() += 1;
                    let approved = answer["content"]["approved"] == true;
                    let text = if approved {
                        "refunded A1"
                    } else {
                        "not refunded"
                    };
                    json!({ "resultType": "complete", "content": [{ "type": "text", "text": text }] })
                }
                _ => json!({ "resultType": "input_required", "requestState": "sealed-1",
                    "inputRequests": { "ok": { "method": "elicitation/create", "params": {
                        "mode": "form", "message": "Refund A1?",
                        "requestedSchema": { "type": "object", "properties": { "approved": { "type": "boolean" } },
                            "required": ["approved"] } } } } }),
            },
            other => panic!("unexpected {other}"),
        };
        let body = json!({ "jsonrpc": "2.0", "id": message["id"], "result": result });
        Ok(Answer {
            status: 200,
            content_type: "application/json".into(),
            session_id: None,
            body: serde_json::to_vec(&body).unwrap(),
        }
        .into_response())
    }
}

fn engine(model: &Arc<Model>, desk: &Arc<Desk>, store: &Arc<MemoryStore>) -> Engine {
    let provider = Provider::OpenAi {
        base_url: "http://127.0.0.1:1/v1".into(),
        api_key: "k".into(),
        model: "m".into(),
    };
    let agent = LlmAgent::new("clerk", provider, model.clone())
        .mcp_http(desk.clone())
        .mcp(
            McpServer::streamable_http("desk", "https://desk.example/mcp")
                .requiring_approval(ApprovalPolicy::new().role("approver")),
        );
    let runtime = Runtime::new(
        ManualClock::new(1_764_421_200_000),
        SequentialIds::new("t"),
        NeverSleep,
    );
    Engine::new(agent, store.clone(), runtime)
}

fn run(engine: &Engine, input: Value, roles: &[&str]) -> Result<Vec<Event>, CoreError> {
    let input: RunAgentInput = serde_json::from_value(input).unwrap();
    let mut options = RunOptions::default();
    options.principal.roles = roles.iter().map(|r| (*r).to_owned()).collect();
    block_on(async {
        let stream = engine.start(input, options).await?;
        Ok(stream.collect::<Vec<_>>().await)
    })
}

fn interrupts_of(events: &[Event]) -> Vec<agui_protocol::Interrupt> {
    match events.last() {
        Some(Event::RunFinished(finished)) => match finished.outcome.clone() {
            Some(RunFinishedOutcome::Interrupt { interrupts, .. }) => interrupts,
            other => panic!("not an interrupt: {other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_input_required_call_is_an_interrupt_and_its_answer_retries_once() {
    let model = Arc::new(Model::default());
    model.turns.lock().unwrap().extend([
        call_turn("desk__refund", r#"{"order":"A1"}"#),
        text_turn("Done."),
    ]);
    let desk = Arc::new(Desk::default());
    let engine = engine(&model, &desk, &Arc::new(MemoryStore::new()));
    let ask = json!({ "threadId": "t1", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "Refund A1" }] });
    let first = run(&engine, ask, &["approver"]).unwrap();
    // The tool's own approval first.
    let approval = interrupts_of(&first);
    assert_eq!(approval[0].reason, "tool_call");
    let approve = json!({ "threadId": "t1", "runId": "r2", "messages": [],
        "resume": [{ "interruptId": approval[0].id, "status": "resolved", "payload": { "approved": true } }] });
    let asked = run(&engine, approve, &["approver"]).unwrap();
    let questions = interrupts_of(&asked);
    assert_eq!(questions.len(), 1);
    let question = &questions[0];
    assert_eq!(question.reason, "mcp_input");
    assert_eq!(question.message.as_deref(), Some("Refund A1?"));
    assert_eq!(
        question.tool_call_id, approval[0].tool_call_id,
        "the same call"
    );
    let schema = question.response_schema.as_deref().unwrap();
    assert_eq!(schema["properties"]["approved"]["type"], "boolean");
    let wire = serde_json::to_string(&questions).unwrap();
    assert!(
        !wire.contains("sealed-1"),
        "the request state stays on the server: {wire}"
    );
    assert!(
        wire.contains("\"roles\":[\"approver\"]"),
        "under the tool's policy: {wire}"
    );
    assert_eq!(*desk.refunds.lock().unwrap(), 0);

    let answer = |run_id: &str| {
        json!({ "threadId": "t1", "runId": run_id, "messages": [],
            "resume": [{ "interruptId": question.id, "status": "resolved", "payload": { "approved": true } }] })
    };
    // The policy holds: someone without the role cannot answer it.
    let refused = run(&engine, answer("r3"), &[]);
    assert!(
        matches!(refused, Err(CoreError::Forbidden(_))),
        "{refused:?}"
    );
    let answered = run(&engine, answer("r3"), &["approver"]).unwrap();
    let result = answered.iter().find_map(|e| match e {
        Event::ToolCallResult(r) => Some(r.content.text()),
        _ => None,
    });
    assert_eq!(result.as_deref(), Some("refunded A1"), "{answered:?}");
    assert!(matches!(answered.last(), Some(Event::RunFinished(_))));
    let replay = run(&engine, answer("r3"), &["approver"]).unwrap();
    assert!(replay.iter().any(|e| matches!(e, Event::ToolCallResult(_))));
    // The same answer under another run id: the recorded result, nothing sent.
    let again = run(&engine, answer("r4"), &["approver"]).unwrap();
    let result = again.iter().find_map(|e| match e {
        Event::ToolCallResult(r) => Some(r.content.text()),
        _ => None,
    });
    assert_eq!(result.as_deref(), Some("refunded A1"));
    assert_eq!(
        *desk.refunds.lock().unwrap(),
        1,
        "one retry, whatever was replayed"
    );

    let seen = desk.seen.lock().unwrap();
    let methods: Vec<&str> = seen.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        methods,
        ["server/discover", "tools/list", "tools/call", "tools/call"]
    );
    for (method, said, _, params) in seen.iter() {
        assert_eq!(said.as_deref(), Some(method.as_str()), "Mcp-Method");
        let meta = &params["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "handoff"
        );
        assert!(meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"].is_object());
    }
    let (first_call, retry) = (&seen[2], &seen[3]);
    assert_eq!(first_call.2.as_deref(), Some("refund"), "Mcp-Name");
    assert!(first_call.3.get("requestState").is_none());
    assert_eq!(retry.3["requestState"], "sealed-1");
    assert_eq!(
        retry.3["arguments"],
        json!({ "order": "A1" }),
        "the same arguments"
    );
    assert_eq!(
        retry.3["inputResponses"],
        json!({ "ok": { "action": "accept", "content": { "approved": true } } })
    );
    assert_ne!(
        first_call.3["_meta"]["idempotencyKey"], retry.3["_meta"]["idempotencyKey"],
        "each attempt its own key"
    );
}

#[test]
fn a_cancelled_question_is_sent_as_cancel() {
    let model = Arc::new(Model::default());
    model.turns.lock().unwrap().extend([
        call_turn("desk__refund", r#"{"order":"A1"}"#),
        text_turn("Not done."),
    ]);
    let desk = Arc::new(Desk::default());
    let engine = engine(&model, &desk, &Arc::new(MemoryStore::new()));
    let ask = json!({ "threadId": "t2", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "Refund A1" }] });
    let approval = interrupts_of(&run(&engine, ask, &["approver"]).unwrap());
    let approve = json!({ "threadId": "t2", "runId": "r2", "messages": [],
        "resume": [{ "interruptId": approval[0].id, "status": "resolved", "payload": { "approved": true } }] });
    let question = interrupts_of(&run(&engine, approve, &["approver"]).unwrap());
    let cancel = json!({ "threadId": "t2", "runId": "r3", "messages": [],
        "resume": [{ "interruptId": question[0].id, "status": "cancelled" }] });
    let after = run(&engine, cancel, &["approver"]).unwrap();
    // The desk did not get an accept: it asks again, and the run waits once more.
    let again = interrupts_of(&after);
    assert_eq!(again[0].reason, "mcp_input");
    assert_ne!(again[0].id, question[0].id, "the next round's question");
    let seen = desk.seen.lock().unwrap();
    assert_eq!(
        seen.last().unwrap().3["inputResponses"],
        json!({ "ok": { "action": "cancel" } })
    );
    assert_eq!(*desk.refunds.lock().unwrap(), 0);
}
