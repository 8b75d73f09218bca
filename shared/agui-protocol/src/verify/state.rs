//! The sequencing state machine (`verifyEvents` rules plus the strict checks).

use std::collections::HashSet;

use super::run::Run;
use super::{Mode, OutcomeKind, Report, RunSummary, Violation};
use crate::event::{RunFinished, RunStarted};
use crate::ids::{RunId, ThreadId, ToolCallId};
use crate::interrupt::RunFinishedOutcome;
use crate::message::Message;
use crate::{Event, PROTOCOL_VERSION, RunAgentInput};

/// Largest integer a JSON number carries exactly (2^53 − 1).
pub(super) const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Nothing seen yet.
    Idle,
    /// Between `RUN_STARTED` and its terminal event.
    Active,
    /// After `RUN_FINISHED`.
    Finished,
    /// After `RUN_ERROR`.
    Errored,
}

/// The sequencing verifier. Feed it events after chunk expansion.
///
/// A violation's `index` is the 0-based count of events pushed before the
/// offending one. After a violation the verifier keeps returning it.
#[derive(Debug, Clone)]
pub struct Verifier {
    mode: Mode,
    expected_thread: Option<ThreadId>,
    expected_run: Option<RunId>,
    /// Input messages whose owners seed the run with the input's run id (strict).
    seed: Option<(RunId, Vec<Message>)>,
    /// Tool calls known stream-wide: started, in a snapshot, or in the input.
    known_tools: HashSet<ToolCallId>,
    seen_runs: HashSet<RunId>,
    last_start_index: Option<usize>,
    phase: Phase,
    run: Run,
    runs: Vec<RunSummary>,
    count: usize,
    failed: Option<Violation>,
}

impl Verifier {
    /// A verifier with no expectations.
    pub fn new(mode: Mode) -> Self {
        Verifier {
            mode,
            expected_thread: None,
            expected_run: None,
            seed: None,
            known_tools: HashSet::new(),
            seen_runs: HashSet::new(),
            last_start_index: None,
            phase: Phase::Idle,
            run: Run::default(),
            runs: Vec::new(),
            count: 0,
            failed: None,
        }
    }

    /// Expects every run on `thread_id` and the stream's last run to be `run_id` (strict).
    pub fn expect_ids(mut self, thread_id: impl Into<ThreadId>, run_id: impl Into<RunId>) -> Self {
        self.set_expected(Some(thread_id.into()), Some(run_id.into()));
        self
    }

    /// Expects the ids of `input`; its assistant tool calls become known (an
    /// interrupt may refer to them), and in strict mode its messages seed the
    /// owners of the run with the input's run id (rule A7 applied to the input).
    pub fn expect_input(mut self, input: &RunAgentInput) -> Self {
        self.set_expected(Some(input.thread_id.clone()), Some(input.run_id.clone()));
        for message in &input.messages {
            if let Message::Assistant(m) = message {
                self.known_tools
                    .extend(m.tool_calls.iter().flatten().map(|c| c.id.clone()));
            }
        }
        self.seed = Some((input.run_id.clone(), input.messages.clone()));
        self
    }

    pub(super) fn set_expected(&mut self, thread: Option<ThreadId>, run: Option<RunId>) {
        if thread.is_some() {
            self.expected_thread = thread;
        }
        if run.is_some() {
            self.expected_run = run;
        }
    }

    /// Checks one event.
    pub fn push(&mut self, event: &Event) -> Result<(), Violation> {
        if let Some(v) = &self.failed {
            return Err(v.clone());
        }
        let index = self.count;
        self.count += 1;
        self.check(event, index)
            .inspect_err(|v| self.failed = Some(v.clone()))
    }

    /// Ends the stream: strict mode requires every run to have ended and the
    /// last run to carry the expected run id. Returns the summary.
    pub fn finish(&mut self) -> Result<Report, Violation> {
        if let Some(v) = &self.failed {
            return Err(v.clone());
        }
        if self.mode == Mode::Strict
            && let Err(v) = self.strict_finish()
        {
            self.failed = Some(v.clone());
            return Err(v);
        }
        Ok(Report {
            events: self.count,
            dropped: 0,
            warnings: Vec::new(),
            runs: self.runs.clone(),
        })
    }

    fn strict_finish(&self) -> Result<(), Violation> {
        if self.runs.is_empty() {
            return Err(Violation::new(
                "STRICT-TERMINAL",
                None,
                "the stream carries no run",
            ));
        }
        if self.phase == Phase::Active {
            let id = self.run.run_id.as_deref().unwrap_or_default();
            return Err(Violation::new(
                "STRICT-TERMINAL",
                None,
                format!(
                    "run '{id}' has no terminal event: the stream ends without RUN_FINISHED or RUN_ERROR"
                ),
            ));
        }
        let last = self.runs.iter().rev().find_map(|r| r.run_id.as_ref());
        if let (Some(expected), Some(last)) = (&self.expected_run, last)
            && expected != last
        {
            return Err(Violation::new(
                "STRICT-RUN-ID",
                self.last_start_index,
                format!("the stream's run is '{last}', but the input's runId is '{expected}'"),
            ));
        }
        Ok(())
    }

    fn strict(&self) -> bool {
        self.mode == Mode::Strict
    }

    fn check(&mut self, event: &Event, index: usize) -> Result<(), Violation> {
        let v = |rule, msg: String| Violation::new(rule, Some(index), msg);
        let ty = event.event_type();
        if let Some(ts) = event.base().timestamp.filter(|t| *t > MAX_SAFE_INTEGER) {
            return Err(v(
                "SCHEMA",
                format!("timestamp {ts} is outside the safe integer range (2^53 - 1)"),
            ));
        }
        if let Event::RunFinished(RunFinished {
            outcome: Some(RunFinishedOutcome::Interrupt { interrupts }),
            ..
        }) = event
            && interrupts.is_empty()
        {
            return Err(v(
                "SCHEMA",
                "an interrupt outcome needs at least one interrupt (`interrupts: []`)".into(),
            ));
        }
        if matches!(
            event,
            Event::TextMessageChunk(_) | Event::ToolCallChunk(_) | Event::ReasoningMessageChunk(_)
        ) {
            return Err(v(
                "EXPAND",
                format!("'{ty}' must be expanded before verification (see chunks::ChunkExpander)"),
            ));
        }
        match (self.phase, event) {
            (Phase::Idle, Event::RunStarted(_) | Event::RunError(_)) => {}
            (Phase::Idle, _) => return Err(v("L1", "First event must be 'RUN_STARTED'".into())),
            (Phase::Errored, Event::RunStarted(_)) => {}
            (Phase::Errored, _) => {
                return Err(v(
                    "L2",
                    format!(
                        "Cannot send event type '{ty}': The run has already errored with 'RUN_ERROR'. No further events can be sent."
                    ),
                ));
            }
            (Phase::Finished, Event::RunStarted(_) | Event::RunError(_)) => {}
            (Phase::Finished, _) => {
                return Err(v(
                    "L3",
                    format!(
                        "Cannot send event type '{ty}': The run has already finished with 'RUN_FINISHED'. Start a new run with 'RUN_STARTED'."
                    ),
                ));
            }
            (Phase::Active, Event::RunStarted(_)) => {
                return Err(v(
                    "L4",
                    "Cannot send 'RUN_STARTED' while a run is still active. The previous run must be finished with 'RUN_FINISHED' before starting a new run.".into(),
                ));
            }
            (Phase::Active, _) => {}
        }
        match event {
            Event::RunStarted(e) => self.run_started(e, index),
            Event::RunFinished(e) => self.run_finished(e, index),
            Event::RunError(_) => {
                match self.phase {
                    Phase::Active => self.set_outcome(OutcomeKind::Error, Vec::new()),
                    Phase::Finished => {
                        if let Some(last) = self.runs.last_mut() {
                            last.late_error = true;
                        }
                    }
                    Phase::Idle | Phase::Errored => self.runs.push(RunSummary {
                        run_id: None,
                        thread_id: None,
                        outcome: OutcomeKind::Error,
                        interrupt_ids: Vec::new(),
                        late_error: false,
                    }),
                }
                self.phase = Phase::Errored;
                Ok(())
            }
            other => self.run.apply(other, index, &mut self.known_tools),
        }
    }

    fn set_outcome(&mut self, outcome: OutcomeKind, interrupt_ids: Vec<crate::ids::InterruptId>) {
        if let Some(last) = self.runs.last_mut() {
            last.outcome = outcome;
            last.interrupt_ids = interrupt_ids;
        }
    }

    fn run_started(&mut self, e: &RunStarted, index: usize) -> Result<(), Violation> {
        let v = |rule, msg: String| Violation::new(rule, Some(index), msg);
        if self.strict() {
            if e.protocol_version.as_deref() != Some(PROTOCOL_VERSION) {
                let got = e
                    .protocol_version
                    .as_deref()
                    .map_or_else(|| "absent".to_owned(), |p| format!("'{p}'"));
                return Err(v(
                    "STRICT-PROTOCOL-VERSION",
                    format!(
                        "RUN_STARTED must declare protocolVersion '{PROTOCOL_VERSION}', got {got}"
                    ),
                ));
            }
            if let Some(expected) = self.expected_thread.as_ref().filter(|t| **t != e.thread_id) {
                return Err(v(
                    "STRICT-THREAD-ID",
                    format!(
                        "RUN_STARTED.threadId '{}' differs from the input's '{expected}'",
                        e.thread_id
                    ),
                ));
            }
            if self.seen_runs.contains(&e.run_id) {
                return Err(v(
                    "STRICT-RUN-ID",
                    format!("runId '{}' is reused in this stream", e.run_id),
                ));
            }
        }
        self.seen_runs.insert(e.run_id.clone());
        self.run = Run::new(e.run_id.clone(), e.thread_id.clone());
        // A7: the echoed input seeds owners; strict mode seeds from the expected input too.
        let mut seeds: Vec<Message> = e
            .input
            .as_ref()
            .map(|i| i.messages.clone())
            .unwrap_or_default();
        if let Some((run_id, messages)) = &self.seed
            && self.strict()
            && *run_id == e.run_id
        {
            seeds.extend(messages.iter().cloned());
        }
        for message in &seeds {
            self.run.seed_message(message, false, &mut self.known_tools);
        }
        self.runs.push(RunSummary {
            run_id: Some(e.run_id.clone()),
            thread_id: Some(e.thread_id.clone()),
            outcome: OutcomeKind::None,
            interrupt_ids: Vec::new(),
            late_error: false,
        });
        self.last_start_index = Some(index);
        self.phase = Phase::Active;
        Ok(())
    }

    fn run_finished(&mut self, e: &RunFinished, index: usize) -> Result<(), Violation> {
        let v = |rule, msg: String| Violation::new(rule, Some(index), msg);
        if let Some((what, ids)) = self.run.still_open() {
            return Err(v(
                "L6",
                format!(
                    "Cannot send 'RUN_FINISHED' while {what} are still active: {}",
                    ids.join(", ")
                ),
            ));
        }
        if self.strict() {
            self.strict_run_finished(e, index)?;
        }
        let (kind, ids) = match &e.outcome {
            None | Some(RunFinishedOutcome::Success { .. }) => (OutcomeKind::Success, Vec::new()),
            Some(RunFinishedOutcome::Interrupt { interrupts }) => (
                OutcomeKind::Interrupt,
                interrupts.iter().map(|i| i.id.clone()).collect(),
            ),
            Some(RunFinishedOutcome::Cancelled) => (OutcomeKind::Cancelled, Vec::new()),
        };
        self.set_outcome(kind, ids);
        self.phase = Phase::Finished;
        Ok(())
    }

    fn strict_run_finished(&self, e: &RunFinished, index: usize) -> Result<(), Violation> {
        let v = |rule, msg: String| Violation::new(rule, Some(index), msg);
        let run = &self.run;
        if let Some(started) = run.run_id.as_ref().filter(|r| **r != e.run_id) {
            return Err(v(
                "STRICT-RUN-ID",
                format!(
                    "RUN_FINISHED.runId '{}' differs from RUN_STARTED's '{started}'",
                    e.run_id
                ),
            ));
        }
        if let Some(started) = run.thread_id.as_ref().filter(|t| **t != e.thread_id) {
            return Err(v(
                "STRICT-THREAD-ID",
                format!(
                    "RUN_FINISHED.threadId '{}' differs from RUN_STARTED's '{started}'",
                    e.thread_id
                ),
            ));
        }
        let Some(outcome) = &e.outcome else {
            return Err(v(
                "STRICT-OUTCOME",
                "RUN_FINISHED must carry an explicit outcome".into(),
            ));
        };
        match outcome {
            RunFinishedOutcome::Interrupt { interrupts } => {
                let mut seen = HashSet::new();
                for interrupt in interrupts {
                    if !seen.insert(&interrupt.id) {
                        return Err(v(
                            "STRICT-INTERRUPT-ID",
                            format!("interrupt id '{}' appears twice in the run", interrupt.id),
                        ));
                    }
                    if let Some(call) = interrupt
                        .tool_call_id
                        .as_ref()
                        .filter(|c| !self.known_tools.contains(*c))
                    {
                        return Err(v(
                            "STRICT-INTERRUPT-TOOL-CALL",
                            format!(
                                "interrupt '{}' refers to tool call '{call}', which was neither started in this stream nor in the input messages",
                                interrupt.id
                            ),
                        ));
                    }
                }
                let missing: Vec<&str> = [
                    (run.saw_state_snapshot, "STATE_SNAPSHOT"),
                    (run.saw_messages_snapshot, "MESSAGES_SNAPSHOT"),
                ]
                .iter()
                .filter(|(seen, _)| !seen)
                .map(|(_, name)| *name)
                .collect();
                if !missing.is_empty() {
                    return Err(v(
                        "STRICT-SNAPSHOT",
                        format!(
                            "an interrupted run must send {} before its RUN_FINISHED",
                            missing.join(" and ")
                        ),
                    ));
                }
            }
            RunFinishedOutcome::Success {
                pending_tool_call_ids: Some(listed),
            } => {
                let expected: Vec<&ToolCallId> = run
                    .started_tools
                    .iter()
                    .filter(|c| !run.answered_tools.contains(*c))
                    .collect();
                if listed.iter().collect::<Vec<_>>() != expected {
                    return Err(v(
                        "STRICT-PENDING",
                        format!(
                            "pendingToolCallIds is [{}], but the run's started-but-unanswered calls are [{}]",
                            join(listed.iter()),
                            join(expected.into_iter())
                        ),
                    ));
                }
            }
            RunFinishedOutcome::Success {
                pending_tool_call_ids: None,
            }
            | RunFinishedOutcome::Cancelled => {}
        }
        Ok(())
    }
}

fn join<'a>(ids: impl Iterator<Item = &'a ToolCallId>) -> String {
    ids.map(|i| i.as_str()).collect::<Vec<_>>().join(", ")
}
