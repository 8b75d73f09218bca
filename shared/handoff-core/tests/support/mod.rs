//! Shared fixtures for the engine's integration tests: a manual-clock runtime, a
//! controllable sleep, a fault-injecting store, gates, test agents, stream
//! helpers and the stream-validity assertion every test applies.
//!
//! Each test binary uses a subset of this module.
#![allow(dead_code, unreachable_pub)]

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use agui_protocol::event::{RunError, RunFinished, ToolCallResult};
use agui_protocol::verify::{VerifyOptions, verify_events};
use agui_protocol::{
    Event, EventType, Interrupt, Message, PROTOCOL_VERSION, PatchOp, ResumeEntry, RunAgentInput,
    RunFinishedOutcome,
};
use async_trait::async_trait;
use futures::StreamExt;
use futures::future::BoxFuture;
use handoff_core::Principal;
use handoff_core::codes::ErrorCode;
use handoff_core::records::RunRecord;
use handoff_core::runtime::{ManualClock, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::time_fmt::format_ms;
use handoff_core::{
    Agent, AgentError, ApprovalPolicy, CoreError, Engine, EngineConfig, Finish, Item, RunContext,
    RunOptions, RunStream, Runtime, Sleep, Store, StoreError, ThreadView, WithApproval, Write,
    WriteOp,
};
use serde_json::{Value, json};

/// Where every test clock starts (2026-11-18, well inside the safe-integer range).
pub const T0: u64 = 1_795_000_000_000;

/// Locks a mutex, ignoring poisoning (a panicking agent must not break the fixtures).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

// ---------------------------------------------------------------------------
// Gate: a reusable "wait until the test says so".
// ---------------------------------------------------------------------------

/// A one-way latch. `wait()` resolves once `open()` has been called. The open
/// flag is re-checked on every poll, so it also works under `now_or_never`.
#[derive(Clone, Default)]
pub struct Gate {
    inner: Arc<GateInner>,
}

#[derive(Default)]
struct GateInner {
    open: AtomicBool,
    wakers: Mutex<Vec<Waker>>,
}

impl Gate {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn open(&self) {
        self.inner.open.store(true, Ordering::SeqCst);
        for waker in lock(&self.inner.wakers).drain(..) {
            waker.wake();
        }
    }
    pub fn is_open(&self) -> bool {
        self.inner.open.load(Ordering::SeqCst)
    }
    pub fn wait(&self) -> impl Future<Output = ()> + Send + 'static {
        let inner = self.inner.clone();
        futures::future::poll_fn(move |cx: &mut Context<'_>| {
            if inner.open.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            lock(&inner.wakers).push(cx.waker().clone());
            // Re-check after registering, so an `open()` in between is not missed.
            if inner.open.load(Ordering::SeqCst) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }
}

// ---------------------------------------------------------------------------
// ControlSleep: the host timer, driven by the test.
// ---------------------------------------------------------------------------

/// A [`Sleep`] that records every requested duration and completes either
/// immediately (durations up to `immediate_up_to`) or when the test calls
/// [`ControlSleep::fire`] (every sleep requested before that call completes).
#[derive(Clone, Default)]
pub struct ControlSleep {
    inner: Arc<SleepInner>,
}

#[derive(Default)]
struct SleepInner {
    requested: Mutex<Vec<u64>>,
    fired_upto: AtomicUsize,
    immediate_up_to: Mutex<Option<u64>>,
    wakers: Mutex<Vec<Waker>>,
}

impl ControlSleep {
    pub fn new() -> Self {
        Self::default()
    }
    /// Sleeps of at most `millis` complete at once.
    pub fn complete_immediately_up_to(&self, millis: u64) {
        *lock(&self.inner.immediate_up_to) = Some(millis);
    }
    /// Completes every sleep requested so far.
    pub fn fire(&self) {
        let n = lock(&self.inner.requested).len();
        self.inner.fired_upto.store(n, Ordering::SeqCst);
        for waker in lock(&self.inner.wakers).drain(..) {
            waker.wake();
        }
    }
    /// The durations asked for, in order.
    pub fn requested(&self) -> Vec<u64> {
        lock(&self.inner.requested).clone()
    }
}

impl Sleep for ControlSleep {
    fn sleep(&self, millis: u64) -> BoxFuture<'static, ()> {
        let index = {
            let mut requested = lock(&self.inner.requested);
            requested.push(millis);
            requested.len() - 1
        };
        if lock(&self.inner.immediate_up_to).is_some_and(|limit| millis <= limit) {
            return Box::pin(futures::future::ready(()));
        }
        let inner = self.inner.clone();
        Box::pin(futures::future::poll_fn(move |cx: &mut Context<'_>| {
            if inner.fired_upto.load(Ordering::SeqCst) > index {
                return Poll::Ready(());
            }
            lock(&inner.wakers).push(cx.waker().clone());
            if inner.fired_upto.load(Ordering::SeqCst) > index {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }))
    }
}

// ---------------------------------------------------------------------------
// FaultStore: MemoryStore plus injected failures and held commits.
// ---------------------------------------------------------------------------

type Matcher = Box<dyn Fn(&str, &[Write]) -> bool + Send + Sync>;

enum Action {
    Fail(StoreError),
    Hold(Gate),
}

struct Rule {
    matcher: Matcher,
    action: Action,
    remaining: Option<usize>,
}

/// Wraps [`MemoryStore`]; commits matching a rule fail or wait for a gate.
#[derive(Default)]
pub struct FaultStore {
    inner: MemoryStore,
    rules: Mutex<Vec<Rule>>,
    commits: AtomicUsize,
    failed: AtomicUsize,
    conflicts: AtomicUsize,
    yielding: AtomicBool,
    keys_read: Mutex<Vec<String>>,
}

impl FaultStore {
    /// Every read and commit yields to the executor once first, so concurrent
    /// requests interleave between their reads and their writes.
    pub fn yield_on_io(&self) {
        self.yielding.store(true, Ordering::SeqCst);
    }
    async fn maybe_yield(&self) {
        if self.yielding.load(Ordering::SeqCst) {
            yield_now().await;
        }
    }
    pub fn new() -> Self {
        Self::default()
    }
    /// Every matching commit fails with `error` (nothing is written).
    pub fn fail_commits_where(
        &self,
        error: StoreError,
        matcher: impl Fn(&str, &[Write]) -> bool + Send + Sync + 'static,
    ) {
        lock(&self.rules).push(Rule {
            matcher: Box::new(matcher),
            action: Action::Fail(error),
            remaining: None,
        });
    }
    /// The next matching commit waits until the returned gate opens, then applies.
    pub fn hold_next_commit_where(
        &self,
        matcher: impl Fn(&str, &[Write]) -> bool + Send + Sync + 'static,
    ) -> Gate {
        let gate = Gate::new();
        lock(&self.rules).push(Rule {
            matcher: Box::new(matcher),
            action: Action::Hold(gate.clone()),
            remaining: Some(1),
        });
        gate
    }
    /// Removes every rule.
    pub fn heal(&self) {
        lock(&self.rules).clear();
    }
    /// Commits attempted so far.
    pub fn commits(&self) -> usize {
        self.commits.load(Ordering::SeqCst)
    }
    /// Commits refused because a condition did not hold (lost races).
    pub fn conflicts(&self) -> usize {
        self.conflicts.load(Ordering::SeqCst)
    }
    /// Every key read with `get` so far, in order.
    pub fn keys_read(&self) -> Vec<String> {
        lock(&self.keys_read).clone()
    }
    /// Commits failed by a rule so far.
    pub fn injected_failures(&self) -> usize {
        self.failed.load(Ordering::SeqCst)
    }

    fn action_for(&self, partition: &str, writes: &[Write]) -> Option<Result<Gate, StoreError>> {
        let mut rules = lock(&self.rules);
        let rule = rules
            .iter_mut()
            .find(|r| r.remaining != Some(0) && (r.matcher)(partition, writes))?;
        if let Some(n) = rule.remaining.as_mut() {
            *n -= 1;
        }
        Some(match &rule.action {
            Action::Fail(e) => Err(e.clone()),
            Action::Hold(gate) => Ok(gate.clone()),
        })
    }
}

#[async_trait]
impl Store for FaultStore {
    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        self.maybe_yield().await;
        lock(&self.keys_read).extend(keys.iter().map(|k| (*k).to_owned()));
        self.inner.get(partition, keys, now_ms).await
    }
    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        self.maybe_yield().await;
        self.commits.fetch_add(1, Ordering::SeqCst);
        match self.action_for(partition, &writes) {
            Some(Err(e)) => {
                self.failed.fetch_add(1, Ordering::SeqCst);
                return Err(e);
            }
            Some(Ok(gate)) => gate.wait().await,
            None => {}
        }
        let result = self.inner.commit(partition, writes, now_ms).await;
        if matches!(result, Err(StoreError::ConditionFailed { .. })) {
            self.conflicts.fetch_add(1, Ordering::SeqCst);
        }
        result
    }
    async fn list(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        self.inner.list(partition, prefix, now_ms).await
    }
}

/// Returns `Pending` once (waking itself), then `Ready`: lets other tasks run.
pub fn yield_now() -> impl Future<Output = ()> + Send {
    let mut yielded = false;
    futures::future::poll_fn(move |cx: &mut Context<'_>| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
}

/// The `status` of the thread record a batch puts, if it puts one.
pub fn thread_put_status(writes: &[Write]) -> Option<String> {
    writes
        .iter()
        .find(|w| w.key == "thread")
        .and_then(|w| match &w.op {
            WriteOp::Put { value, .. } => serde_json::from_slice::<Value>(value)
                .ok()?
                .get("status")?
                .as_str()
                .map(str::to_owned),
            _ => None,
        })
}

/// Matches the commit that finishes a run with the thread left in `status`
/// (`"idle"` or `"interrupted"`): claims always write `"running"`.
pub fn finishing_commit(
    status: &'static str,
) -> impl Fn(&str, &[Write]) -> bool + Send + Sync + 'static {
    move |_, writes| thread_put_status(writes).as_deref() == Some(status)
}

// ---------------------------------------------------------------------------
// Harness: engine + clock + sleep + store.
// ---------------------------------------------------------------------------

/// One engine over a [`FaultStore`], with a manual clock and a controllable sleep.
pub struct Harness {
    pub clock: Arc<ManualClock>,
    pub sleep: ControlSleep,
    pub store: Arc<FaultStore>,
    pub engine: Engine,
}

impl Harness {
    pub fn new(agent: impl Agent) -> Self {
        Self::with_config(agent, EngineConfig::default())
    }

    pub fn with_config(agent: impl Agent, config: EngineConfig) -> Self {
        let clock = Arc::new(ManualClock::new(T0));
        let sleep = ControlSleep::new();
        let store = Arc::new(FaultStore::new());
        let runtime = Runtime::new(clock.clone(), SequentialIds::new("h"), sleep.clone());
        let engine = Engine::with_config(Arc::new(agent), store.clone(), runtime, config);
        Harness {
            clock,
            sleep,
            store,
            engine,
        }
    }

    /// A second engine (another "instance") over the same store, clock and sleep.
    pub fn instance(&self, agent: impl Agent, tag: &str) -> Engine {
        let runtime = Runtime::new(
            self.clock.clone(),
            SequentialIds::new(tag),
            self.sleep.clone(),
        );
        Engine::with_config(
            Arc::new(agent),
            self.store.clone(),
            runtime,
            self.engine.config().clone(),
        )
    }

    pub fn now(&self) -> u64 {
        self.engine.runtime().now_ms()
    }
    pub fn advance(&self, millis: u64) {
        self.clock.advance(millis);
    }

    /// Starts a run that must be accepted; returns its stream.
    pub async fn stream(&self, input: &RunAgentInput) -> RunStream {
        self.stream_with(input, RunOptions::default()).await
    }
    pub async fn stream_with(&self, input: &RunAgentInput, options: RunOptions) -> RunStream {
        match self.engine.start(input.clone(), options).await {
            Ok(stream) => stream,
            Err(e) => panic!("run {} was rejected: {} ({e})", input.run_id, e.code().name),
        }
    }

    /// Runs to completion and checks the stream with the strict verifier.
    pub async fn run(&self, input: &RunAgentInput) -> Vec<Event> {
        self.run_with(input, RunOptions::default()).await
    }
    pub async fn run_with(&self, input: &RunAgentInput, options: RunOptions) -> Vec<Event> {
        let events = self
            .stream_with(input, options)
            .await
            .collect::<Vec<_>>()
            .await;
        assert_valid_stream(&events, input);
        events
    }

    /// A start that must be refused before any stream.
    pub async fn reject(&self, input: &RunAgentInput) -> CoreError {
        match self
            .engine
            .start(input.clone(), RunOptions::default())
            .await
        {
            // Not drained: the accepted run might wait on a gate forever.
            Ok(_stream) => panic!(
                "run {} was expected to be rejected before any stream, but was accepted",
                input.run_id
            ),
            Err(e) => e,
        }
    }

    pub async fn thread(&self, thread_id: &str) -> ThreadView {
        self.engine
            .thread(&Principal::anonymous(), thread_id)
            .await
            .expect("thread read")
            .expect("thread exists")
    }

    pub async fn run_record(
        &self,
        thread_id: &str,
        run_id: &str,
    ) -> Option<(RunRecord, Vec<Event>)> {
        self.engine
            .run_events(&Principal::anonymous(), thread_id, run_id)
            .await
            .expect("run record read")
    }

    /// Reads one raw item of a thread partition.
    pub async fn item(&self, thread_id: &str, key: &str) -> Option<Item> {
        let mut items = self
            .store
            .get(thread_id, &[key], self.now())
            .await
            .expect("store read");
        items.pop().flatten()
    }
}

/// Polls `stream` without blocking until it is pending with nothing left to do
/// (no wake-up arrived during the poll) or ended; returns what it yielded and
/// whether it ended.
pub fn drain_ready<S: futures::Stream + Unpin>(stream: &mut S) -> (Vec<S::Item>, bool) {
    struct Flag(AtomicBool);
    impl futures::task::ArcWake for Flag {
        fn wake_by_ref(arc_self: &Arc<Self>) {
            arc_self.0.store(true, Ordering::SeqCst);
        }
    }
    let flag = Arc::new(Flag(AtomicBool::new(false)));
    let waker = futures::task::waker(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut out = Vec::new();
    loop {
        flag.0.store(false, Ordering::SeqCst);
        match stream.poll_next_unpin(&mut cx) {
            Poll::Ready(Some(event)) => out.push(event),
            Poll::Ready(None) => return (out, true),
            Poll::Pending if flag.0.load(Ordering::SeqCst) => {}
            Poll::Pending => return (out, false),
        }
    }
}

// ---------------------------------------------------------------------------
// Stream validity.
// ---------------------------------------------------------------------------

/// The stream must pass the strict verifier against the input it answers, and
/// must hold Handoff's own framing promises: `RUN_STARTED` (protocolVersion
/// "1.0") first, exactly one terminal event and it is the last one, and a
/// `RUN_FINISHED` always carries an explicit outcome.
#[track_caller]
pub fn assert_valid_stream(events: &[Event], input: &RunAgentInput) {
    if let Err(violation) = verify_events(events, VerifyOptions::strict().with_input(input.clone()))
    {
        panic!(
            "strict verifier rejected the stream: {violation}\n{}",
            dump(events)
        );
    }
    match events.first() {
        Some(Event::RunStarted(e)) => {
            assert_eq!(
                e.protocol_version.as_deref(),
                Some(PROTOCOL_VERSION),
                "RUN_STARTED.protocolVersion\n{}",
                dump(events)
            );
            assert_eq!(e.thread_id, input.thread_id, "RUN_STARTED.threadId");
            assert_eq!(e.run_id, input.run_id, "RUN_STARTED.runId");
        }
        _ => panic!("the stream must open with RUN_STARTED\n{}", dump(events)),
    }
    let terminals: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Event::RunFinished(_) | Event::RunError(_)))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(
        terminals,
        vec![events.len() - 1],
        "exactly one terminal event, last\n{}",
        dump(events)
    );
    if let Some(Event::RunFinished(f)) = events.last() {
        assert!(
            f.outcome.is_some(),
            "RUN_FINISHED without an explicit outcome\n{}",
            dump(events)
        );
        assert_eq!(f.run_id, input.run_id, "RUN_FINISHED.runId");
    }
}

/// One line per event, for failure messages.
pub fn dump(events: &[Event]) -> String {
    events
        .iter()
        .enumerate()
        .map(|(i, e)| format!("  #{i} {}\n", e.to_json()))
        .collect()
}

pub fn types(events: &[Event]) -> Vec<EventType> {
    events.iter().map(Event::event_type).collect()
}

pub fn position(events: &[Event], ty: EventType) -> Option<usize> {
    events.iter().position(|e| e.event_type() == ty)
}

pub fn finished(events: &[Event]) -> &RunFinished {
    match events.last() {
        Some(Event::RunFinished(f)) => f,
        _ => panic!("expected RUN_FINISHED last\n{}", dump(events)),
    }
}

pub fn run_error(events: &[Event]) -> &RunError {
    match events.last() {
        Some(Event::RunError(e)) => e,
        _ => panic!("expected RUN_ERROR last\n{}", dump(events)),
    }
}

pub fn outcome(events: &[Event]) -> &RunFinishedOutcome {
    finished(events).outcome.as_ref().expect("explicit outcome")
}

pub fn interrupts(events: &[Event]) -> Vec<Interrupt> {
    match outcome(events) {
        RunFinishedOutcome::Interrupt { interrupts } => interrupts.clone(),
        other => panic!(
            "expected an interrupt outcome, got {other:?}\n{}",
            dump(events)
        ),
    }
}

pub fn tool_results(events: &[Event]) -> Vec<ToolCallResult> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallResult(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// The assistant text of the stream (all `TEXT_MESSAGE_CONTENT` deltas).
pub fn text(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TextMessageContent(c) => Some(c.delta.as_str()),
            _ => None,
        })
        .collect()
}

pub fn contains_run_finished(events: &[Event]) -> bool {
    events.iter().any(|e| matches!(e, Event::RunFinished(_)))
}

// ---------------------------------------------------------------------------
// Inputs.
// ---------------------------------------------------------------------------

pub fn user_input(thread: &str, run: &str, text: &str) -> RunAgentInput {
    RunAgentInput::new(thread, run, vec![Message::user(format!("u-{run}"), text)])
}

pub fn resume_input(thread: &str, run: &str, entries: Vec<ResumeEntry>) -> RunAgentInput {
    RunAgentInput::new(thread, run, Vec::new()).with_resume(entries)
}

pub fn approve(interrupt: &Interrupt) -> ResumeEntry {
    ResumeEntry::resolved(interrupt.id.clone(), json!({ "approved": true }))
}

pub fn deny(interrupt: &Interrupt) -> ResumeEntry {
    ResumeEntry::resolved(interrupt.id.clone(), json!({ "approved": false }))
}

pub fn cancel(interrupt: &Interrupt) -> ResumeEntry {
    ResumeEntry::cancelled(interrupt.id.clone())
}

// ---------------------------------------------------------------------------
// Agents.
// ---------------------------------------------------------------------------

/// What a resumed run of [`RefundAgent`] saw, per decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub interrupt_id: String,
    pub approved: bool,
    pub denied: bool,
    pub cancelled: bool,
    pub edited_args: Option<Value>,
}

/// Observations shared between a test and its agents.
#[derive(Default)]
pub struct Probe {
    /// How many times a side effect's closure ran.
    pub effect_calls: AtomicUsize,
    /// The idempotency keys handed to the closures, in order.
    pub keys: Mutex<Vec<String>>,
    /// `ctx.state()` at the start of each run.
    pub states: Mutex<Vec<Value>>,
    /// Decisions seen by resumed runs.
    pub seen: Mutex<Vec<Seen>>,
    /// Runs started (agent entered).
    pub runs: AtomicUsize,
    /// Monotonic counter for minted side-effect results.
    pub minted: AtomicU64,
    /// When set, the next resumed run fails (after its effects) and clears it.
    pub fail_next_resume: AtomicBool,
}

impl Probe {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }
    pub fn calls(&self) -> usize {
        self.effect_calls.load(Ordering::SeqCst)
    }
    pub fn keys(&self) -> Vec<String> {
        lock(&self.keys).clone()
    }
    pub fn seen(&self) -> Vec<Seen> {
        lock(&self.seen).clone()
    }
    pub fn states(&self) -> Vec<Value> {
        lock(&self.states).clone()
    }
}

/// The schema every [`RefundAgent`] interrupt asks its answer to satisfy.
pub fn approval_schema() -> Value {
    json!({
        "type": "object",
        "required": ["approved"],
        "properties": {
            "approved": { "type": "boolean" },
            "editedArgs": { "type": "object" }
        }
    })
}

/// The approval flow: a new run streams text, patches state, calls `refund`
/// `interrupts` times and stops with one `tool_call` interrupt per call. A
/// resumed run executes each approved refund as an exactly-once effect (with
/// `editedArgs` replacing the amount), reports denials and cancellations, and
/// finishes with success.
pub struct RefundAgent {
    pub probe: Arc<Probe>,
    pub interrupts: usize,
    /// Interrupts expire this long after they are raised.
    pub expires_in_ms: Option<u64>,
    /// Interrupts need the role `approver`, and not the thread's owner, to be resolved.
    pub four_eyes: bool,
}

impl RefundAgent {
    pub fn new(probe: Arc<Probe>) -> Self {
        RefundAgent {
            probe,
            interrupts: 1,
            expires_in_ms: None,
            four_eyes: false,
        }
    }
    pub fn four_eyes(mut self) -> Self {
        self.four_eyes = true;
        self
    }
    pub fn with_interrupts(mut self, n: usize) -> Self {
        self.interrupts = n;
        self
    }
    pub fn expiring_in(mut self, millis: u64) -> Self {
        self.expires_in_ms = Some(millis);
        self
    }
}

#[async_trait]
impl Agent for RefundAgent {
    fn name(&self) -> &str {
        "refunds"
    }

    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        self.probe.runs.fetch_add(1, Ordering::SeqCst);
        lock(&self.probe.states).push(ctx.state().clone());
        if !ctx.is_resume() {
            let msg = ctx.text_start();
            ctx.text_delta(&msg, "Let me ");
            ctx.text_delta(&msg, "check that ");
            ctx.text_delta(&msg, "refund.");
            ctx.text_end(&msg);
            ctx.patch_state(vec![PatchOp::add("/stage", json!("awaiting_approval"))])?;
            let mut raised = Vec::new();
            for i in 0..self.interrupts {
                let amount = 40 + i as u64;
                let call = ctx.tool_call("refund", &json!({ "amount": amount }));
                let mut metadata = serde_json::Map::new();
                metadata.insert("amount".to_owned(), json!(amount));
                let mut interrupt = Interrupt::new(format!("int-{call}"), "tool_call")
                    .with_tool_call(call)
                    .with_message(format!("Refund {amount} EUR?"))
                    .with_response_schema(approval_schema())
                    .with_metadata(metadata);
                if let Some(ttl) = self.expires_in_ms {
                    interrupt = interrupt.with_expires_at(format_ms(ctx.now_ms() + ttl));
                }
                raised.push(if self.four_eyes {
                    let policy = ApprovalPolicy::new()
                        .role("approver")
                        .not_requester()
                        .editable("amount");
                    interrupt.with_approval(&policy)
                } else {
                    interrupt.into()
                });
            }
            return Ok(Finish::Interrupt(raised));
        }

        for decision in ctx.decisions().to_vec() {
            lock(&self.probe.seen).push(Seen {
                interrupt_id: decision.id().to_string(),
                approved: decision.approved(),
                denied: decision.denied(),
                cancelled: decision.is_cancelled(),
                edited_args: decision.edited_args().cloned(),
            });
            let call = decision
                .tool_call_id()
                .cloned()
                .ok_or("decision without a tool call")?;
            if decision.is_cancelled() {
                ctx.tool_result(&call, "cancelled");
            } else if decision.approved() {
                let original = decision
                    .interrupt
                    .metadata
                    .as_ref()
                    .and_then(|m| m.get("amount"))
                    .cloned();
                let amount = decision
                    .edited_args()
                    .and_then(|a| a.get("amount").cloned())
                    .or(original)
                    .unwrap_or(Value::Null);
                let probe = self.probe.clone();
                let receipt: Value = ctx
                    .effect(&format!("refund-{call}"), move |key| async move {
                        probe.effect_calls.fetch_add(1, Ordering::SeqCst);
                        lock(&probe.keys).push(key);
                        let n = probe.minted.fetch_add(1, Ordering::SeqCst) + 1;
                        Ok::<_, String>(json!({ "refundId": format!("rf-{n}"), "amount": amount }))
                    })
                    .await?;
                ctx.tool_result(&call, receipt.to_string());
            } else {
                ctx.tool_result(&call, "denied");
            }
        }
        if self.probe.fail_next_resume.swap(false, Ordering::SeqCst) {
            return Err(AgentError::new(
                "downstream ledger exploded: password=hunter2",
            ));
        }
        ctx.patch_state(vec![PatchOp::replace("/stage", json!("done"))])?;
        ctx.say("Done.");
        Ok(Finish::done())
    }
}

/// The body of a [`Scripted`] agent.
pub type Script = fn(&mut RunContext) -> Result<Finish, AgentError>;

/// An agent from a plain function (no awaits).
pub struct Scripted(pub Script);

#[async_trait]
impl Agent for Scripted {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        (self.0)(ctx)
    }
}

/// Says one sentence, streamed in several deltas, and succeeds.
pub struct Chatty;

#[async_trait]
impl Agent for Chatty {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        let last = ctx.last_user_text().unwrap_or_default();
        let msg = ctx.text_start();
        for part in ["You ", "said: ", last.as_str()] {
            ctx.text_delta(&msg, part);
        }
        ctx.text_end(&msg);
        Ok(Finish::done_with(json!({ "echo": last })))
    }
}

/// Emits a `CUSTOM "blocked"` marker, waits for its gate, then says "released".
/// Before the marker it optionally opens a text message and a tool call it never
/// closes itself.
pub struct Blocking {
    pub gate: Gate,
    pub leave_open: bool,
    pub probe: Arc<Probe>,
}

impl Blocking {
    pub fn new(gate: Gate) -> Self {
        Blocking {
            gate,
            leave_open: false,
            probe: Probe::new(),
        }
    }
}

#[async_trait]
impl Agent for Blocking {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        self.probe.runs.fetch_add(1, Ordering::SeqCst);
        if self.leave_open {
            let msg = ctx.text_start();
            ctx.text_delta(&msg, "Working on it");
            let call = ctx.tool_call_start("lookup", Some(&msg));
            ctx.tool_call_args(&call, "{\"q\":");
        }
        ctx.custom("test:blocked", Value::Null);
        self.gate.wait().await;
        if !self.leave_open {
            ctx.say("released");
        }
        Ok(Finish::done())
    }
}

/// Everything the stream reached before the first `Pending`; asserts the agent
/// got to its `CUSTOM "test:blocked"` marker.
pub fn until_blocked(stream: &mut RunStream) -> Vec<Event> {
    let (events, ended) = drain_ready(stream);
    assert!(
        !ended,
        "the run ended instead of blocking\n{}",
        dump(&events)
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Custom(c) if c.name == "test:blocked")),
        "the agent did not reach its gate\n{}",
        dump(&events)
    );
    events
}

/// Boxes a future for a `'static` spawn.
pub type Task<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// The refund approval of the one-refund agents: a first run asks (the interrupt is the
/// finish), a denied answer is acknowledged (the finish); an approval gives the call to
/// refund.
pub fn ask_or_take_approval(
    ctx: &mut RunContext,
) -> Result<Result<agui_protocol::ToolCallId, Finish>, AgentError> {
    if !ctx.is_resume() {
        let call = ctx.tool_call("refund", &json!({ "amount": 40 }));
        let interrupt = Interrupt::new(format!("int-{call}"), "tool_call")
            .with_tool_call(call)
            .with_response_schema(approval_schema());
        return Ok(Err(Finish::interrupt(interrupt)));
    }
    let decision = ctx.decisions()[0].clone();
    let call = decision.tool_call_id().cloned().ok_or("no tool call")?;
    if !decision.approved() {
        ctx.tool_result(&call, "denied");
        return Ok(Err(Finish::done()));
    }
    Ok(Ok(call))
}

/// Asks for approval of a refund; the approved resume refunds through `ctx.effect`,
/// whose first downstream call waits for `hold` (a slow payment API).
pub struct SlowRefund {
    pub probe: Arc<Probe>,
    pub hold: Gate,
}

#[async_trait]
impl Agent for SlowRefund {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        let call = match ask_or_take_approval(ctx)? {
            Ok(call) => call,
            Err(finish) => return Ok(finish),
        };
        let (probe, hold) = (self.probe.clone(), self.hold.clone());
        let receipt: Value = ctx
            .effect(&format!("refund-{call}"), move |key| async move {
                let n = probe.effect_calls.fetch_add(1, Ordering::SeqCst) + 1;
                lock(&probe.keys).push(key);
                if n == 1 {
                    hold.wait().await;
                }
                Ok::<_, String>(json!({ "refundId": format!("rf-{n}") }))
            })
            .await?;
        ctx.tool_result(&call, receipt.to_string());
        Ok(Finish::done())
    }
}
