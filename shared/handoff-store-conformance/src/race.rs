//! Engine-level exactly-once races over a real store: many identical resumes of one
//! interrupted thread, every response checked. A store crate drives them with its own kind of
//! concurrency (several processes on one SQLite file, parallel connections to DynamoDB) and
//! counts the side effect's executions outside the engine and the store.
//!
//! - [`RaceAgent`]: a new run proposes one `refund` tool call and stops with a `tool_call`
//!   interrupt; a resumed run executes the refund through [`RunContext::effect`], reporting
//!   each execution to a sink the test owns, answers the call with the receipt and succeeds.
//!   Each execution mints a distinct receipt, so two executions would also show as two results.
//! - [`attempt`] classifies one resume: an answer (a stream the strict verifier accepts,
//!   ending `RUN_FINISHED` success with the one `TOOL_CALL_RESULT`), a 409 `THREAD_BUSY`
//!   refusal, an invalid stream, or anything else.
//! - [`assert_exactly_once`] checks a race's [`Tally`] and executions, the thread afterwards,
//!   and that a late resume replays the same result without executing.
//! - Wrap the store in [`handoff_core::store::counting::CountingStore`] to count commits
//!   refused on a condition (`conflicts`): a race in which none was refused did not overlap.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agui_protocol::verify::{OutcomeKind, VerifyOptions, verify_events};
use agui_protocol::{Event, Interrupt, Message, ResumeEntry, RunAgentInput, RunFinishedOutcome};
use async_trait::async_trait;
use futures::StreamExt;
use handoff_core::codes::ErrorCode;
use handoff_core::records::ThreadStatus;
use handoff_core::{Agent, AgentError, Engine, Finish, RunContext, RunOptions};
use serde_json::{Value, json};

/// How many problems a [`Tally`] keeps verbatim (the counts are always complete).
const KEPT_PROBLEMS: usize = 10;

/// Called with the idempotency key each time the refund really executes.
pub type EffectSink = Arc<dyn Fn(&str) + Send + Sync>;

/// The race's agent; see the [module docs](self).
pub struct RaceAgent {
    tag: String,
    sink: EffectSink,
    minted: Arc<AtomicU64>,
}

impl RaceAgent {
    /// An agent whose receipts are tagged `tag` (unique per process or instance, e.g. `c1-`), reporting
    /// every execution of the refund to `sink`.
    pub fn new(tag: impl Into<String>, sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        RaceAgent {
            tag: tag.into(),
            sink: Arc::new(sink),
            minted: Arc::default(),
        }
    }
}

#[async_trait]
impl Agent for RaceAgent {
    fn name(&self) -> &str {
        "race"
    }

    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        if !ctx.is_resume() {
            let call = ctx.tool_call("refund", &json!({ "orderId": "A1024", "amount": 40 }));
            let interrupt = Interrupt::new(format!("int-{call}"), "tool_call")
                .with_message("Refund 40 EUR?")
                .with_tool_call(call);
            return Ok(Finish::interrupt(interrupt));
        }
        for decision in ctx.decisions().to_vec() {
            let call = decision
                .tool_call_id()
                .cloned()
                .ok_or("a decision without a tool call")?;
            if !decision.approved() {
                ctx.tool_result(&call, "declined");
                continue;
            }
            let (sink, minted, tag) = (self.sink.clone(), self.minted.clone(), self.tag.clone());
            let receipt: Value = ctx
                .effect(&format!("refund-{call}"), move |key| async move {
                    sink(&key);
                    let n = minted.fetch_add(1, Ordering::SeqCst) + 1;
                    Ok::<_, String>(json!({ "refundId": format!("rf-{tag}{n}"), "key": key }))
                })
                .await?;
            ctx.tool_result(&call, receipt.to_string());
        }
        ctx.say("Refunded.");
        Ok(Finish::done())
    }
}

/// A resume approving `interrupt_id`, under `run_id`.
pub fn approve(thread_id: &str, run_id: &str, interrupt_id: &str) -> RunAgentInput {
    let entry = ResumeEntry::resolved(interrupt_id, json!({ "approved": true }));
    RunAgentInput::new(thread_id, run_id, Vec::new()).with_resume(vec![entry])
}

/// Runs a new run of a [`RaceAgent`] on a fresh `thread_id` and returns its interrupt;
/// panics unless the stream is valid and ends with exactly one interrupt.
pub async fn interrupt_thread(engine: &Engine, thread_id: &str) -> Interrupt {
    interrupt_thread_with(engine, thread_id, RunOptions::default()).await
}

/// [`interrupt_thread`] with `options` (another principal, say).
pub async fn interrupt_thread_with(
    engine: &Engine,
    thread_id: &str,
    options: RunOptions,
) -> Interrupt {
    let input = RunAgentInput::new(
        thread_id,
        "run-new",
        vec![Message::user("msg-user-1", "Refund order A1024")],
    );
    let stream = engine
        .start(input.clone(), options)
        .await
        .unwrap_or_else(|e| panic!("the new run was refused: {} ({e})", e.code().name));
    let events: Vec<Event> = stream.collect().await;
    if let Err(violation) = verify_events(&events, VerifyOptions::strict().with_input(input)) {
        panic!("invalid new-run stream: {violation}\n{}", dump(&events));
    }
    match events.last() {
        Some(Event::RunFinished(f)) => match &f.outcome {
            Some(RunFinishedOutcome::Interrupt { interrupts }) if interrupts.len() == 1 => {
                interrupts[0].clone()
            }
            other => panic!("expected one interrupt, got {other:?}\n{}", dump(&events)),
        },
        _ => panic!("expected RUN_FINISHED last\n{}", dump(&events)),
    }
}

/// How one resume of the race went.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A stream the strict verifier accepts, ending `RUN_FINISHED` with a success outcome and
    /// carrying exactly one `TOOL_CALL_RESULT`: its content.
    Answered(String),
    /// Refused before any stream with 409 `THREAD_BUSY`.
    Busy,
    /// A stream the strict verifier rejects: the violation and the events.
    Invalid(String),
    /// Anything else (another refusal, a valid stream that is not the answer).
    Other(String),
}

/// Starts `input` on `engine`, drains the stream and classifies the response.
pub async fn attempt(engine: &Engine, input: RunAgentInput) -> Outcome {
    attempt_with(engine, input, RunOptions::default()).await
}

/// [`attempt`] with `options` (another principal, say).
pub async fn attempt_with(engine: &Engine, input: RunAgentInput, options: RunOptions) -> Outcome {
    let stream = match engine.start(input.clone(), options).await {
        Ok(stream) => stream,
        Err(e) if e.code().name == "THREAD_BUSY" && e.http_status() == 409 => return Outcome::Busy,
        Err(e) => {
            return Outcome::Other(format!(
                "run {}: refused with {} {} ({e})",
                input.run_id,
                e.http_status(),
                e.code().name
            ));
        }
    };
    let events: Vec<Event> = stream.collect().await;
    let run_id = input.run_id.clone();
    let report = match verify_events(&events, VerifyOptions::strict().with_input(input)) {
        Ok(report) => report,
        Err(violation) => {
            return Outcome::Invalid(format!("run {run_id}: {violation}\n{}", dump(&events)));
        }
    };
    let results: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallResult(r) => Some(r.content.text()),
            _ => None,
        })
        .collect();
    let success = report.runs.len() == 1
        && report.runs[0].outcome == OutcomeKind::Success
        && matches!(events.last(), Some(Event::RunFinished(_)));
    match results.as_slice() {
        [result] if success => Outcome::Answered(result.clone()),
        _ => Outcome::Other(format!(
            "run {run_id}: a valid stream that is not the answer ({} result(s))\n{}",
            results.len(),
            dump(&events)
        )),
    }
}

/// The outcomes of a race, counted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// [`Outcome::Answered`] responses.
    pub answered: u64,
    /// [`Outcome::Busy`] refusals.
    pub busy: u64,
    /// [`Outcome::Invalid`] streams.
    pub invalid: u64,
    /// [`Outcome::Other`] responses.
    pub other: u64,
    /// The distinct `TOOL_CALL_RESULT` contents of the answers.
    pub results: BTreeSet<String>,
    /// The first invalid and other responses, described.
    pub problems: Vec<String>,
}

impl Tally {
    /// Counts one outcome.
    pub fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Answered(result) => {
                self.answered += 1;
                self.results.insert(result);
            }
            Outcome::Busy => self.busy += 1,
            Outcome::Invalid(problem) => {
                self.invalid += 1;
                self.keep(problem);
            }
            Outcome::Other(problem) => {
                self.other += 1;
                self.keep(problem);
            }
        }
    }

    /// Adds another tally's counts (another process's, another task's).
    pub fn merge(&mut self, other: Tally) {
        self.answered += other.answered;
        self.busy += other.busy;
        self.invalid += other.invalid;
        self.other += other.other;
        self.results.extend(other.results);
        for problem in other.problems {
            self.keep(problem);
        }
    }

    /// Every response counted.
    pub fn attempts(&self) -> u64 {
        self.answered + self.busy + self.invalid + self.other
    }

    fn keep(&mut self, problem: String) {
        if self.problems.len() < KEPT_PROBLEMS {
            self.problems.push(problem);
        }
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} attempts: {} answered, {} THREAD_BUSY, {} invalid, {} other",
            self.attempts(),
            self.answered,
            self.busy,
            self.invalid,
            self.other
        )
    }
}

/// Asserts that the race on `thread_id` answered `interrupt` exactly once: `executed()` (the
/// test's own record of executions) holds the one idempotency key; `attempts` responses, every
/// one an answer or a 409 `THREAD_BUSY`, at least one answer and all with one result;
/// the thread is idle with the result in its history; and a late resume replays that result
/// without executing again.
pub async fn assert_exactly_once(
    engine: &Engine,
    thread_id: &str,
    interrupt: &Interrupt,
    tally: &Tally,
    attempts: u64,
    executed: impl Fn() -> Vec<String>,
) {
    let call = interrupt
        .tool_call_id
        .as_ref()
        .expect("the interrupt names its tool call");
    let key = format!("{thread_id}/refund-{call}");
    let problems = tally.problems.join("\n---\n");
    // The failed responses say why an execution repeated (e.g. a store that failed mid-effect).
    assert_eq!(
        executed(),
        vec![key.clone()],
        "executions of the refund ({tally}):\n{problems}"
    );
    assert_eq!(tally.invalid, 0, "invalid streams ({tally}):\n{problems}");
    assert_eq!(
        tally.other, 0,
        "unexpected responses ({tally}):\n{problems}"
    );
    assert_eq!(tally.attempts(), attempts, "responses counted: {tally}");
    assert!(tally.answered > 0, "nobody got the answer: {tally}");
    assert_eq!(
        tally.results.len(),
        1,
        "the answers carry different results: {:?}",
        tally.results
    );

    let result = tally.results.first().expect("one result").clone();
    let view = engine
        .thread(&handoff_core::Principal::anonymous(), thread_id)
        .await
        .expect("read the thread")
        .expect("the thread exists");
    assert_eq!(view.status, ThreadStatus::Idle, "the thread afterwards");
    assert!(view.pending_interrupts.is_empty(), "nothing pending");
    let recorded: Vec<String> = view
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(t) if &t.tool_call_id == call => Some(t.content.text()),
            _ => None,
        })
        .collect();
    assert_eq!(recorded, vec![result.clone()], "the thread's tool message");

    let late = attempt(engine, approve(thread_id, "run-late", &interrupt.id)).await;
    assert_eq!(late, Outcome::Answered(result), "a late resume replays");
    assert_eq!(executed(), vec![key], "the late resume executed nothing");
}

fn dump(events: &[Event]) -> String {
    events
        .iter()
        .enumerate()
        .map(|(i, e)| format!("  #{i} {}\n", e.to_json()))
        .collect()
}
