//! What an agent sees and does during a run.

mod audit;
pub(crate) use audit::audit_head_read;
mod effect;
mod emit;
pub(crate) mod fence;
mod journal;
pub(crate) mod log;
pub(crate) mod messages;
pub(crate) mod state;
pub(crate) mod tracker;
mod usage;

pub use effect::{EffectFailure, NotExecuted};
pub use journal::StepMark;

use std::sync::Arc;

use agui_protocol::{Event, Message, RunAgentInput, RunId, ThreadId, ToolCall, ToolCallId};
use serde_json::Value;

use crate::decision::Decision;
use crate::error::CoreError;
use crate::principal::Principal;
use crate::runtime::Runtime;
use crate::schema::{SchemaFailure, SchemaValidator};
use crate::store::Store;
use fence::{EffectLedger, Fence};
use log::LogWriter;
pub(crate) use log::SharedLog;
use messages::MessageLog;
use tracker::OpenItems;

/// Everything the engine hands an agent for one run.
///
/// Emitting is synchronous (events are queued to the client in order); storage
/// work ([`RunContext::effect`]) is async. Time and ids come from the injected
/// [`Runtime`].
pub struct RunContext {
    input: RunAgentInput,
    partition: String,
    principal: Principal,
    runtime: Runtime,
    store: Arc<dyn Store>,
    fence: Arc<Fence>,
    effects: EffectLedger,
    effect_ttl_ms: u64,
    state: Value,
    messages: MessageLog,
    decisions: Vec<Decision>,
    validator: Option<Arc<dyn SchemaValidator>>,
    deadline_ms: Option<u64>,
    open: OpenItems,
    /// Closes the log (ending the run's stream) when the context goes.
    log: LogWriter,
    fatal: Option<CoreError>,
    usage: Vec<agui_protocol::TokenUsage>,
    /// The tenant's token budget, and the tokens recorded since it was last told.
    budget: Option<crate::limits::Quota>,
    unsettled_tokens: u64,
    audit: audit::AuditCursor,
    journal: journal::JournalCursor,
}

impl std::fmt::Debug for RunContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunContext")
            .field("thread_id", &self.input.thread_id)
            .field("run_id", &self.input.run_id)
            .finish_non_exhaustive()
    }
}

/// Construction parameters (engine-internal).
pub(crate) struct ContextParts {
    pub(crate) input: RunAgentInput,
    pub(crate) partition: String,
    pub(crate) principal: Principal,
    pub(crate) runtime: Runtime,
    pub(crate) store: Arc<dyn Store>,
    pub(crate) fence: Arc<Fence>,
    pub(crate) effect_ttl_ms: u64,
    pub(crate) state: Value,
    pub(crate) messages: Vec<Message>,
    pub(crate) decisions: Vec<Decision>,
    /// Where the run's events go (the engine reads them from it as they come).
    pub(crate) log: SharedLog,
    pub(crate) validator: Option<Arc<dyn SchemaValidator>>,
    pub(crate) deadline_ms: Option<u64>,
    pub(crate) budget: Option<crate::limits::Quota>,
    /// The run re-executes after its instance stopped: its journaled steps replay.
    pub(crate) redrive: bool,
}

impl RunContext {
    pub(crate) fn new(parts: ContextParts) -> Self {
        RunContext {
            input: parts.input,
            partition: parts.partition,
            principal: parts.principal,
            runtime: parts.runtime,
            store: parts.store,
            fence: parts.fence,
            effects: EffectLedger::default(),
            effect_ttl_ms: parts.effect_ttl_ms,
            state: parts.state,
            messages: MessageLog::new(parts.messages, 0),
            decisions: parts.decisions,
            validator: parts.validator,
            deadline_ms: parts.deadline_ms,
            open: OpenItems::default(),
            log: LogWriter(parts.log),
            fatal: None,
            usage: Vec::new(),
            budget: parts.budget,
            unsettled_tokens: 0,
            audit: audit::AuditCursor::default(),
            journal: journal::JournalCursor::new(parts.redrive),
        }
    }

    /// The input as posted.
    pub fn input(&self) -> &RunAgentInput {
        &self.input
    }
    /// The thread.
    pub fn thread_id(&self) -> &ThreadId {
        &self.input.thread_id
    }
    /// The thread's store partition: its id scoped by the caller's tenant. Agents that
    /// keep records of their own next to the thread's (a ledger, A2A subscriptions) use it.
    pub fn partition(&self) -> &str {
        &self.partition
    }
    /// Who started this run (or sent the answers it applies).
    pub fn principal(&self) -> &Principal {
        &self.principal
    }
    /// This run.
    pub fn run_id(&self) -> &RunId {
        &self.input.run_id
    }
    /// The authoritative shared state (as left by the previous run, or the client's for a new run).
    pub fn state(&self) -> &Value {
        &self.state
    }
    /// Takes the state out, leaving `null`: a finishing run moves it into the thread head
    /// instead of copying it (nothing reads it afterwards).
    pub(crate) fn take_state(&mut self) -> Value {
        std::mem::take(&mut self.state)
    }
    /// The history, including what this run has emitted so far.
    pub fn messages(&self) -> &[Message] {
        self.messages.messages()
    }
    /// The tool call `id` of the history (its newest occurrence): the call an interrupt is
    /// about, with the arguments it proposed.
    pub fn find_tool_call(&self, id: &ToolCallId) -> Option<&ToolCall> {
        self.messages().iter().rev().find_map(|m| match m {
            Message::Assistant(a) => a.tool_calls.iter().flatten().find(|c| c.id == *id),
            _ => None,
        })
    }
    /// The text of the latest user message.
    pub fn last_user_text(&self) -> Option<String> {
        self.messages()
            .iter()
            .rev()
            .find(|m| matches!(m, Message::User(_)))
            .and_then(Message::text)
    }
    /// Whether this run answers interrupts.
    pub fn is_resume(&self) -> bool {
        !self.decisions.is_empty()
    }
    /// The answers to the interrupts this thread raised, in the order they were raised.
    pub fn decisions(&self) -> &[Decision] {
        &self.decisions
    }
    /// The answer to one interrupt.
    pub fn decision(&self, interrupt_id: &str) -> Option<&Decision> {
        self.decisions
            .iter()
            .find(|d| d.interrupt.id.as_str() == interrupt_id)
    }
    /// The answer to the interrupt bound to a tool call.
    pub fn decision_for_tool_call(&self, tool_call_id: &str) -> Option<&Decision> {
        self.decisions
            .iter()
            .find(|d| d.tool_call_id().is_some_and(|t| t.as_str() == tool_call_id))
    }
    /// Now, from the injected clock (Unix ms).
    pub fn now_ms(&self) -> u64 {
        self.runtime.now_ms()
    }
    /// A fresh id from the injected generator.
    pub fn new_id(&self, prefix: &str) -> String {
        self.runtime.ids.next_id(prefix)
    }
    /// The injected runtime (clock, ids, sleep).
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Emits any event. Prefer the typed helpers; this is the escape hatch.
    /// Run lifecycle events are the engine's and are ignored here.
    pub fn emit(&mut self, event: impl Into<Event>) {
        let mut event = event.into();
        if matches!(
            event,
            Event::RunStarted(_) | Event::RunFinished(_) | Event::RunError(_)
        ) {
            tracing::warn!(event = %event.event_type(), "agents cannot emit run lifecycle events; ignored");
            return;
        }
        if event.base().timestamp.is_none() {
            event.base_mut().timestamp = Some(self.runtime.now_ms());
        }
        self.open.observe(&event);
        self.messages.apply(&event);
        self.log.0.push(event);
    }

    /// Emits an engine-owned event (lifecycle, snapshots) without agent filtering.
    pub(crate) fn emit_engine(&mut self, event: Event) {
        self.open.observe(&event);
        self.log.0.push(event);
    }

    pub(crate) fn close_open_items(&mut self) {
        for event in self.open.close_all() {
            let event = event.with_timestamp(self.runtime.now_ms());
            self.emit_engine(event);
        }
    }

    /// Everything this run emitted, in order.
    pub(crate) fn log(&self) -> std::sync::MutexGuard<'_, Vec<std::sync::Arc<Event>>> {
        self.log.0.lock()
    }

    /// The log, shared with the engine's live-journal writer.
    pub(crate) fn shared_log(&self) -> SharedLog {
        self.log.0.clone()
    }

    /// When the host will end this invocation (Unix ms), if it has a deadline (Lambda's,
    /// a Worker's budget); the engine stops the run a margin before it. Bound outbound
    /// calls by it (a model request's timeout, say).
    pub fn deadline_ms(&self) -> Option<u64> {
        self.deadline_ms
    }

    /// Checks `value` against the JSON Schema `schema` with the engine's validator (the
    /// one that checks interrupt answers), e.g. a model's tool arguments before they run.
    /// Without a validator it fails closed ([`SchemaFailure::Unusable`]).
    pub fn check_schema(&self, schema: &Value, value: &Value) -> Result<(), SchemaFailure> {
        match &self.validator {
            Some(validator) => validator.validate(schema, value),
            None => Err(SchemaFailure::Unusable(
                "no JSON Schema validator is configured".to_owned(),
            )),
        }
    }

    /// Fails the run with a stable `code` and a `message` safe to show the client (the
    /// run ends `RUN_ERROR{code, message}`); `detail` is logged only. Return the result
    /// from [`crate::Agent::run`]:
    ///
    /// ```
    /// # use handoff_core::{AgentError, Finish, RunContext};
    /// # fn f(ctx: &mut RunContext) -> Result<Finish, AgentError> {
    /// use handoff_core::codes;
    /// Err(ctx.fail_with(codes::MODEL_RATE_LIMITED, "the model is busy; retry shortly", true, "429 from the provider"))
    /// # }
    /// ```
    pub fn fail_with(
        &mut self,
        code: crate::codes::Code,
        message: impl Into<String>,
        retryable: bool,
        detail: impl std::fmt::Display,
    ) -> crate::AgentError {
        self.fatal.get_or_insert(CoreError::Reported {
            code,
            message: message.into(),
            retryable,
        });
        crate::AgentError(format!("{code}: {detail}"))
    }

    pub(crate) fn take_fatal(&mut self) -> Option<CoreError> {
        self.fatal.take()
    }

    /// What this run's `effect` calls got to.
    pub(crate) fn effects(&self) -> &EffectLedger {
        &self.effects
    }

    /// The lease fence shared with the heartbeat and the finish.
    pub(crate) fn fence(&self) -> &Arc<Fence> {
        &self.fence
    }

    /// Installs the history the engine read for this run: its first `stored` messages are
    /// the thread's, the rest what the run's input adds.
    pub(crate) fn set_history(&mut self, messages: Vec<Message>, stored: usize) {
        self.messages = MessageLog::new(messages, stored);
    }

    /// The messages of the history the thread does not store yet.
    pub(crate) fn added_messages(&self) -> Vec<&Message> {
        self.messages.added()
    }
}
