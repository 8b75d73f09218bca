//! The trait a user implements, and how a run ends.

use std::str::FromStr;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::approval::{ApprovalChecks, ApprovalPolicy, RaisedInterrupt};
use crate::context::RunContext;
use crate::decision::Decision;
use crate::error::{AgentError, CoreError};
use crate::schema::SchemaValidator;

/// User code that turns a run context into events.
///
/// ```
/// use handoff_core::{Agent, AgentError, Finish, RunContext};
///
/// struct Echo;
///
/// #[async_trait::async_trait]
/// impl Agent for Echo {
///     async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
///         let last = ctx.last_user_text().unwrap_or_default();
///         ctx.say(&format!("You said: {last}"));
///         Ok(Finish::done())
///     }
/// }
/// ```
#[async_trait]
pub trait Agent: Send + Sync + 'static {
    /// A short name, used by A2UI `progress` / `agent_switch` frames and logs.
    fn name(&self) -> &str {
        "agent"
    }

    /// What the agent does, in a sentence: its A2A agent card and skill say it to other
    /// agents. Empty (the default) lets the host say something generic.
    fn description(&self) -> &str {
        ""
    }

    /// The agent's own version (not Handoff's), as its A2A agent card shows it.
    fn version(&self) -> &str {
        "1.0.0"
    }

    /// Runs once per AG-UI run. Resumed runs see [`RunContext::decisions`].
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError>;

    /// Whether a `resolved` answer to a pending interrupt may be applied now.
    ///
    /// The engine asks for every `resolved` entry of a resume after the resume
    /// contract holds and before it claims the thread, so a
    /// [`Readiness::NotReady`] answer rejects the request with
    /// `INTERRUPT_NOT_READY` (409) and nothing is written. `cancelled` entries
    /// are never asked: abandoning a question is always allowed. Use it for
    /// interrupts that wait on the outside world (a delegated task); an error
    /// rejects the request with its own code (e.g. a store error → 503).
    async fn readiness(
        &self,
        _thread_id: &str,
        _decision: &Decision,
    ) -> Result<Readiness, CoreError> {
        Ok(Readiness::Ready)
    }

    /// Checks answers to this agent's interrupts against their `responseSchema`, in place
    /// of the host's validator: an agent that knows the types of its answers can check them
    /// with [`crate::schema::TypedAnswers`] and leave the `jsonschema` crate out of its
    /// build. Asked when an engine is built; `None` (the default) leaves it to the
    /// host. A validator the host is given explicitly still wins.
    fn answer_validator(&self) -> Option<Arc<dyn SchemaValidator>> {
        None
    }

    /// The named checks this agent's approval policies refer to
    /// ([`crate::ApprovalPolicy::check`]). Asked when an engine is built.
    fn approval_checks(&self) -> ApprovalChecks {
        ApprovalChecks::new()
    }

    /// The approval policy this agent would raise for a call of `tool` with `args`, when it
    /// chooses policies from a call's arguments. The engine asks again for an answer's
    /// `editedArgs`, and the answer must satisfy both the stored policy and this one (an
    /// edit cannot cross into a more lenient policy). `None` (the default): the stored
    /// policy alone applies.
    fn approval_policy_for(&self, _tool: &str, _args: &Value) -> Option<ApprovalPolicy> {
        None
    }

    /// What a message sent while one of this agent's runs is running does; `None` (the
    /// default) leaves it to the host (`HANDOFF_DOUBLE_TEXT`, default reject).
    fn double_text(&self) -> Option<DoubleText> {
        None
    }
}

/// The answer to [`Agent::readiness`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// The answer may be applied.
    Ready,
    /// Not yet; the text (safe to show a client) says what the interrupt still waits for.
    NotReady(String),
}

/// How the agent wants its run to end.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Finish {
    /// Success, optionally with a result value.
    Success {
        /// `RUN_FINISHED.result`.
        result: Option<Value>,
    },
    /// Stop and ask; the run ends with the interrupt outcome once it is durable. An
    /// [`agui_protocol::Interrupt`] converts into a question; raise an approval with
    /// [`crate::WithApproval::with_approval`].
    Interrupt(Vec<RaisedInterrupt>),
    /// The agent gave up on purpose.
    Cancelled,
}

impl Finish {
    /// Success without a result.
    pub fn done() -> Self {
        Finish::Success { result: None }
    }
    /// Success with a result.
    pub fn done_with(result: Value) -> Self {
        Finish::Success {
            result: Some(result),
        }
    }
    /// One interrupt: a question ([`agui_protocol::Interrupt`]) or an approval ([`RaisedInterrupt`]).
    pub fn interrupt(interrupt: impl Into<RaisedInterrupt>) -> Self {
        Finish::Interrupt(vec![interrupt.into()])
    }
}

/// What a message sent while a run is running does (`HANDOFF_DOUBLE_TEXT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DoubleText {
    /// 409 `THREAD_BUSY`.
    #[default]
    Reject,
    /// Stop the running run, then run.
    Interrupt,
    /// Run once the running run has finished.
    Enqueue,
}

impl FromStr for DoubleText {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim() {
            "reject" => Ok(DoubleText::Reject),
            "interrupt" => Ok(DoubleText::Interrupt),
            "enqueue" => Ok(DoubleText::Enqueue),
            other => Err(format!("`{other}`: expected reject, interrupt or enqueue")),
        }
    }
}
