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

mod negative;
mod positive;

pub use negative::negatives;
pub use positive::positives;

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
