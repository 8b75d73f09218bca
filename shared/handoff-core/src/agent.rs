//! The trait a user implements, and how a run ends.

use agui_protocol::Interrupt;
use async_trait::async_trait;
use serde_json::Value;

use crate::context::RunContext;

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

    /// Runs once per AG-UI run. Resumed runs see [`RunContext::decisions`].
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError>;
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
    /// Stop and ask; the run ends with the interrupt outcome once it is durable.
    Interrupt(Vec<Interrupt>),
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
    /// One interrupt.
    pub fn interrupt(interrupt: Interrupt) -> Self {
        Finish::Interrupt(vec![interrupt])
    }
}

/// An agent failure. Its text is logged, never sent to the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AgentError(pub String);

impl AgentError {
    /// Wraps any displayable error.
    pub fn new(message: impl std::fmt::Display) -> Self {
        AgentError(message.to_string())
    }
}

impl From<String> for AgentError {
    fn from(s: String) -> Self {
        AgentError(s)
    }
}
impl From<&str> for AgentError {
    fn from(s: &str) -> Self {
        AgentError(s.to_owned())
    }
}
impl From<serde_json::Error> for AgentError {
    fn from(e: serde_json::Error) -> Self {
        AgentError(e.to_string())
    }
}
