//! Stream verifier: checks an AG-UI event stream the way the official
//! `@ag-ui/client` 1.0.0 does ([`Mode::Official`]), or that plus the producer
//! obligations the client leaves unchecked ([`Mode::Strict`]).
//!
//! Three entry points:
//! - [`verify_sse`] takes the raw SSE body and runs the whole client pipeline:
//!   framing, JSON, schema, chunk expansion, sequencing.
//! - [`verify_events`] does the same for in-memory events (each is serialized
//!   and checked as if it had been received).
//! - [`Verifier`] is the sequencing state machine alone, fed events after
//!   chunk expansion (see [`crate::chunks::ChunkExpander`]).
//!
//! Every failure is a [`Violation`] naming the rule (`L1`–`L6`, `T1`, `T2`,
//! `C1`, `C2`, `R1`, `R2`, `S1`, `S2`, `A1`–`A6` from the client's verifier;
//! `SCHEMA`, `SSE-*`, `UNKNOWN-EVENT`, `WIRE-EXACT`, `CHUNK-*`, `EXPAND`;
//! `STRICT-*` for the strict-only checks).
//!
//! ```
//! use agui_protocol::event::{RunFinished, RunStarted, TextMessageContent};
//! use agui_protocol::verify::{verify_events, VerifyOptions};
//!
//! let events = [
//!     RunStarted::new("t", "r").into(),
//!     TextMessageContent::new("m", "too early").into(),
//!     RunFinished::new("t", "r").into(),
//! ];
//! let err = verify_events(&events, VerifyOptions::official()).unwrap_err();
//! assert_eq!((err.rule, err.index), ("T2", Some(1)));
//! ```

mod run;
mod state;
mod wire;

#[cfg(test)]
mod tests_rules;
#[cfg(test)]
mod tests_wire;

use serde_json::Value;

use crate::chunks::ChunkExpander;
use crate::ids::{InterruptId, RunId, ThreadId};
use crate::sse::SseDecoder;
use crate::{Event, RunAgentInput};

pub use state::Verifier;

/// How much to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Exactly what the official client 1.0.0 rejects. Everything it merely
    /// warns about (unknown members or event types, legacy nulls, retired
    /// `THINKING_*` names) is tolerated and reported in [`Report::warnings`].
    Official,
    /// Official plus the producer obligations the client does not check:
    /// run/thread ids, unique interrupt ids, interrupt tool calls, a terminal
    /// event per run, snapshots before an interrupt, an explicit outcome,
    /// exact `pendingToolCallIds`, `protocolVersion` "1.0", and wire-exact
    /// frames (what is sent is exactly what the types describe).
    Strict,
}

// In the crate's error module, so `ProtocolError` does not reach up into `verify`.
pub use crate::error::Violation;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutcomeKind {
    /// `RUN_FINISHED` with a success outcome, or none.
    Success,
    /// `RUN_FINISHED` with the interrupt outcome.
    Interrupt,
    /// `RUN_FINISHED` with the cancelled outcome.
    Cancelled,
    /// `RUN_ERROR`.
    Error,
    /// No terminal event (truncated stream).
    None,
}

impl OutcomeKind {
    /// `"success"`, `"interrupt"`, `"cancelled"`, `"error"` or `"none"`.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeKind::Success => "success",
            OutcomeKind::Interrupt => "interrupt",
            OutcomeKind::Cancelled => "cancelled",
            OutcomeKind::Error => "error",
            OutcomeKind::None => "none",
        }
    }
}

impl std::fmt::Display for OutcomeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One run of the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSummary {
    /// `RUN_STARTED.runId`; `None` for a stream that opens with `RUN_ERROR`.
    pub run_id: Option<RunId>,
    /// `RUN_STARTED.threadId`.
    pub thread_id: Option<ThreadId>,
    /// How it ended.
    pub outcome: OutcomeKind,
    /// The interrupt ids of an interrupt outcome, in order.
    pub interrupt_ids: Vec<InterruptId>,
    /// A `RUN_ERROR` arrived after its `RUN_FINISHED` (a late failure).
    pub late_error: bool,
}

/// What a successful verification saw.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// Events the sequence verifier checked (after chunk expansion).
    pub events: usize,
    /// Frames of an unknown event type dropped (official mode only).
    pub dropped: usize,
    /// Deviations the official client only warns about, each prefixed with its index.
    pub warnings: Vec<String>,
    /// The runs, in stream order.
    pub runs: Vec<RunSummary>,
}

/// Options for [`verify_sse`] and [`verify_events`].
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyOptions {
    /// How much to check.
    pub mode: Mode,
    /// Expected `threadId` of every run (strict).
    pub thread_id: Option<ThreadId>,
    /// Expected `runId` of the stream's last run (strict).
    pub run_id: Option<RunId>,
    /// The POST body: sets the expected ids when they are not given, and its
    /// assistant tool calls count as known (interrupts may refer to them).
    pub input: Option<RunAgentInput>,
}

impl VerifyOptions {
    /// Options for `mode` with no expectations.
    pub fn new(mode: Mode) -> Self {
        VerifyOptions {
            mode,
            thread_id: None,
            run_id: None,
            input: None,
        }
    }

    /// [`Mode::Official`], no expectations.
    pub fn official() -> Self {
        Self::new(Mode::Official)
    }

    /// [`Mode::Strict`], no expectations.
    pub fn strict() -> Self {
        Self::new(Mode::Strict)
    }

    /// Expects these thread and run ids.
    pub fn with_ids(mut self, thread_id: impl Into<ThreadId>, run_id: impl Into<RunId>) -> Self {
        self.thread_id = Some(thread_id.into());
        self.run_id = Some(run_id.into());
        self
    }

    /// Checks against the input the stream answers.
    pub fn with_input(mut self, input: RunAgentInput) -> Self {
        self.input = Some(input);
        self
    }

    fn verifier(&self) -> Verifier {
        let mut v = Verifier::new(self.mode);
        if let Some(input) = &self.input {
            v = v.expect_input(input);
        }
        v.set_expected(self.thread_id.clone(), self.run_id.clone());
        v
    }
}

/// Verifies a raw SSE response body.
///
/// Pipeline: no `\r` anywhere (the client splits frames on `"\n\n"` only);
/// in strict mode the body must be UTF-8 and end with a complete frame;
/// each frame's data must be a JSON object with a non-empty string `type`;
/// schema (malformed known values are fatal; unknown event types are dropped
/// in official mode and fatal in strict mode; strict mode also requires each
/// frame to be exactly what its parsed event serializes back to); chunk
/// expansion; the sequencing rules; and the end-of-stream checks.
pub fn verify_sse(bytes: &[u8], options: VerifyOptions) -> Result<Report, Violation> {
    let strict = options.mode == Mode::Strict;
    if let Some(pos) = bytes.iter().position(|b| *b == b'\r') {
        let frame = bytes[..pos].windows(2).filter(|w| w == b"\n\n").count();
        return Err(Violation::new(
            "SSE-CRLF",
            Some(frame),
            format!(
                "carriage return at byte {pos}: frames must be LF-only (the client splits on \"\\n\\n\")"
            ),
        ));
    }
    if strict && let Err(e) = std::str::from_utf8(bytes) {
        return Err(Violation::new(
            "SSE-UTF8",
            None,
            format!("the body is not UTF-8: {e}"),
        ));
    }
    let mut decoder = SseDecoder::new();
    let mut frames = decoder.feed(bytes);
    let complete = frames.len();
    frames.extend(decoder.feed(b"\n\n"));
    if strict && frames.len() > complete {
        return Err(Violation::new(
            "SSE-TAIL",
            Some(complete),
            "the body ends inside a frame (missing the blank line that terminates it)",
        ));
    }
    let mut pipeline = Pipeline::new(&options);
    for (index, frame) in frames.iter().enumerate() {
        let value: Value = serde_json::from_str(&frame.data).map_err(|e| {
            Violation::new(
                "SSE-JSON",
                Some(index),
                format!("frame data is not JSON: {e}"),
            )
        })?;
        pipeline.frame(index, value)?;
    }
    pipeline.finish()
}

/// Verifies in-memory events as if they had been sent: each is serialized and
/// checked like a received frame, then expanded and sequenced.
pub fn verify_events(events: &[Event], options: VerifyOptions) -> Result<Report, Violation> {
    let mut pipeline = Pipeline::new(&options);
    for (index, event) in events.iter().enumerate() {
        let value = serde_json::to_value(event).map_err(|e| {
            Violation::new(
                "SCHEMA",
                Some(index),
                format!("event does not serialize: {e}"),
            )
        })?;
        pipeline.frame(index, value)?;
    }
    pipeline.finish()
}

/// Frame checks → chunk expansion → sequencing.
struct Pipeline {
    frames: wire::FrameChecker,
    expander: ChunkExpander,
    verifier: Verifier,
    warnings: Vec<String>,
    dropped: usize,
}

impl Pipeline {
    fn new(options: &VerifyOptions) -> Self {
        Pipeline {
            frames: wire::FrameChecker::new(options.mode),
            expander: ChunkExpander::new(),
            verifier: options.verifier(),
            warnings: Vec::new(),
            dropped: 0,
        }
    }

    fn frame(&mut self, index: usize, value: Value) -> Result<(), Violation> {
        let Some(event) = self.frames.check(value, index, &mut self.warnings)? else {
            self.dropped += 1;
            return Ok(());
        };
        let expanded = self.expander.push(event).map_err(|v| v.at(Some(index)))?;
        for event in &expanded {
            self.verifier.push(event).map_err(|v| v.at(Some(index)))?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Report, Violation> {
        for event in self.expander.finish() {
            self.verifier.push(&event).map_err(|v| v.at(None))?;
        }
        let mut report = self.verifier.finish()?;
        self.warnings.append(&mut report.warnings);
        report.warnings = self.warnings;
        report.dropped = self.dropped;
        Ok(report)
    }
}
