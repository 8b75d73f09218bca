//! Every wire code Handoff answers with, in one registry: HTTP error bodies
//! (`{"code","message"}`), `RUN_ERROR.code`, tool results and the A2A receiver's errors.
//!
//! Each [`Code`] carries the HTTP status it is answered with before a stream starts (codes
//! that only appear in a stream carry the status they would have). Crates take their
//! codes from here, so a code cannot be answered without being listed in [`ALL`]; the
//! table below is checked against [`ALL`], both ways, by a test
//! (`tests/tests/codes_documented.rs`).
//!
//! ```
//! use handoff_core::codes::{self, Code};
//!
//! assert_eq!(codes::THREAD_BUSY.status, 409);
//! assert_eq!(Code::named("ANSWER_IN_DOUBT"), Some(codes::ANSWER_IN_DOUBT));
//! ```
//!
//! Bad input gets an HTTP 4xx with `{"code","message"}` before the stream starts, and an
//! in-stream `RUN_ERROR` with a stable `code` after.
//!
//! # Every code
//!
//! | code | HTTP (before the stream) | meaning |
//! |---|---|---|
//! | `INVALID_INPUT` | 400 | malformed JSON or `RunAgentInput` (the message names the JSON path) |
//! | `BODY_TOO_LARGE` | 413 | body over `HANDOFF_BODY_LIMIT`; the rest of the body is read and discarded first (bodies up to twice the limit, and at least 8 MiB; within 5 s, or until a 1 s pause), so the client reads the 413 instead of a reset connection. Every other answer given before its body was read (a 401, a 404, a host route's own) gets the same care from one layer around the whole router |
//! | `UNSUPPORTED_MEDIA_TYPE` | 415 | body is not `application/json` |
//! | `UNAUTHENTICATED` | 401 + `WWW-Authenticate` | no, or bad, credentials (`HANDOFF_AUTH`); every route but `/healthz` and the A2A receiver, the demo's `GET /demo/orders/{id}` included |
//! | `AUTH_UNAVAILABLE` | 503 + `Retry-After` | credentials cannot be checked right now (an identity provider's key set is unreachable) |
//! | `AUTH_NOT_CONFIGURED` | 500 | a deployed host (Lambda, Workers) without `HANDOFF_AUTH`: it refuses to serve rather than serve unauthenticated |
//! | `FORBIDDEN` | 403 | the caller may see the thread but not do this: an approval policy's role, the requester approving their own request, a run on someone else's thread |
//! | `ORIGIN_NOT_ALLOWED` | 403 | a POST, PUT, PATCH or DELETE from a browser page of another origin (its `Origin` neither this endpoint's nor in `HANDOFF_CORS_ORIGINS`, or `Sec-Fetch-Site: cross-site`); nothing is read or written |
//! | `HOST_NOT_ALLOWED` | 403 | with `HANDOFF_AUTH=none`, a `Host` other than `localhost`, `127.0.0.1`, `[::1]` or a name in `HANDOFF_ALLOWED_HOSTS` (DNS rebinding), or no name at all once that lists names |
//! | `THREAD_NOT_FOUND` | 404 | no such thread, or one the caller may not see (the two are indistinguishable, whatever else the request says) |
//! | `AGENT_NOT_FOUND` | 404 | CopilotKit, `POST /schedules`: no agent of that `agentId` |
//! | `METHOD_NOT_FOUND` | 404 | CopilotKit single-route transport: no such `method` |
//! | `METHOD_NOT_ALLOWED` | 405 + `Allow` | CopilotKit thread resources: a method the resource does not answer |
//! | `RESUME_INCOMPLETE` | 409 | the thread has pending interrupts the input does not answer (including no `resume` at all) |
//! | `INTERRUPT_NOT_PENDING` | 409 | a resume entry names an interrupt that is not pending on the thread |
//! | `INTERRUPT_NOT_READY` | 409 | a `resolved` answer to an interrupt still waiting on something else (`Agent::readiness`, e.g. an `a2a:task` whose remote task is not done); nothing changes, answer again later (a `cancelled` one is accepted) |
//! | `ANSWER_IN_DOUBT` | 409 | an earlier answer to this interrupt started an action whose outcome is unknown; only that same answer is accepted (it re-drives the action under its idempotency key) |
//! | `THREAD_CHANGED` | 409 | the request's history lacks messages the thread got from a later run (a stale tab), or it retries a run the thread has moved past; nothing is written: rehydrate with `GET /threads/{id}` |
//! | `THREAD_BUSY` | 409 + `Retry-After` | another run holds the thread |
//! | `THREAD_EXISTS` | 409 | `POST /threads/{id}/fork` with a `threadId` that names an existing thread |
//! | `RUN_ID_CONFLICT` | 409 | the `runId` was used before with a different body (except a resume under the id of the run whose pending interrupts it answers, as CopilotKit sends: a new run under that id; its byte-identical retry replays) |
//! | `RUN_NOT_FOUND` | 404 | the thread has no such run (or its record expired): status, replay and stop |
//! | `INVALID_LAST_EVENT_ID` | 400 | `Last-Event-ID` is not a frame id (a non-negative integer) |
//! | `INVALID_SCHEDULE` | 400 | `POST /schedules`: a body that is not a schedule (not exactly one of `cron` and `everySeconds`, a cron pattern that is not 5 fields or never matches, `everySeconds` out of 1 to a year, no `agentId`, messages that are not 1 to 50 AG-UI messages, a `thread` that is neither `"new"` nor a thread id); the message names the field |
//! | `SCHEDULE_NOT_FOUND` | 404 | `DELETE /schedules/{id}`: no such schedule, or one the caller may not manage (the two are indistinguishable) |
//! | `SCHEDULE_LIMIT` | 409 | `POST /schedules`: the tenant keeps as many schedules as allowed (100); delete one first |
//! | `INVALID_CURSOR` | 400 | A list cursor (`GET /threads`, `GET /threads/{id}/messages`) this deployment did not issue for that list: forged, altered, or another list's |
//! | `REQUEST_STATE_INVALID` | 400 | MCP `tools/call` retry: a `requestState` this deployment did not seal for this caller and this call (forged, altered, another principal's, another tool's or arguments'), or expired; nothing was run |
//! | `RUN_ABANDONED` | (in-stream `RUN_ERROR`, to a reconnected client; the `error` of a run's status) | the followed run stopped without finishing: its instance went away and its lease lapsed; rehydrate with `GET /threads/{id}` |
//! | `INTERRUPT_EXPIRED` | 422 | a `resolved` answer after `expiresAt` (a `cancelled` one is accepted) |
//! | `RESUME_PAYLOAD_INVALID` | 422 | the answer is refused before the run, and the message says by what: the interrupt's `responseSchema`, its approval policy's edit rules (naming the argument), or the agent (e.g. the demo's refund beyond what is left to refund) |
//! | `RATE_LIMITED` | 429 | the caller started as many runs as `HANDOFF_RATE_LIMIT` allows: `Retry-After` (seconds), `RateLimit-Policy: "runs";q=COUNT;w=SECONDS`, `RateLimit: "runs";r=REMAINING;t=SECONDS`; nothing was claimed (an answer stays pending: send it again) |
//! | `BUDGET_EXCEEDED` | 429 | the tenant's `HANDOFF_TOKEN_BUDGET` for this window is spent: a new run before the stream (`Retry-After`: when the next window starts), a run in progress in-stream at its next model call, with the usage it incurred |
//! | `STORE_UNAVAILABLE` | 503 + `Retry-After` | storage unreachable or throttling; retry |
//! | `AGENT_ERROR`, `AGENT_PANICKED`, `LEASE_LOST`, `STORE_ERROR`, `STATE_PATCH_FAILED` | (in-stream `RUN_ERROR`) | the run failed after it started (a state patch that did not apply, for the last); messages are redacted |
//! | `INTERNAL` | 500 | an unexpected failure answering a request (details logged) |
//! | `SCHEMA_VALIDATION_UNAVAILABLE` | 500 | an interrupt asks for a `responseSchema` and this endpoint has no validator to check answers: refused rather than unchecked |
//! | `DEADLINE_EXCEEDED` | (in-stream `RUN_ERROR`) | a resumed run was stopped at its deadline before it finished; its answer was not applied (send it again) unless an action already executed |
//! | `RUN_STOPPED` | (in tool results) | a run applying an answer was stopped on request; it ends `cancelled` and, like a deadline, keeps the answer pending (pinned if an action may have run) unless an action already executed, which its tool result lists |
//! | `MODEL_RATE_LIMITED`, `MODEL_UNAVAILABLE`, `MODEL_ERROR` | (in-stream `RUN_ERROR`) | a model provider answered 429 / was unavailable (5xx, overloaded) / refused the request or sent a malformed stream; the provider's own text is logged, never sent (`handoff_llm::ModelError`, or any agent's `RunContext::fail_with`) |
//! | `INTERRUPT_ID_REUSED` | (in-stream `RUN_ERROR`) | the agent raised an interrupt with the id of one its run answered (ids must be fresh) |
//! | `REJECTED` | (in-stream `RUN_ERROR`) | the agent refused the request on purpose (`RunContext::fail_with`); over A2A the task ends `TASK_STATE_REJECTED` rather than `TASK_STATE_FAILED` |
//! | `APPROVAL_POLICY_MISSING` | (in-stream `RUN_ERROR`) | the agent raised an interrupt that claims an approval (`handoff.approval` or the older role keys in its metadata) without a typed policy; nothing answerable was stored (raise approvals with `WithApproval::with_approval`) |
//! | `UNAUTHORIZED` | 401 | A2A receiver: a push without valid credentials (token, JWT); every failure reads the same |
//! | `TASK_MISMATCH` | 403 | A2A receiver: a push about another task than its subscription's |
//! | `INVALID_NOTIFICATION`, `INVALID_CHALLENGE`, `INVALID_SUBSCRIPTION` | 400 | A2A receiver: a push that is not a task update, a validation challenge it cannot answer, an unusable subscription |
//! | `SUBSCRIPTION_BOUND` | 409 | A2A receiver: the subscription is bound to another task |
//! | `KEYS_UNAVAILABLE` | 503 + `Retry-After` | A2A receiver: the sender's key set cannot be fetched; retry |
//!
//! Unknown interrupt ids are rejected (**strict**), not skipped with a warning as the spec allows
//! a stateless producer: Handoff keeps interrupt state, so an unknown id is a client bug worth
//! surfacing, and a genuine retry of an applied answer is replayed before this check runs.

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

/// Serialized as its name, as every body and event sends it.
impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name)
    }
}

/// An error answered with a registered [`Code`]: each error type says which code it is,
/// once, and everything else about how it is answered follows from that code.
///
/// ```
/// use handoff_core::codes::{self, Code, ErrorCode};
///
/// struct Busy;
/// impl ErrorCode for Busy {
///     fn code(&self) -> Code {
///         codes::THREAD_BUSY
///     }
/// }
/// assert_eq!((Busy.code().name, Busy.http_status()), ("THREAD_BUSY", 409));
/// ```
pub trait ErrorCode {
    /// The registered code (name and status) this error is answered with.
    fn code(&self) -> Code;

    /// The HTTP status when answered before a stream starts: the code's.
    fn http_status(&self) -> u16 {
        self.code().status
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
    /// An MCP `requestState` not sealed for this caller and call, or expired.
    REQUEST_STATE_INVALID = 400;
    /// A schedule's definition that is not one (the message names the field).
    INVALID_SCHEDULE = 400;
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
    /// No such schedule, or one the caller may not manage.
    SCHEDULE_NOT_FOUND = 404;
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
    /// The tenant keeps as many schedules as allowed.
    SCHEDULE_LIMIT = 409;
    /// A body over the limit.
    BODY_TOO_LARGE = 413;
    /// A body that is not JSON.
    UNSUPPORTED_MEDIA_TYPE = 415;
    /// A resolved answer after the interrupt's `expiresAt`.
    INTERRUPT_EXPIRED = 422;
    /// An answer its schema, its approval policy or its agent refuses.
    RESUME_PAYLOAD_INVALID = 422;
    /// The agent refused the request on purpose (in-stream; A2A `TASK_STATE_REJECTED`).
    REJECTED = 422;
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
    /// The agent raised an approval without a typed policy (in-stream, fail closed).
    APPROVAL_POLICY_MISSING = 500;
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

    #[test]
    fn a_code_serializes_as_its_name() {
        let body = serde_json::json!({ "code": THREAD_BUSY });
        assert_eq!(body.to_string(), r#"{"code":"THREAD_BUSY"}"#);
    }
}
