//! The tool loop over a scripted OpenAI-compatible model (no model runs offline): a
//! backend tool runs once, an approval-required one becomes an interrupt whose resume
//! runs it once, a frontend tool ends the run pending, a runaway loop ends cancelled.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agui_protocol::verify::{VerifyOptions, verify_events};
use agui_protocol::{Event, RunAgentInput, RunFinishedOutcome};
use async_trait::async_trait;
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::outbound::{Body, Outbound, OutboundError, Timeout};
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{ApprovalPolicy, Engine, RunOptions};
use handoff_llm::{BackendTool, LlmAgent, Provider, ToolError};
use serde_json::{Value, json};

/// Answers each request with the next scripted turn and keeps the requests.
#[derive(Default)]
struct Scripted {
    turns: Mutex<VecDeque<String>>,
    requests: Mutex<Vec<Seen>>,
}

/// A model request as the fake saw it (its headers keep their sensitivity marks).
#[derive(Debug, Clone)]
struct Seen {
    headers: http::HeaderMap,
    body: Value,
    timeout_ms: Option<u64>,
}

#[async_trait]
impl Outbound for Scripted {
    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError> {
        let timeout = request.extensions().get::<Timeout>();
        let seen = Seen {
            timeout_ms: timeout.map(|t| u64::try_from(t.0.as_millis()).unwrap()),
            headers: request.headers().clone(),
            body: serde_json::from_slice(request.body()).unwrap(),
        };
        self.requests.lock().unwrap().push(seen);
        let body = self
            .turns
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| text_turn("(no more script)"));
        // Delivered in small pieces, as a network would.
        let pieces: Vec<Result<Vec<u8>, OutboundError>> =
            body.as_bytes().chunks(9).map(|c| Ok(c.to_vec())).collect();
        Ok(http::Response::new(futures::stream::iter(pieces).boxed()))
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
    let (head, tail) = args.split_at(args.len() / 2);
    chunk(
        json!({ "tool_calls": [{ "index": 0, "id": "call_1", "function": { "name": name, "arguments": head } }] }),
        None,
    ) + &chunk(
        json!({ "tool_calls": [{ "index": 0, "function": { "arguments": tail } }] }),
        None,
    ) + &chunk(json!({}), Some("tool_calls"))
        + "data: [DONE]\n\n"
}

struct Setup {
    engine: Engine,
    model: Arc<Scripted>,
    refunds: Arc<AtomicUsize>,
}

fn setup(turns: Vec<String>, max_steps: usize) -> Setup {
    setup_failing_once(turns, max_steps, None)
}

/// [`setup`], with `refund_order`'s first call failing with `first_error`.
fn setup_failing_once(
    turns: Vec<String>,
    max_steps: usize,
    first_error: Option<ToolError>,
) -> Setup {
    let model = Arc::new(Scripted::default());
    model.turns.lock().unwrap().extend(turns);
    let refunds = Arc::new(AtomicUsize::new(0));
    let counter = refunds.clone();
    let provider = Provider::OpenAi {
        base_url: "http://127.0.0.1:11434/v1".into(),
        api_key: "sk-test".into(),
        model: "test".into(),
    };
    let agent =
        LlmAgent::new("refunds", provider, model.clone())
            .system("You handle refunds.")
            .max_steps(max_steps)
            .tool(BackendTool::new(
                "get_order",
                "Look an order up",
                json!({ "type": "object", "required": ["orderId"] }),
                |args, _key| async move {
                    Ok(json!({ "orderId": args["orderId"], "amountCents": 4000 }))
                },
            ))
            .tool(
                BackendTool::new(
                    "refund_order",
                    "Refund an order",
                    json!({ "type": "object" }),
                    move |args, key| {
                        let counter = counter.clone();
                        let first_error = first_error.clone();
                        async move {
                            if counter.fetch_add(1, Ordering::SeqCst) == 0
                                && let Some(error) = first_error
                            {
                                return Err(error);
                            }
                            Ok(json!({ "refunded": args["amountCents"], "idempotencyKey": key }))
                        }
                    },
                )
                .requiring_approval(ApprovalPolicy::new().editable("amountCents")),
            );
    let runtime = Runtime::new(
        ManualClock::new(1_764_421_200_000),
        SequentialIds::new("t"),
        NeverSleep,
    );
    let engine = Engine::new(agent, Arc::new(MemoryStore::new()), runtime);
    Setup {
        engine,
        model,
        refunds,
    }
}

fn input(value: Value) -> RunAgentInput {
    serde_json::from_value(value).unwrap()
}

fn run(engine: &Engine, input: &RunAgentInput) -> Vec<Event> {
    let events = block_on(async {
        let stream = engine
            .start(input.clone(), RunOptions::default())
            .await
            .expect("accepted");
        stream.collect::<Vec<_>>().await
    });
    verify_events(&events, VerifyOptions::strict().with_input(input.clone()))
        .expect("valid stream");
    events
}

fn outcome(events: &[Event]) -> RunFinishedOutcome {
    match events.last() {
        Some(Event::RunFinished(f)) => f.outcome.clone().unwrap(),
        other => panic!("no RUN_FINISHED: {other:?}"),
    }
}

#[test]
fn a_backend_tool_runs_an_approval_interrupts_and_the_resume_refunds_once() {
    let s = setup(
        vec![
            call_turn("get_order", r#"{"orderId":"A1024"}"#),
            call_turn("refund_order", r#"{"orderId":"A1024","amountCents":4000}"#),
            text_turn("Refunded 40.00."),
        ],
        8,
    );
    let first = input(json!({ "threadId": "t1", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "Refund order A1024" }] }));
    let events = run(&s.engine, &first);
    let RunFinishedOutcome::Interrupt { interrupts, .. } = outcome(&events) else {
        panic!("expected an interrupt");
    };
    assert_eq!(interrupts[0].reason, "tool_call");
    assert!(interrupts[0].response_schema.is_some());
    assert_eq!(
        s.refunds.load(Ordering::SeqCst),
        0,
        "refunded before approval"
    );

    // The second model request carried the stored history: the call and its result.
    let requests = s.model.requests.lock().unwrap().clone();
    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    assert!(messages[3]["content"].as_str().unwrap().contains("4000"));
    assert!(
        requests[0].headers.contains_key("authorization"),
        "the key was sent"
    );
    assert!(
        !format!("{:?}", requests[0]).contains("sk-test"),
        "the key leaked into Debug"
    );

    let answer = json!({ "threadId": "t1", "runId": "r2", "messages": [],
        "resume": [{ "interruptId": interrupts[0].id, "status": "resolved", "payload": { "approved": true } }] });
    let events = run(&s.engine, &input(answer.clone()));
    assert_eq!(outcome(&events), RunFinishedOutcome::success());
    assert_eq!(s.refunds.load(Ordering::SeqCst), 1);
    // A replayed answer executes nothing again.
    let mut again = answer;
    again["runId"] = json!("r3");
    run(&s.engine, &input(again));
    assert_eq!(s.refunds.load(Ordering::SeqCst), 1);
}

#[test]
fn a_denied_call_is_not_executed_and_the_model_hears_so() {
    let s = setup(
        vec![
            call_turn("refund_order", r#"{"amountCents":1}"#),
            text_turn("Understood."),
        ],
        8,
    );
    let first = input(json!({ "threadId": "t1", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "Refund it" }] }));
    let RunFinishedOutcome::Interrupt { interrupts, .. } = outcome(&run(&s.engine, &first)) else {
        panic!("expected an interrupt");
    };
    let deny = input(json!({ "threadId": "t1", "runId": "r2", "messages": [],
        "resume": [{ "interruptId": interrupts[0].id, "status": "resolved", "payload": { "approved": false } }] }));
    assert_eq!(
        outcome(&run(&s.engine, &deny)),
        RunFinishedOutcome::success()
    );
    assert_eq!(s.refunds.load(Ordering::SeqCst), 0);
    let last = s
        .model
        .requests
        .lock()
        .unwrap()
        .last()
        .unwrap()
        .body
        .clone();
    let tool = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert!(tool["content"].as_str().unwrap().contains("denied"));
}

#[test]
fn a_frontend_tool_call_ends_the_run_pending_on_the_client() {
    let s = setup(vec![call_turn("show_receipt", r#"{"id":1}"#)], 8);
    let first = input(json!({ "threadId": "t1", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "Show me" }],
        "tools": [{ "name": "show_receipt", "description": "Shows a receipt", "parameters": { "type": "object" } }] }));
    match outcome(&run(&s.engine, &first)) {
        RunFinishedOutcome::Success {
            pending_tool_call_ids,
        } => {
            assert_eq!(pending_tool_call_ids.map(|p| p.len()), Some(1))
        }
        other => panic!("expected success with a pending call, got {other:?}"),
    }
}

#[test]
fn a_runaway_loop_stops_at_the_step_limit_cancelled() {
    let turns = (0..5)
        .map(|_| call_turn("get_order", r#"{"orderId":"A1"}"#))
        .collect();
    let s = setup(turns, 3);
    let first = input(json!({ "threadId": "t1", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "Loop" }] }));
    assert_eq!(
        outcome(&run(&s.engine, &first)),
        RunFinishedOutcome::Cancelled
    );
    assert_eq!(s.model.requests.lock().unwrap().len(), 3);
}

#[test]
fn arguments_that_break_the_tool_schema_go_back_to_the_model_and_nothing_runs() {
    let s = setup(
        vec![
            call_turn("refund_order", r#"not json"#),
            call_turn("get_order", r#"{"order":"A1024"}"#),
            text_turn("Sorry, I need the order id."),
        ],
        8,
    );
    let first = input(json!({ "threadId": "t1", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "Refund it" }] }));
    let events = run(&s.engine, &first);
    assert_eq!(
        outcome(&events),
        RunFinishedOutcome::success(),
        "no approval asked for broken arguments"
    );
    let requests = s.model.requests.lock().unwrap().clone();
    let tool_messages: Vec<String> = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert!(tool_messages[0].contains("not JSON"), "{tool_messages:?}");
    assert!(tool_messages[1].contains("schema"), "{tool_messages:?}");
    assert_eq!(s.refunds.load(Ordering::SeqCst), 0);
}

#[test]
fn an_approver_may_edit_the_arguments_and_the_edit_is_what_runs() {
    let s = setup(
        vec![
            call_turn("refund_order", r#"{"orderId":"A1024","amountCents":4000}"#),
            text_turn("Done."),
        ],
        8,
    );
    let first = input(json!({ "threadId": "t1", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "Refund A1024" }] }));
    let RunFinishedOutcome::Interrupt { interrupts, .. } = outcome(&run(&s.engine, &first)) else {
        panic!("expected an interrupt");
    };
    let edited = json!({ "orderId": "A1024", "amountCents": 1000 });
    let answer = input(json!({ "threadId": "t1", "runId": "r2", "messages": [],
        "resume": [{ "interruptId": interrupts[0].id, "status": "resolved",
                     "payload": { "approved": true, "editedArgs": edited } }] }));
    let events = run(&s.engine, &answer);
    let result = events.iter().find_map(|e| match e {
        Event::ToolCallResult(r) => Some(r.content.text()),
        _ => None,
    });
    assert!(
        result.unwrap().contains("\"refunded\":1000"),
        "the edit did not run"
    );
    assert_eq!(s.refunds.load(Ordering::SeqCst), 1);
}

#[test]
fn a_frontend_tool_result_sent_by_the_client_continues_the_conversation() {
    let s = setup(
        vec![
            call_turn("show_receipt", r#"{"id":1}"#),
            text_turn("Shown."),
        ],
        8,
    );
    let tools = json!([{ "name": "show_receipt", "description": "Shows a receipt", "parameters": { "type": "object" } }]);
    let first = input(json!({ "threadId": "t1", "runId": "r1", "tools": tools,
        "messages": [{ "id": "m1", "role": "user", "content": "Show me" }] }));
    let events = run(&s.engine, &first);
    let RunFinishedOutcome::Success {
        pending_tool_call_ids: Some(pending),
    } = outcome(&events)
    else {
        panic!("expected a pending call");
    };
    // The client runs the tool and sends its copy of the history with the result.
    let view = block_on(s.engine.thread(&handoff_core::Principal::anonymous(), "t1"))
        .unwrap()
        .unwrap();
    let mut messages = serde_json::to_value(&view.messages).unwrap();
    messages.as_array_mut().unwrap().push(json!({
        "id": "m-result", "role": "tool", "toolCallId": pending[0], "content": "receipt shown"
    }));
    let next =
        input(json!({ "threadId": "t1", "runId": "r2", "tools": tools, "messages": messages }));
    let events = run(&s.engine, &next);
    assert_eq!(outcome(&events), RunFinishedOutcome::success());
    let last = s
        .model
        .requests
        .lock()
        .unwrap()
        .last()
        .unwrap()
        .body
        .clone();
    let sent = last["messages"].as_array().unwrap();
    assert_eq!(sent.last().unwrap()["role"], "tool");
    assert_eq!(sent.last().unwrap()["content"], "receipt shown");
}

#[test]
fn the_model_call_may_take_only_what_is_left_of_the_hosts_deadline() {
    let s = setup(vec![text_turn("Hi.")], 8);
    let first = input(json!({ "threadId": "t1", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "Hello" }] }));
    let options = RunOptions {
        deadline_ms: Some(1_764_421_200_000 + 30_000),
        ..RunOptions::default()
    };
    block_on(async {
        let stream = s.engine.start(first, options).await.unwrap();
        stream.collect::<Vec<_>>().await
    });
    let requests = s.model.requests.lock().unwrap().clone();
    assert_eq!(requests[0].timeout_ms, Some(30_000));
}

/// Asks for a refund (interrupt), approves it; the refund's first call fails with `error`.
fn approve_failing_refund(error: ToolError) -> (Setup, Vec<agui_protocol::Interrupt>, Vec<Event>) {
    let s = setup_failing_once(
        vec![
            call_turn("refund_order", r#"{"orderId":"A1024","amountCents":4000}"#),
            text_turn("Sorry."),
            text_turn("Done."),
        ],
        8,
        Some(error),
    );
    let first = input(json!({ "threadId": "t1", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "Refund A1024" }] }));
    let RunFinishedOutcome::Interrupt { interrupts, .. } = outcome(&run(&s.engine, &first)) else {
        panic!("expected an interrupt");
    };
    let answer = input(json!({ "threadId": "t1", "runId": "r2", "messages": [],
        "resume": [{ "interruptId": interrupts[0].id, "status": "resolved", "payload": { "approved": true } }] }));
    let events = run(&s.engine, &answer);
    (s, interrupts, events)
}

/// A handler that says it did nothing lets the model hear the error and the run go on:
/// the approval is consumed, not pinned.
#[test]
fn a_tool_that_did_not_run_is_reported_to_the_model_and_frees_the_answer() {
    let (s, _, events) = approve_failing_refund(ToolError::NotExecuted("the bank said no".into()));
    assert_eq!(outcome(&events), RunFinishedOutcome::success());
    let result = events.iter().find_map(|e| match e {
        Event::ToolCallResult(r) => Some(r.content.text()),
        _ => None,
    });
    assert!(result.unwrap().contains("the bank said no"));
    let view = block_on(s.engine.thread(&handoff_core::Principal::anonymous(), "t1"))
        .unwrap()
        .unwrap();
    assert!(view.pending_interrupts.is_empty());
}

/// A plain error may have acted: the run fails and the approval stays pinned, so a
/// denial is refused and the same approval re-drives the same idempotency key.
#[test]
fn a_tool_that_may_have_run_keeps_its_approval_in_doubt() {
    let (s, interrupts, events) = approve_failing_refund(ToolError::from("gateway timeout"));
    assert!(
        matches!(events.last(), Some(Event::RunError(_))),
        "{events:?}"
    );
    let deny = input(json!({ "threadId": "t1", "runId": "r3", "messages": [],
        "resume": [{ "interruptId": interrupts[0].id, "status": "resolved", "payload": { "approved": false } }] }));
    let refused = block_on(s.engine.start(deny, RunOptions::default()));
    assert_eq!(
        refused.err().map(|e| e.code().name),
        Some("ANSWER_IN_DOUBT")
    );
    let again = input(json!({ "threadId": "t1", "runId": "r4", "messages": [],
        "resume": [{ "interruptId": interrupts[0].id, "status": "resolved", "payload": { "approved": true } }] }));
    assert_eq!(
        outcome(&run(&s.engine, &again)),
        RunFinishedOutcome::success()
    );
    assert_eq!(
        s.refunds.load(Ordering::SeqCst),
        2,
        "called again, under its key"
    );
}

/// An OpenAI usage chunk (`stream_options.include_usage`): prompt and completion tokens
/// with the cached and reasoning parts.
fn usage_chunk(prompt: u64, completion: u64, cached: u64, reasoning: u64) -> String {
    let chunk = json!({ "choices": [], "usage": {
        "prompt_tokens": prompt, "completion_tokens": completion,
        "prompt_tokens_details": { "cached_tokens": cached },
        "completion_tokens_details": { "reasoning_tokens": reasoning } } });
    format!("data: {chunk}\n\n")
}

fn with_usage(turn: String, usage: String) -> String {
    turn.replace("data: [DONE]\n\n", &(usage + "data: [DONE]\n\n"))
}

fn usage_of(event: &Event) -> Value {
    let usage = match event {
        Event::RunFinished(f) => f.usage.clone(),
        Event::RunError(e) => e.usage.clone(),
        other => panic!("not a terminal event: {other:?}"),
    };
    serde_json::to_value(usage).unwrap()
}

#[test]
fn usage_of_every_model_call_is_reported_on_run_finished() {
    let s = setup(
        vec![
            with_usage(
                call_turn("get_order", r#"{"orderId":"A1"}"#),
                usage_chunk(10, 5, 4, 2),
            ),
            with_usage(text_turn("It is 40 EUR."), usage_chunk(20, 7, 0, 0)),
        ],
        5,
    );
    let first = input(json!({ "threadId": "t1", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "What is A1?" }] }));
    let events = run(&s.engine, &first);
    assert_eq!(
        usage_of(events.last().unwrap()),
        json!([{ "provider": "openai", "model": "test", "inputTokens": 30, "outputTokens": 12,
            "totalTokens": 42, "reasoningTokens": 2, "cachedInputTokens": 4 }])
    );
    assert!(
        !events.iter().any(|e| matches!(e, Event::Custom(_))),
        "usage is AG-UI's field, not a CUSTOM event"
    );
}

#[test]
fn a_run_that_fails_mid_way_reports_the_usage_it_incurred() {
    let broken = usage_chunk(8, 0, 0, 0) + "data: {not json\n\n";
    let s = setup(
        vec![
            with_usage(
                call_turn("get_order", r#"{"orderId":"A1"}"#),
                usage_chunk(10, 5, 0, 0),
            ),
            broken,
        ],
        5,
    );
    let first = input(json!({ "threadId": "t1", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "What is A1?" }] }));
    let events = run(&s.engine, &first);
    assert!(
        matches!(events.last(), Some(Event::RunError(_))),
        "{events:?}"
    );
    assert_eq!(
        usage_of(events.last().unwrap()),
        json!([{ "provider": "openai", "model": "test", "inputTokens": 18, "outputTokens": 5,
            "totalTokens": 23, "reasoningTokens": 0, "cachedInputTokens": 0 }])
    );
}

#[test]
fn a_run_without_model_usage_reports_none() {
    let s = setup(vec![text_turn("Hello.")], 5);
    let first = input(json!({ "threadId": "t1", "runId": "r1",
        "messages": [{ "id": "m1", "role": "user", "content": "Hi" }] }));
    let events = run(&s.engine, &first);
    assert_eq!(
        usage_of(events.last().unwrap()),
        Value::Null,
        "never 0 for unknown counts"
    );
}
