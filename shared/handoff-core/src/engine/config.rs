//! The engine's tunables and the per-request facts a host passes with each run.

use crate::agent::DoubleText;
use crate::limits::Quota;
use crate::principal::Principal;
use crate::store::traced::StoreCalls;

/// Tunables. Defaults suit Lambda and Workers alike.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Lease length when the host gives no deadline (the longest a run may take).
    pub lease_ms: u64,
    /// How long before the host deadline the engine stops the agent and finishes
    /// cancelled; at most a fifth of the run's whole budget.
    pub deadline_margin_ms: u64,
    /// How long finished runs (and their resume records) stay replayable.
    pub run_ttl_ms: u64,
    /// How long an untouched thread is kept.
    pub thread_ttl_ms: u64,
    /// How long effect records (and so exactly-once) are kept.
    pub effect_ttl_ms: u64,
    /// How long a history page is kept after it is written (at least twice `thread_ttl_ms`).
    /// A finish renews every page (same bytes, fresh retention) only when the oldest would
    /// expire before the head it writes: with the defaults once per 335 days of activity,
    /// one read of the pages and a commit per 63 of them.
    pub history_ttl_ms: u64,
    /// `Retry-After` hint for busy answers.
    pub busy_retry_after_ms: u64,
    /// How often a running run looks for a stop request sent to another instance
    /// (one small read each time; 0: only requests to this instance stop it).
    pub stop_poll_ms: u64,
    /// How often a running run journals its new events for clients that reconnect on
    /// another instance, and how often such a client polls (0: no journal; a client then
    /// rejoins once the run has finished).
    pub live_flush_ms: u64,
    /// What a message sent while a run is running does, unless the agent says
    /// ([`crate::Agent::double_text`]).
    pub double_text: DoubleText,
    /// Runs a principal may start per window, across instances (see [`crate::limits`]).
    pub rate_limit: Option<Quota>,
    /// Model tokens a tenant may use per window, across instances (see [`crate::limits`]).
    pub token_budget: Option<Quota>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        const DAY: u64 = 24 * 60 * 60 * 1000;
        EngineConfig {
            lease_ms: 15 * 60 * 1000,
            deadline_margin_ms: 3_000,
            run_ttl_ms: 7 * DAY,
            thread_ttl_ms: 30 * DAY,
            effect_ttl_ms: 30 * DAY,
            history_ttl_ms: 365 * DAY,
            busy_retry_after_ms: 1_000,
            stop_poll_ms: 1_000,
            live_flush_ms: 250,
            double_text: DoubleText::Reject,
            rate_limit: None,
            token_budget: None,
        }
    }
}

/// Per-request facts from the host.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// When the host will kill this invocation (Unix ms), e.g. Lambda's deadline.
    pub deadline_ms: Option<u64>,
    /// Who asks: scopes the thread to the principal's tenant and is checked against the
    /// engine's [`crate::Authorizer`] before anything is revealed or written.
    pub principal: Principal,
    /// The agent the caller addressed (CopilotKit's `agentId`), recorded on the thread
    /// for thread lists; `None`: the engine's agent name.
    pub agent_id: Option<String>,
    /// The host's id of the request that starts the run, for the run's log line.
    pub request_id: Option<String>,
    /// The trace the request belongs to (32 hex digits), for the run's log line.
    pub trace_id: Option<String>,
    /// Counts the run's store calls (claim, effects, finish), for its log line; share a
    /// clone to read the count once the run has ended.
    pub store_calls: StoreCalls,
    /// Interests the run carries, passed on to the runs that answer its interrupts
    /// (see [`crate::outbox`]).
    pub watches: Vec<crate::outbox::Watch>,
    /// At the host deadline, hand the run over instead of ending it `cancelled`: its lease
    /// ends then and there, and whichever instance comes next finishes it
    /// ([`crate::Engine::redrive_due`]), replaying what it did. For runs nobody streams
    /// (background runs, re-drives); a client streaming a run is told it was cancelled.
    pub hand_off_at_deadline: bool,
}

impl Default for RunOptions {
    /// No deadline, [`Principal::anonymous`].
    fn default() -> Self {
        RunOptions {
            deadline_ms: None,
            principal: Principal::anonymous(),
            agent_id: None,
            request_id: None,
            trace_id: None,
            store_calls: StoreCalls::default(),
            watches: Vec::new(),
            hand_off_at_deadline: false,
        }
    }
}
