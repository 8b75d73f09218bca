//! Every wire code Handoff answers with, in one registry: HTTP error bodies
//! (`{"code","message"}`), `RUN_ERROR.code`, tool results and the A2A receiver's errors.
//!
//! Each [`Code`] carries the HTTP status it is answered with before a stream starts (codes
//! that only appear in a stream carry the status they would have). Crates take their
//! codes from here, so a code cannot be answered without being listed in [`ALL`]; the
//! README's table of codes is checked against [`ALL`] by a test.
//!
//! ```
//! use handoff_core::codes::{self, Code};
//!
//! assert_eq!(codes::THREAD_BUSY.status, 409);
//! assert_eq!(Code::named("ANSWER_IN_DOUBT"), Some(codes::ANSWER_IN_DOUBT));
//! ```

/// A stable machine code and the HTTP status it is answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Code {
    /// SCREAMING_SNAKE name, as sent.
    pub name: &'static str,
    /// HTTP status before the stream.
    pub status: u16,
}

impl Code {
    /// The registered code called `name`.
    pub fn named(name: &str) -> Option<Code> {
        ALL.iter().copied().find(|c| c.name == name)
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

macro_rules! registry {
    ($($(#[$doc:meta])* $name:ident = $status:literal;)*) => {
        $(
            $(#[$doc])*
            pub const $name: Code = Code { name: stringify!($name), status: $status };
        )*
        /// Every registered code.
        pub const ALL: &[Code] = &[$($name),*];
    };
}

registry! {
    /// Malformed JSON or input (the message names the field).
    INVALID_INPUT = 400;
    /// `Last-Event-ID` is not a frame id.
    INVALID_LAST_EVENT_ID = 400;
    /// A list cursor that this deployment did not issue for this list (forged, altered
    /// or another list's).
    INVALID_CURSOR = 400;
    /// A2A receiver: a push notification that is not a task update.
    INVALID_NOTIFICATION = 400;
    /// A2A receiver: a validation challenge it cannot answer.
    INVALID_CHALLENGE = 400;
    /// A2A receiver: an unusable push subscription.
    INVALID_SUBSCRIPTION = 400;
    /// No, or bad, credentials.
    UNAUTHENTICATED = 401;
    /// A2A receiver: a push without valid credentials.
    UNAUTHORIZED = 401;
    /// The caller may see the thread but not do this (a role, the requester).
    FORBIDDEN = 403;
    /// A cross-site request that changes state.
    ORIGIN_NOT_ALLOWED = 403;
    /// An unauthenticated endpoint asked under another host name (DNS rebinding).
    HOST_NOT_ALLOWED = 403;
    /// A2A receiver: a push about another task than the subscription's.
    TASK_MISMATCH = 403;
    /// No such thread, or one the caller may not see.
    THREAD_NOT_FOUND = 404;
    /// The thread has no such run.
    RUN_NOT_FOUND = 404;
    /// CopilotKit: no agent of that id.
    AGENT_NOT_FOUND = 404;
    /// CopilotKit single-route: no such method.
    METHOD_NOT_FOUND = 404;
    /// A resource that does not answer this HTTP method (`Allow` lists those it does).
    METHOD_NOT_ALLOWED = 405;
    /// Pending interrupts the input does not answer.
    RESUME_INCOMPLETE = 409;
    /// A resume entry names an interrupt that is not pending.
    INTERRUPT_NOT_PENDING = 409;
    /// An answer to an interrupt still waiting on something else.
    INTERRUPT_NOT_READY = 409;
    /// Only the answer whose action is in doubt may be sent.
    ANSWER_IN_DOUBT = 409;
    /// The request was built on a stale copy of the thread.
    THREAD_CHANGED = 409;
    /// A fork's `threadId` names a thread that exists.
    THREAD_EXISTS = 409;
    /// Another run holds the thread.
    THREAD_BUSY = 409;
    /// The runId was used before with a different body.
    RUN_ID_CONFLICT = 409;
    /// A run applying an answer was stopped on request (in tool results).
    RUN_STOPPED = 409;
    /// A followed run's instance went away (in-stream).
    RUN_ABANDONED = 409;
    /// A2A receiver: the subscription is bound to another task.
    SUBSCRIPTION_BOUND = 409;
    /// A body over the limit.
    BODY_TOO_LARGE = 413;
    /// A body that is not JSON.
    UNSUPPORTED_MEDIA_TYPE = 415;
    /// A resolved answer after the interrupt's `expiresAt`.
    INTERRUPT_EXPIRED = 422;
    /// An answer its schema, its approval policy or its agent refuses.
    RESUME_PAYLOAD_INVALID = 422;
    /// The principal started as many runs as `HANDOFF_RATE_LIMIT` allows (`Retry-After`,
    /// `RateLimit-Policy`, `RateLimit`); nothing was claimed.
    RATE_LIMITED = 429;
    /// The tenant's `HANDOFF_TOKEN_BUDGET` for the window is spent: a new run before the
    /// stream, a running one at its next model call (in-stream, with its usage).
    BUDGET_EXCEEDED = 429;
    /// An unexpected server failure (details logged).
    INTERNAL = 500;
    /// The agent failed (in-stream; details logged).
    AGENT_ERROR = 500;
    /// The agent panicked (in-stream).
    AGENT_PANICKED = 500;
    /// A state patch from the agent did not apply (in-stream).
    STATE_PATCH_FAILED = 500;
    /// Storage failed or holds an unreadable record.
    STORE_ERROR = 500;
    /// An interrupt asks for a `responseSchema` no validator here can check.
    SCHEMA_VALIDATION_UNAVAILABLE = 500;
    /// The agent raised an interrupt with an id its run answered (in-stream).
    INTERRUPT_ID_REUSED = 500;
    /// A deployed host without `HANDOFF_AUTH`.
    AUTH_NOT_CONFIGURED = 500;
    /// A model provider refused the request or sent a malformed stream (in-stream).
    MODEL_ERROR = 502;
    /// A model provider answered 429 (in-stream).
    MODEL_RATE_LIMITED = 503;
    /// A model provider was unavailable (in-stream).
    MODEL_UNAVAILABLE = 503;
    /// Storage unreachable or throttling; retry.
    STORE_UNAVAILABLE = 503;
    /// The run lost its lease (in-stream).
    LEASE_LOST = 503;
    /// A resumed run was stopped at its deadline (in-stream).
    DEADLINE_EXCEEDED = 503;
    /// Credentials cannot be checked right now; retry.
    AUTH_UNAVAILABLE = 503;
    /// A2A receiver: the sender's key set cannot be fetched; retry.
    KEYS_UNAVAILABLE = 503;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_screaming_snake_and_statuses_are_errors() {
        for (i, code) in ALL.iter().enumerate() {
            assert!(ALL[..i].iter().all(|c| c.name != code.name), "{code} twice");
            assert!(
                code.name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_'),
                "{code}"
            );
            assert!((400..600).contains(&code.status), "{code}");
            assert_eq!(Code::named(code.name), Some(*code));
        }
    }
}
