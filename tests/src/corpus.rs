//! The AG-UI conformance corpus: streams our encoder produces (positive) and
//! streams that break a rule (negative), each with our own verifier's verdict.
//!
//! Positive streams are built from typed events and framed by
//! [`agui_protocol::sse::SseEncoder`]; they must pass our **strict** verifier
//! and be accepted by the official client with zero warnings. Negative streams
//! are hand-made bytes; our verifier in **official** mode and the official
//! client must both reject them (the Node test fails if they disagree).

use std::path::Path;

use agui_protocol::event::*;
use agui_protocol::message::{ContentPart, MediaPart, PartSource, TextPart};
use agui_protocol::sse::{KEEP_ALIVE, SseEncoder};
use agui_protocol::verify::{Mode, VerifyOptions, verify_sse};
use agui_protocol::{
    Content, Event, Interrupt, Message, PatchOp, ResumeEntry, RunFinishedOutcome, SubagentOutcome,
    TokenUsage, ToolCall,
};
use serde_json::{Value, json};

/// One stream of the corpus.
#[derive(Debug, Clone)]
pub struct Case {
    /// Unique name (also the file name).
    pub name: &'static str,
    /// The exact bytes served.
    pub bytes: Vec<u8>,
    /// Whether the official client must accept it.
    pub accept: bool,
    /// Thread and run the client is told about.
    pub thread_id: &'static str,
    /// Run id of the (last) run.
    pub run_id: &'static str,
    /// Resume entries the client sends, if any.
    pub resume: Option<Vec<ResumeEntry>>,
    /// Why this case exists.
    pub note: &'static str,
}

const T: &str = "thread-1";
const TS: u64 = 1_764_421_200_000;

fn started(run: &str) -> Event {
    let mut e = RunStarted::new(T, run);
    e.protocol_version = Some("1.0".into());
    Event::from(e).with_timestamp(TS)
}

fn finished(run: &str, outcome: RunFinishedOutcome) -> Event {
    let mut e = RunFinished::new(T, run);
    e.outcome = Some(outcome);
    e.into()
}

fn success(run: &str) -> Event {
    finished(run, RunFinishedOutcome::success())
}

fn text(id: &str, parts: &[&str]) -> Vec<Event> {
    let mut out: Vec<Event> = vec![TextMessageStart::new(id).into()];
    out.extend(
        parts
            .iter()
            .map(|p| Event::from(TextMessageContent::new(id, *p))),
    );
    out.push(TextMessageEnd::new(id).into());
    out
}

fn tool_call(id: &str, name: &str, args: &[&str]) -> Vec<Event> {
    let mut out: Vec<Event> = vec![ToolCallStart::new(id, name).into()];
    out.extend(args.iter().map(|a| Event::from(ToolCallArgs::new(id, *a))));
    out.push(ToolCallEnd::new(id).into());
    out
}

fn encode(events: &[Event]) -> Vec<u8> {
    let mut encoder = SseEncoder::new();
    events
        .iter()
        .flat_map(|e| encoder.encode(e).to_vec())
        .collect()
}

fn positive(
    name: &'static str,
    run_id: &'static str,
    events: Vec<Event>,
    note: &'static str,
) -> Case {
    Case {
        name,
        bytes: encode(&events),
        accept: true,
        thread_id: T,
        run_id,
        resume: None,
        note,
    }
}

fn negative(name: &'static str, frames: &[Value], note: &'static str) -> Case {
    let bytes = frames
        .iter()
        .flat_map(|f| format!("data: {f}\n\n").into_bytes())
        .collect();
    Case {
        name,
        bytes,
        accept: false,
        thread_id: T,
        run_id: "run-1",
        resume: None,
        note,
    }
}

fn refund_interrupt() -> Interrupt {
    Interrupt::new("int-1", "tool_call")
        .with_message("Refund 128.00 USD for order A1024?")
        .with_tool_call("tc-refund")
        .with_response_schema(json!({"type":"object","properties":{"approved":{"type":"boolean"},"editedArgs":{"type":"object"}},"required":["approved"]}))
        .with_expires_at("2099-01-01T00:00:00Z")
}

fn history() -> Vec<Message> {
    let mut assistant = agui_protocol::message::AssistantMessage {
        id: "m-a".into(),
        ..Default::default()
    };
    assistant.tool_calls = Some(vec![ToolCall::function(
        "tc-refund",
        "refund_order",
        "{\"orderId\":\"A1024\"}",
    )]);
    vec![
        Message::user("m-u", "Refund order A1024"),
        Message::Assistant(assistant),
    ]
}

/// Every positive case.
pub fn positives() -> Vec<Case> {
    let mut cases = Vec::new();

    let mut events = vec![started("run-1")];
    events.extend(text("m1", &["Hello", ", ", "world"]));
    events.push(success("run-1"));
    cases.push(positive(
        "text-basic",
        "run-1",
        events,
        "START/CONTENT/END text",
    ));

    let mut events = vec![started("run-1")];
    events.extend(text("m1", &["caf", "é 漢字 🦀 — ", "naïve"]));
    events.push(success("run-1"));
    cases.push(positive(
        "text-utf8-split",
        "run-1",
        events,
        "multi-byte text; the server splits inside characters",
    ));

    cases.push(positive(
        "every-event-type",
        "run-1",
        every_event_type(),
        "all 31 types in one valid run",
    ));

    let mut events = vec![started("run-1"), ReasoningStart::new("rs1").into()];
    events.push(ReasoningMessageStart::new("rm1").into());
    events.push(ReasoningMessageContent::new("rm1", "Check the order first.").into());
    events.push(ReasoningMessageEnd::new("rm1").into());
    events.push(
        ReasoningEncryptedValue::new(EncryptedSubtype::Message, "rm1", "ZW5jcnlwdGVk").into(),
    );
    events.push(ReasoningEnd::new("rs1").into());
    events.extend(text("m1", &["Done thinking."]));
    events.push(success("run-1"));
    cases.push(positive(
        "reasoning",
        "run-1",
        events,
        "reasoning span, message and encrypted value",
    ));

    let chunk = TextMessageChunk {
        message_id: Some("m1".into()),
        delta: Some("chunked ".into()),
        ..Default::default()
    };
    let more = TextMessageChunk {
        delta: Some("text".into()),
        ..Default::default()
    };
    let tool_chunk = ToolCallChunk {
        tool_call_id: Some("tc1".into()),
        tool_call_name: Some("search".into()),
        delta: Some("{\"q\":".into()),
        ..Default::default()
    };
    let tool_more = ToolCallChunk {
        delta: Some("\"x\"}".into()),
        ..Default::default()
    };
    let reasoning_chunk = ReasoningMessageChunk {
        message_id: Some("rm1".into()),
        delta: Some("hmm".into()),
        ..Default::default()
    };
    let events = vec![
        started("run-1"),
        chunk.into(),
        more.into(),
        tool_chunk.into(),
        tool_more.into(),
        reasoning_chunk.into(),
        success("run-1"),
    ];
    cases.push(positive(
        "chunks",
        "run-1",
        events,
        "text, tool and reasoning chunks expanded by the client",
    ));

    let mut content = serde_json::Map::new();
    content.insert("percent".into(), json!(10));
    let events = vec![
        started("run-1"),
        ActivitySnapshot::new("act-1", "progress", content).into(),
        ActivityDelta::new(
            "act-1",
            "progress",
            vec![PatchOp::replace("/percent", json!(60))],
        )
        .into(),
        success("run-1"),
    ];
    cases.push(positive(
        "activity",
        "run-1",
        events,
        "activity snapshot and delta",
    ));

    cases.push(positive(
        "subagent-interrupt",
        "run-1",
        subagent_interrupt(),
        "an interrupt raised inside a subagent",
    ));

    let mut events = vec![started("run-1")];
    events.extend(tool_call(
        "tc1",
        "get_order",
        &["{\"orderId\":", "\"A1024\"}"],
    ));
    let parts = Content::Parts(vec![
        ContentPart::Text(TextPart {
            id: None,
            text: "Order A1024".into(),
            metadata: None,
        }),
        ContentPart::Image(MediaPart {
            id: None,
            source: PartSource::Url {
                value: "https://example.com/a.png".into(),
                mime_type: Some("image/png".into()),
            },
            metadata: None,
        }),
    ]);
    events.push(ToolCallResult::new("m-res", "tc1", parts).into());
    events.push(success("run-1"));
    cases.push(positive(
        "tool-result-parts",
        "run-1",
        events,
        "TOOL_CALL_RESULT with content parts",
    ));

    let mut events = vec![started("run-1")];
    events.extend(text("m1", &["first run"]));
    events.push(success("run-1"));
    events.push(started("run-2"));
    events.extend(text("m2", &["second run"]));
    events.push(success("run-2"));
    cases.push(positive(
        "multi-run-replay",
        "run-2",
        events,
        "two runs in one response, as a replay",
    ));

    cases.push(positive(
        "interrupt",
        "run-1",
        refund_run(),
        "refund flow ending in a tool_call interrupt",
    ));

    let mut events = vec![started("run-2")];
    events.push(ToolCallResult::new("m-result", "tc-refund", "{\"status\":\"refunded\"}").into());
    events.extend(text("m-done", &["Refund ", "done."]));
    events.push(success("run-2"));
    let mut case = positive(
        "resume-result",
        "run-2",
        events,
        "resumed run: TOOL_CALL_RESULT for the original call",
    );
    case.resume = Some(vec![ResumeEntry::resolved(
        "int-1",
        json!({"approved": true}),
    )]);
    cases.push(case);

    let mut events = vec![started("run-1")];
    events.extend(text("m1", &["partial"]));
    events.push(ToolCallStart::new("tc1", "slow_tool").into());
    events.push(ToolCallEnd::new("tc1").into());
    events.push(finished("run-1", RunFinishedOutcome::Cancelled));
    cases.push(positive(
        "cancelled",
        "run-1",
        events,
        "producer deadline: everything closed, outcome cancelled",
    ));

    let mut events = vec![started("run-1")];
    events.extend(tool_call(
        "tc-fe",
        "change_background",
        &["{\"color\":\"blue\"}"],
    ));
    events.push(finished(
        "run-1",
        RunFinishedOutcome::Success {
            pending_tool_call_ids: Some(vec!["tc-fe".into()]),
        },
    ));
    cases.push(positive(
        "frontend-tool-pending",
        "run-1",
        events,
        "frontend tool call left for the client",
    ));

    let mut error = RunError::new("storage is temporarily unavailable; retry");
    error.code = Some("STORE_UNAVAILABLE".into());
    cases.push(positive(
        "run-error",
        "run-1",
        vec![started("run-1"), error.into()],
        "RUN_ERROR with a stable code",
    ));

    let mut usage_run = RunFinished::new(T, "run-1");
    usage_run.outcome = Some(RunFinishedOutcome::success());
    usage_run.result = Some(json!({"answer": 42}));
    usage_run.usage = Some(vec![TokenUsage {
        input_tokens: Some(12),
        output_tokens: Some(3),
        total_tokens: Some(15),
        ..Default::default()
    }]);
    let mut events = vec![started("run-1")];
    events.extend(text("m1", &["42"]));
    events.push(usage_run.into());
    let mut case = positive(
        "keepalive-ids-usage",
        "run-1",
        Vec::new(),
        "id: lines, keep-alive comments, usage and result",
    );
    let mut encoder = SseEncoder::with_sequence_ids(1);
    for event in &events {
        case.bytes.extend_from_slice(KEEP_ALIVE);
        case.bytes.extend_from_slice(&encoder.encode(event));
    }
    cases.push(case);
    cases
}

fn refund_run() -> Vec<Event> {
    let mut events = vec![started("run-1"), StepStarted::new("lookup").into()];
    events.extend(tool_call(
        "tc-get",
        "get_order",
        &["{\"orderId\":\"A1024\"}"],
    ));
    events.push(ToolCallResult::new("m-get", "tc-get", "{\"amount\":\"128.00\"}").into());
    events.push(StepFinished::new("lookup").into());
    events.push(StateSnapshot::new(json!({"order": {"id": "A1024"}, "step": "lookup"})).into());
    events.push(StateDelta::new(vec![PatchOp::replace("/step", json!("await_decision"))]).into());
    events.extend(text("m-a", &["I can refund ", "128.00."]));
    events.extend(tool_call(
        "tc-refund",
        "refund_order",
        &["{\"orderId\":", "\"A1024\"}"],
    ));
    events.push(
        StateSnapshot::new(json!({"order": {"id": "A1024"}, "step": "await_decision"})).into(),
    );
    events.push(MessagesSnapshot::new(history()).into());
    events.push(finished(
        "run-1",
        RunFinishedOutcome::Interrupt {
            interrupts: vec![refund_interrupt()],
        },
    ));
    events
}

fn subagent_interrupt() -> Vec<Event> {
    let mut start = SubagentStarted::new("sub-1", "fraud-check");
    start.description = Some("Reviews refunds".into());
    let mut events = vec![started("run-1"), start.into()];
    events.push(TextMessageStart::new("m-s").in_subagent("sub-1").into());
    events.push(
        TextMessageContent::new("m-s", "Needs a human.")
            .in_subagent("sub-1")
            .into(),
    );
    events.push(TextMessageEnd::new("m-s").in_subagent("sub-1").into());
    events.push(
        ToolCallStart::new("tc-refund", "refund_order")
            .in_subagent("sub-1")
            .into(),
    );
    events.push(
        ToolCallArgs::new("tc-refund", "{}")
            .in_subagent("sub-1")
            .into(),
    );
    events.push(ToolCallEnd::new("tc-refund").in_subagent("sub-1").into());
    let mut done = SubagentFinished::new("sub-1");
    done.outcome = Some(SubagentOutcome::Suspended {
        interrupt_ids: Some(vec!["int-1".into()]),
    });
    events.push(done.into());
    events.push(StateSnapshot::new(json!({"step": "review"})).into());
    events.push(MessagesSnapshot::new(history()).into());
    let interrupt = refund_interrupt().with_subagent("sub-1");
    events.push(finished(
        "run-1",
        RunFinishedOutcome::Interrupt {
            interrupts: vec![interrupt],
        },
    ));
    events
}

fn every_event_type() -> Vec<Event> {
    let chunk = TextMessageChunk {
        message_id: Some("m-chunk".into()),
        delta: Some("chunk".into()),
        ..Default::default()
    };
    let tool_chunk = ToolCallChunk {
        tool_call_id: Some("tc-chunk".into()),
        tool_call_name: Some("noop".into()),
        delta: Some("{}".into()),
        ..Default::default()
    };
    let reasoning_chunk = ReasoningMessageChunk {
        message_id: Some("rm-chunk".into()),
        delta: Some("why".into()),
        ..Default::default()
    };
    let mut sub_error = SubagentError::new("sub-2", "gave up");
    sub_error.code = Some("SUB_FAILED".into());
    let mut raw = Raw::new(json!({"provider": "x"}));
    raw.source = Some("upstream".into());
    let mut content = serde_json::Map::new();
    content.insert("percent".into(), json!(0));

    let mut events = vec![started("run-1"), StepStarted::new("all").into()];
    events.extend(text("m1", &["hello"]));
    events.push(chunk.into());
    events.extend(tool_call("tc1", "get_order", &["{}"]));
    events.push(tool_chunk.into());
    events.push(ToolCallResult::new("m-res", "tc1", "{}").into());
    events.push(StateSnapshot::new(json!({"a": 1})).into());
    events.push(StateDelta::new(vec![PatchOp::add("/b", json!(2))]).into());
    events.push(MessagesSnapshot::new(vec![Message::user("m0", "hi")]).into());
    events.push(ActivitySnapshot::new("act", "progress", content).into());
    events.push(
        ActivityDelta::new(
            "act",
            "progress",
            vec![PatchOp::replace("/percent", json!(100))],
        )
        .into(),
    );
    events.push(ReasoningStart::new("rs").into());
    events.push(ReasoningMessageStart::new("rm").into());
    events.push(ReasoningMessageContent::new("rm", "thinking").into());
    events.push(ReasoningMessageEnd::new("rm").into());
    events.push(reasoning_chunk.into());
    events.push(ReasoningEnd::new("rs").into());
    events.push(ReasoningEncryptedValue::new(EncryptedSubtype::ToolCall, "tc1", "c2VjcmV0").into());
    events.push(SubagentStarted::new("sub-1", "helper").into());
    events.push(SubagentFinished::new("sub-1").into());
    events.push(SubagentStarted::new("sub-2", "flaky").into());
    events.push(sub_error.into());
    events.push(raw.into());
    events.push(Custom::new("acme.PredictState", Value::Null).into());
    events.push(StepFinished::new("all").into());
    events.push(success("run-1"));
    events
}

/// Every negative case (hand-made bytes).
pub fn negatives() -> Vec<Case> {
    let start =
        json!({"type": "RUN_STARTED", "threadId": T, "runId": "run-1", "protocolVersion": "1.0"});
    let finish = json!({"type": "RUN_FINISHED", "threadId": T, "runId": "run-1", "outcome": {"type": "success"}});
    let text_start = json!({"type": "TEXT_MESSAGE_START", "messageId": "m1"});
    let text_content = json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "x"});
    let text_end = json!({"type": "TEXT_MESSAGE_END", "messageId": "m1"});
    let mut cases = vec![
        negative(
            "neg-content-before-start",
            &[start.clone(), text_content.clone(), finish.clone()],
            "CONTENT before START",
        ),
        negative(
            "neg-event-after-finished",
            &[start.clone(), finish.clone(), text_start.clone()],
            "events after RUN_FINISHED",
        ),
        negative(
            "neg-nested-run-started",
            &[start.clone(), start.clone()],
            "RUN_STARTED inside an active run",
        ),
        negative(
            "neg-first-event-not-run-started",
            &[text_start.clone(), text_end.clone()],
            "first event is not RUN_STARTED",
        ),
        negative(
            "neg-metadata-null",
            &[
                start.clone(),
                json!({"type": "STEP_STARTED", "stepName": "s", "metadata": null}),
            ],
            "metadata: null",
        ),
        negative(
            "neg-subagent-null",
            &[
                start.clone(),
                json!({"type": "TEXT_MESSAGE_START", "messageId": "m1", "subagentRunId": null}),
            ],
            "subagentRunId: null",
        ),
        negative(
            "neg-fractional-timestamp",
            &[
                start.clone(),
                json!({"type": "STEP_STARTED", "stepName": "s", "timestamp": 1762374498.96628}),
            ],
            "fractional timestamp",
        ),
        negative(
            "neg-empty-interrupts",
            &[
                start.clone(),
                json!({"type": "RUN_FINISHED", "threadId": T, "runId": "run-1", "outcome": {"type": "interrupt", "interrupts": []}}),
            ],
            "interrupt outcome without interrupts",
        ),
        negative(
            "neg-interrupt-without-reason",
            &[
                start.clone(),
                json!({"type": "RUN_FINISHED", "threadId": T, "runId": "run-1", "outcome": {"type": "interrupt", "interrupts": [{"id": "i"}]}}),
            ],
            "interrupt without reason",
        ),
        negative(
            "neg-open-text-at-finish",
            &[start.clone(), text_start.clone(), finish.clone()],
            "text message open at RUN_FINISHED",
        ),
        negative(
            "neg-open-tool-at-finish",
            &[
                start.clone(),
                json!({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "x"}),
                finish.clone(),
            ],
            "tool call open at RUN_FINISHED",
        ),
        negative(
            "neg-args-after-end",
            &[
                start.clone(),
                json!({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "x"}),
                json!({"type": "TOOL_CALL_END", "toolCallId": "c"}),
                json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"}),
            ],
            "TOOL_CALL_ARGS after END",
        ),
        negative(
            "neg-first-chunk-without-id",
            &[
                start.clone(),
                json!({"type": "TEXT_MESSAGE_CHUNK", "delta": "x"}),
                finish.clone(),
            ],
            "first TEXT_MESSAGE_CHUNK without messageId",
        ),
        negative(
            "neg-chunk-role-conflict",
            &[
                start.clone(),
                json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "delta": "a"}),
                json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "role": "user", "delta": "b"}),
                finish.clone(),
            ],
            "chunk continuation with a different role",
        ),
        negative(
            "neg-reasoning-content-without-start",
            &[
                start.clone(),
                json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "x"}),
            ],
            "reasoning content without start",
        ),
        negative(
            "neg-step-finished-not-started",
            &[
                start.clone(),
                json!({"type": "STEP_FINISHED", "stepName": "s"}),
            ],
            "STEP_FINISHED without STEP_STARTED",
        ),
        negative(
            "neg-unknown-text-role",
            &[
                start.clone(),
                json!({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "robot"}),
            ],
            "unknown TEXT_MESSAGE_START role (closed enum)",
        ),
        negative(
            "neg-frame-not-object",
            &[start.clone(), json!([1, 2])],
            "an SSE frame that is not a JSON object",
        ),
        negative(
            "neg-frame-without-type",
            &[start.clone(), json!({"messageId": "m1"})],
            "a frame without a type",
        ),
        negative(
            "neg-outcome-array",
            &[
                start.clone(),
                json!({"type": "RUN_FINISHED", "threadId": T, "runId": "run-1", "outcome": [{"type": "success"}]}),
            ],
            "an outcome that is an array",
        ),
        negative(
            "neg-subagent-finish-unknown",
            &[
                start.clone(),
                json!({"type": "SUBAGENT_FINISHED", "subagentRunId": "nope"}),
                finish.clone(),
            ],
            "SUBAGENT_FINISHED for a subagent never started",
        ),
    ];
    let crlf = [start, text_start, text_content, text_end, finish]
        .iter()
        .flat_map(|f| format!("data: {f}\r\n\r\n").into_bytes())
        .collect();
    cases.push(Case {
        name: "neg-crlf-framing",
        bytes: crlf,
        accept: false,
        thread_id: T,
        run_id: "run-1",
        resume: None,
        note: "CRLF framing",
    });
    cases
}

/// Our verdict: positives in strict mode, negatives in the official client's mode.
pub fn our_verdict(case: &Case) -> Result<(), String> {
    let mode = if case.accept {
        Mode::Strict
    } else {
        Mode::Official
    };
    let options = VerifyOptions::new(mode).with_ids(case.thread_id, case.run_id);
    verify_sse(&case.bytes, options)
        .map(|_| ())
        .map_err(|v| v.to_string())
}

/// Writes the corpus and its manifest into `dir`; returns the number of streams.
pub fn write(dir: &Path) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    let mut manifest = Vec::new();
    let cases: Vec<Case> = positives().into_iter().chain(negatives()).collect();
    for case in &cases {
        let file = format!("{}.sse", case.name);
        std::fs::write(dir.join(&file), &case.bytes)?;
        let ours = match our_verdict(case) {
            Ok(()) => "accept",
            Err(_) => "reject",
        };
        let mut entry = json!({
            "name": case.name, "file": file, "expect": if case.accept { "accept" } else { "reject" },
            "ours": ours, "threadId": case.thread_id, "runId": case.run_id, "note": case.note,
        });
        if let Some(resume) = &case.resume {
            entry["resume"] = serde_json::to_value(resume).unwrap_or_default();
        }
        manifest.push(entry);
    }
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_vec_pretty(&manifest)?,
    )?;
    Ok(cases.len())
}
