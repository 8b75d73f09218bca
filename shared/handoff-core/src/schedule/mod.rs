//! Schedules: runs that nobody's request starts, each tick run exactly once across every
//! instance of a deployment, with the store as the only coordination.
//!
//! A [`Schedule`] names an agent, the messages each tick sends it, its cadence (a 5-field
//! cron pattern in UTC, or every so many seconds) and its thread: a new one per tick, or a
//! fixed one that each tick appends to. It runs as the principal who created it.
//!
//! **Records.** A tenant's schedules live in one partition of their own (`schedule#{id}`
//! items), listed by a scan of it. Each is also listed in one due index across tenants,
//! ranked by [`crate::store::MAX_INDEX_RANK`] minus its next-due time, so the soonest due
//! comes first (as the outbox does it, [`crate::outbox`]).
//!
//! **Exactly once.** An instance that finds a schedule due ([`due`]) claims its tick with a
//! compare-and-set ([`claim`]): one conditional write, on the version it read, that moves
//! the next-due time past now and records the run it is about to start. Of several
//! instances racing on a tick, one write succeeds; the others' conditions fail and they
//! leave it. The next-due time moves to the first tick *after now*, so the ticks missed
//! while every instance was down run once when one comes back, not once per missed tick.
//!
//! **What a tick runs.** [`Tick::input`] is the run's input: a new thread
//! `{scheduleId}-{tickMs}-{runId}` (or the fixed thread), the schedule's messages under ids
//! of the run's own (so a fixed thread appends them each time). Hosts drive it as a
//! background run (`handoff_http::schedules`); a claimed tick whose run cannot start (the
//! thread busy, say) is logged and not retried: at most once, never twice.
//!
//! Cron patterns are parsed by the `croner` crate (5 fields, Vixie cron's syntax with its
//! `L`, `W` and `#` extensions and nicknames such as `@hourly`), evaluated in UTC.

mod store;
#[cfg(test)]
mod tests;

use std::str::FromStr;

use agui_protocol::RunAgentInput;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::codes;
use crate::engine::RunOptions;
use crate::error::CoreError;
use crate::principal::{self, Principal};

pub use store::{DUE_SCOPE, Due, MAX_PER_TENANT, claim, create, delete, due, get, list, next_due};

/// The longest period `everySeconds` takes: a year.
pub const MAX_EVERY_SECONDS: u64 = 366 * 24 * 3_600;
/// The most messages one tick sends.
pub const MAX_MESSAGES: usize = 50;

/// How often a schedule ticks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Cadence {
    /// A 5-field cron pattern, in UTC.
    Cron(String),
    /// Every so many seconds, counted from the schedule's creation.
    EverySeconds(u64),
}

/// A run started by a schedule, as its record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TickRun {
    /// The tick it serves (Unix ms it was due).
    pub tick_ms: u64,
    /// Unix ms it was claimed.
    pub claimed_ms: u64,
    /// Its thread.
    pub thread_id: String,
    /// Its run.
    pub run_id: String,
}

/// One schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    /// Its id (unique in its tenant).
    pub id: String,
    /// Who created it: its runs run as this principal, and only it (or role `admin`)
    /// manages it.
    pub owner: Principal,
    /// The agent its ticks run.
    pub agent_id: String,
    /// How often.
    pub cadence: Cadence,
    /// The messages each tick sends (AG-UI messages; ids are each run's own).
    pub messages: Vec<Value>,
    /// The thread every tick runs on; `None`: a new thread per tick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// Unix ms it was created.
    pub created_ms: u64,
    /// Unix ms its next tick is due.
    pub next_due_ms: u64,
    /// Ticks claimed so far.
    #[serde(default)]
    pub ticks: u64,
    /// The last tick's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<TickRun>,
}

/// A refusal of a schedule's definition: 400 `INVALID_SCHEDULE`.
pub fn invalid(message: impl Into<String>) -> CoreError {
    CoreError::Reported {
        code: codes::INVALID_SCHEDULE,
        message: message.into(),
        retryable: false,
    }
}

impl Cadence {
    /// A cadence from exactly one of `cron` and `every_seconds`, checked.
    pub fn parse(cron: Option<&str>, every_seconds: Option<u64>) -> Result<Cadence, CoreError> {
        let cadence = match (cron, every_seconds) {
            (Some(cron), None) => Cadence::Cron(cron.trim().to_owned()),
            (None, Some(seconds)) => Cadence::EverySeconds(seconds),
            _ => return Err(invalid("give exactly one of cron and everySeconds")),
        };
        // A pattern that parses but never matches (Feb 30) is refused here too.
        cadence.first_due(0)?;
        Ok(cadence)
    }

    /// The first tick after a schedule created at `created_ms`.
    pub fn first_due(&self, created_ms: u64) -> Result<u64, CoreError> {
        match self {
            Cadence::EverySeconds(seconds) => {
                if !(1..=MAX_EVERY_SECONDS).contains(seconds) {
                    return Err(invalid(format!(
                        "everySeconds must be 1 to {MAX_EVERY_SECONDS}"
                    )));
                }
                Ok(created_ms + seconds * 1_000)
            }
            Cadence::Cron(pattern) => next_cron(pattern, created_ms),
        }
    }

    /// The first tick strictly after `now_ms`, for a schedule whose tick `due_ms` is due:
    /// missed ticks are skipped, not queued.
    pub fn next_after(&self, due_ms: u64, now_ms: u64) -> Result<u64, CoreError> {
        match self {
            Cadence::EverySeconds(seconds) => {
                let period = seconds.max(&1) * 1_000;
                let missed = now_ms.saturating_sub(due_ms) / period;
                Ok(due_ms + (missed + 1) * period)
            }
            Cadence::Cron(pattern) => next_cron(pattern, now_ms.max(due_ms)),
        }
    }
}

/// The first match of `pattern` strictly after `after_ms` (UTC).
fn next_cron(pattern: &str, after_ms: u64) -> Result<u64, CoreError> {
    use croner::parser::{CronParser, Seconds, Year};
    let cron = CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build()
        .parse(pattern)
        .map_err(|e| invalid(format!("cron {pattern:?}: {e}")))?;
    let after = i64::try_from(after_ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .ok_or_else(|| invalid("a time out of range"))?;
    let next = cron
        .find_next_occurrence(&after, false)
        .map_err(|e| invalid(format!("cron {pattern:?} never matches: {e}")))?;
    u64::try_from(next.timestamp_millis()).map_err(|_| invalid("a time out of range"))
}

impl FromStr for Cadence {
    type Err = CoreError;

    /// A cron pattern.
    fn from_str(pattern: &str) -> Result<Self, Self::Err> {
        Cadence::parse(Some(pattern), None)
    }
}

/// Checks the messages a schedule sends: AG-UI messages (without ids, or with any: each
/// run gets its own), at least one, at most [`MAX_MESSAGES`].
pub fn check_messages(messages: &[Value]) -> Result<(), CoreError> {
    if messages.is_empty() || messages.len() > MAX_MESSAGES {
        return Err(invalid(format!(
            "messages must hold 1 to {MAX_MESSAGES} messages"
        )));
    }
    let probe = input_of(messages, "check", "check");
    agui_protocol::lenient::parse_input(&probe)
        .map(|_| ())
        .map_err(|e| invalid(format!("messages: {e}")))
}

/// A thread id a schedule may name (as a thread partition accepts it).
pub fn check_thread_id(thread_id: &str) -> Result<(), CoreError> {
    principal::partition(principal::DEFAULT_TENANT, thread_id)
        .map(|_| ())
        .map_err(|e| invalid(format!("thread: {e}")))
}

/// The JSON body of a run's input: `messages` under ids `{run_id}-m{i}`.
fn input_of(messages: &[Value], thread_id: &str, run_id: &str) -> Vec<u8> {
    let messages: Vec<Value> = messages
        .iter()
        .enumerate()
        .map(|(i, message)| {
            let mut message = message.clone();
            if let Some(object) = message.as_object_mut() {
                object.insert("id".to_owned(), Value::String(format!("{run_id}-m{i}")));
            }
            message
        })
        .collect();
    let body = serde_json::json!({ "threadId": thread_id, "runId": run_id, "messages": messages });
    serde_json::to_vec(&body).unwrap_or_default()
}

/// A tick claimed by this instance ([`claim`]): its run is this instance's to start.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    /// The schedule as the claim wrote it.
    pub schedule: Schedule,
    /// The run it starts.
    pub run: TickRun,
}

impl Tick {
    /// The run's input.
    pub fn input(&self) -> Result<RunAgentInput, CoreError> {
        let body = input_of(
            &self.schedule.messages,
            &self.run.thread_id,
            &self.run.run_id,
        );
        agui_protocol::lenient::parse_input(&body)
            .map_err(|e| invalid(format!("schedule {}: {e}", self.schedule.id)))
    }

    /// The run's options: it runs as the schedule's owner, on its agent.
    pub fn options(&self) -> RunOptions {
        RunOptions {
            principal: self.schedule.owner.clone(),
            agent_id: Some(self.schedule.agent_id.clone()),
            ..RunOptions::default()
        }
    }
}

/// The thread a tick of `schedule` due at `tick_ms` runs on, for run `run_id`.
pub(crate) fn tick_thread(schedule: &Schedule, tick_ms: u64, run_id: &str) -> String {
    match &schedule.thread_id {
        Some(fixed) => fixed.clone(),
        None => format!("{}-{tick_ms}-{run_id}", schedule.id),
    }
}
