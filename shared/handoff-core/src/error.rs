//! The one error type of the core and its single mapping to codes and statuses.

use agui_protocol::event::RunError;

use crate::codes::{self, Code, ErrorCode};
use crate::store::StoreError;

/// Everything that can stop a run or reject a request.
///
/// [`CoreError::code`] is the stable, documented machine code; it is the same
/// whether the error is answered before the stream (HTTP status from
/// [`CoreError::http_status`]) or inside it (`RUN_ERROR.code`). Messages never
/// carry agent internals.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CoreError {
    /// The request body is not a valid `RunAgentInput`.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The thread has pending interrupts and the input does not answer all of them.
    #[error("the thread has pending interrupts not answered by resume: {}", missing.join(", "))]
    ResumeIncomplete {
        /// Pending interrupt ids without an entry.
        missing: Vec<String>,
    },
    /// A resume entry names an interrupt that is not pending on this thread.
    #[error("interrupt {id} is not pending on this thread")]
    InterruptNotPending {
        /// The unknown id.
        id: String,
    },
    /// A `resolved` entry answers an interrupt that is still waiting on something
    /// else ([`crate::Agent::readiness`]). Not `retryable`: it depends on an outside
    /// event, so a client watches the thread instead of retrying on a timer.
    #[error("interrupt {id} cannot be answered yet: {reason}")]
    InterruptNotReady {
        /// The interrupt.
        id: String,
        /// What it waits for (from the agent, safe to show).
        reason: String,
    },
    /// A `resolved` entry answers an interrupt past its `expiresAt`.
    #[error("interrupt {id} expired at {expires_at}; it can only be cancelled")]
    InterruptExpired {
        /// The interrupt.
        id: String,
        /// Its expiry.
        expires_at: String,
    },
    /// A payload does not satisfy the interrupt's `responseSchema` or its approval policy's
    /// edit rules, or the agent refuses it before the run (the reason says which).
    #[error("the answer to interrupt {id} is refused: {reason}")]
    ResumePayloadInvalid {
        /// The interrupt.
        id: String,
        /// First validation error.
        reason: String,
    },
    /// An earlier answer to this interrupt started a side effect whose outcome is in
    /// doubt; only that same answer may be sent (it re-drives the effect under its key).
    #[error(
        "an earlier answer to interrupt {id} started an action whose outcome is unknown; resend that same answer"
    )]
    AnswerPinned {
        /// The interrupt.
        id: String,
    },
    /// The request was built on a stale copy of the thread: its history lacks messages
    /// the thread got from a later run, or it retries a run the thread has moved past.
    /// Nothing was written; the client rehydrates with `GET /threads/{id}`.
    #[error("the thread changed since this request's history was read: {0}")]
    ThreadChanged(String),
    /// No such thread, or one the caller may not see (the two are indistinguishable).
    #[error("no such thread")]
    ThreadNotFound,
    /// The thread has no such run (or its record expired).
    #[error("no such run (or it expired)")]
    RunNotFound,
    /// The caller may see the thread but not do this (an approval that needs a role,
    /// a requester approving their own request). Nothing was written.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// An interrupt asks for a `responseSchema` but this engine has no validator to
    /// enforce it (see `handoff_core::schema`): refused rather than unchecked.
    #[error(
        "this endpoint cannot check responseSchema answers (no JSON Schema validator configured)"
    )]
    SchemaValidationUnavailable,
    /// Another run holds the thread.
    #[error("thread is busy with run {run_id}")]
    ThreadBusy {
        /// The run holding the thread.
        run_id: String,
        /// Suggested wait.
        retry_after_ms: u64,
    },
    /// The runId was used before with a different body.
    #[error("runId {0} was already used with a different input")]
    RunIdConflict(String),
    /// A new thread's id (a fork's) names one that exists.
    #[error("thread {0} exists; fork into a new id")]
    ThreadExists(String),
    /// The principal started as many runs as its rate limit allows; nothing was claimed.
    #[error("too many runs: the limit is {quota}; retry later")]
    RateLimited {
        /// The limit.
        quota: crate::limits::Quota,
        /// Runs left now.
        remaining: u64,
        /// Until the next run is allowed.
        retry_after_ms: u64,
        /// Until the bucket is full again.
        reset_ms: u64,
    },
    /// The tenant's model-token budget for the current window is spent.
    #[error("the token budget of this window is spent")]
    BudgetExceeded {
        /// Until the next window starts.
        retry_after_ms: u64,
    },
    /// A list cursor this deployment did not issue for this list.
    #[error("the cursor is not one this list issued; start from the first page")]
    InvalidCursor,
    /// This run lost its lease (it overran); nothing it did after that was committed.
    #[error("the run lost its lease on the thread")]
    LeaseLost,
    /// The run was stopped at its deadline (the host's, or its lease's when it could not
    /// renew) while applying an answer; see the crate docs for what stays pending.
    #[error("the run was stopped at its deadline before it finished")]
    DeadlineExceeded,
    /// The run was stopped on request (`POST …/stop`) while applying an answer. Announced
    /// as `RUN_FINISHED{outcome: cancelled}`, never as `RUN_ERROR`; the code names the stop
    /// in the tool results of calls the run could not complete.
    #[error("the run was stopped on request")]
    Stopped,
    /// A followed run stopped without finishing: its instance went away and its lease
    /// lapsed (or another run took the thread). In-stream only, for reconnecting readers.
    #[error("the run stopped without finishing (its instance went away); rehydrate the thread")]
    RunAbandoned,
    /// The agent raised an interrupt with the id of one its run answered; that would
    /// replay the answer forever. Interrupt ids must be fresh.
    #[error("interrupt {0} was raised again by the run that answered it")]
    InterruptIdReused(String),
    /// The agent raised an interrupt that claims an approval (its metadata names a
    /// policy) without a typed policy: nothing answerable is stored (fail closed).
    #[error("interrupt {0} needs an approval but was raised without a policy")]
    ApprovalPolicyMissing(String),
    /// The agent (or a library it calls, like a model provider) failed for a reason it
    /// names with a stable code and a message safe to show (see `RunContext::fail`).
    #[error("{message}")]
    Reported {
        /// Its code, e.g. [`codes::MODEL_RATE_LIMITED`].
        code: Code,
        /// Safe to show a client.
        message: String,
        /// Whether the same request may succeed later.
        retryable: bool,
    },
    /// The agent returned an error. The detail is logged, not sent.
    #[error("the agent failed")]
    Agent(String),
    /// The agent panicked.
    #[error("the agent panicked")]
    AgentPanicked,
    /// A state patch from the agent did not apply.
    #[error("state patch failed: {0}")]
    StatePatch(String),
    /// Storage failed.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// A stored record could not be read back.
    #[error("corrupt record: {0}")]
    CorruptRecord(String),
}

impl ErrorCode for CoreError {
    fn code(&self) -> Code {
        match self {
            CoreError::InvalidInput(_) => codes::INVALID_INPUT,
            CoreError::ResumeIncomplete { .. } => codes::RESUME_INCOMPLETE,
            CoreError::InterruptNotPending { .. } => codes::INTERRUPT_NOT_PENDING,
            CoreError::InterruptNotReady { .. } => codes::INTERRUPT_NOT_READY,
            CoreError::InterruptExpired { .. } => codes::INTERRUPT_EXPIRED,
            CoreError::ResumePayloadInvalid { .. } => codes::RESUME_PAYLOAD_INVALID,
            CoreError::AnswerPinned { .. } => codes::ANSWER_IN_DOUBT,
            CoreError::ThreadChanged(_) => codes::THREAD_CHANGED,
            CoreError::ThreadNotFound => codes::THREAD_NOT_FOUND,
            CoreError::RunNotFound => codes::RUN_NOT_FOUND,
            CoreError::Forbidden(_) => codes::FORBIDDEN,
            CoreError::SchemaValidationUnavailable => codes::SCHEMA_VALIDATION_UNAVAILABLE,
            CoreError::ThreadBusy { .. } => codes::THREAD_BUSY,
            CoreError::RunIdConflict(_) => codes::RUN_ID_CONFLICT,
            CoreError::InvalidCursor => codes::INVALID_CURSOR,
            CoreError::RateLimited { .. } => codes::RATE_LIMITED,
            CoreError::BudgetExceeded { .. } => codes::BUDGET_EXCEEDED,
            CoreError::ThreadExists(_) => codes::THREAD_EXISTS,
            CoreError::LeaseLost => codes::LEASE_LOST,
            CoreError::DeadlineExceeded => codes::DEADLINE_EXCEEDED,
            CoreError::Stopped => codes::RUN_STOPPED,
            CoreError::RunAbandoned => codes::RUN_ABANDONED,
            CoreError::InterruptIdReused(_) => codes::INTERRUPT_ID_REUSED,
            CoreError::ApprovalPolicyMissing(_) => codes::APPROVAL_POLICY_MISSING,
            CoreError::Reported { code, .. } => *code,
            CoreError::Agent(_) => codes::AGENT_ERROR,
            CoreError::AgentPanicked => codes::AGENT_PANICKED,
            CoreError::StatePatch(_) => codes::STATE_PATCH_FAILED,
            CoreError::Store(StoreError::Unavailable(_)) => codes::STORE_UNAVAILABLE,
            CoreError::Store(_) | CoreError::CorruptRecord(_) => codes::STORE_ERROR,
        }
    }
}

impl CoreError {
    /// Whether the same request may succeed later.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            CoreError::ThreadBusy { .. }
                | CoreError::RateLimited { .. }
                | CoreError::BudgetExceeded { .. }
                | CoreError::LeaseLost
                | CoreError::DeadlineExceeded
                | CoreError::Store(StoreError::Unavailable(_))
                | CoreError::Reported {
                    retryable: true,
                    ..
                }
        )
    }

    /// The message safe to show a client (internals redacted).
    pub fn public_message(&self) -> String {
        match self {
            CoreError::Store(StoreError::Unavailable(_)) => {
                "storage is temporarily unavailable; retry".to_owned()
            }
            CoreError::Store(_) | CoreError::CorruptRecord(_) => "storage failure".to_owned(),
            other => other.to_string(),
        }
    }
}

impl From<&CoreError> for RunError {
    fn from(err: &CoreError) -> Self {
        let mut event = RunError::new(err.public_message());
        event.code = Some(err.code().name.to_owned());
        event
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
