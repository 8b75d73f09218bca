//! The records the engine keeps per thread, and their keys.
//!
//! | key | record | written |
//! |---|---|---|
//! | `thread` | [`ThreadRecord`], the small fenced head: status, lease, pending interrupts, state, history counters, last run | at claim, lease renewal and finish, fenced by version |
//! | `msgs#{n:08}` | [`HistoryPage`]: the messages one run added, in order | once (must be absent), in the finish commit that makes them visible; re-put unchanged by a finish that renews their retention |
//! | `run#{runId}` | [`RunRecord`]: input hash, status, compacted event log | created at claim, finalized at finish |
//! | `resume#{sha256}` | [`ResumeRecord`]: the run that applies this answer (and, once finished, a copy of its run record) | created with the claim it belongs to, completed at finish, deleted if the run errs |
//! | `effect#{key}` | [`EffectRecord`]: started / done, fence, result | around the side effect |
//! | `live#{runId}@{startedAtMs}#{n:06}` | [`LiveBatch`]: the events a running run emitted since its last batch | every `live_flush_ms` while the run runs (once each, must be absent); read by reconnecting clients until the run record is final |
//! | `stop#{runId}` | [`StopRequest`]: who asked a running run to stop | by `POST …/stop`; read by the run's stop poll |
//! | `mark` | `{}`: outlives every other record of the thread (by a margin: a tenth of the pages' lifetime, at most a day) | with a new thread, by a finish that writes a page it would not outlive, and by every renewal of the pages |
//! | `approvals` | `{}`, listed in the tenant's approvals inbox at the newest pending interrupt's time | by every finish that leaves interrupts pending; deleted by the finish that leaves none |
//! | `profile` | [`ThreadProfile`]: the name and archived flag its owner set | by `PATCH /threads/{id}` (never by a run, so renaming never fences a running run out) |

use agui_protocol::{Event, Interrupt, Message, MessageId, RunId};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approval::{ApprovalPolicy, ApprovalSource};
use crate::principal::Owner;
use crate::store::{Condition, IndexEntry, Write};

pub mod audit;
mod encoding;
mod redrive;

pub use redrive::RedriveRequest;

pub(crate) use encoding::{decode, encode};

/// Key of the thread record.
pub const THREAD_KEY: &str = "thread";

/// Key of the thread's marker: an empty record that outlives every other record of the
/// thread, so a run that finds no head knows whether an expired thread left records
/// (see the engine's `leftovers`).
pub const MARK_KEY: &str = "mark";

/// Key of the thread's entry in its tenant's approvals inbox: present, listed under
/// [`approvals_scope`], while interrupts are pending.
pub const APPROVALS_KEY: &str = "approvals";

/// The listing of the threads of `tenant` with pending interrupts.
pub fn approvals_scope(tenant: &str) -> String {
    ["approvals\u{1f}", tenant].concat()
}

/// Key of the thread's [`ThreadProfile`].
pub const PROFILE_KEY: &str = "profile";

/// What the thread's owner set on it, apart from the head (a run rewrites the head under
/// its fence; a rename must not break that fence).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadProfile {
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Left out of the default list.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub archived: bool,
    /// When it was last set.
    pub updated_at_ms: u64,
}

/// Prefix of history page keys.
pub const PAGE_PREFIX: &str = "msgs#";

/// Key of history page `n` (zero-padded so keys sort in page order).
pub fn page_key(n: u32) -> String {
    format!("{PAGE_PREFIX}{n:08}")
}

// Keys are joined with `[..].concat()` (sized once from the parts), not `format!`: they
// are built on every request, and the formatter costs several times more.

/// Key prefix of run records.
pub(crate) const RUN_PREFIX: &str = "run#";

/// Key of a run record.
pub fn run_key(run_id: &str) -> String {
    [RUN_PREFIX, run_id].concat()
}
/// Key of a resume record.
pub fn resume_key(hash: &str) -> String {
    ["resume#", hash].concat()
}
/// Prefix of a run attempt's live journal (a run id re-executed after a failed finish
/// starts a new journal).
pub fn live_prefix(run_id: &str, started_at_ms: u64) -> String {
    format!("live#{run_id}@{started_at_ms}#")
}
/// Key of batch `n` of a run attempt's live journal.
pub fn live_key(run_id: &str, started_at_ms: u64, n: u32) -> String {
    format!("{}{n:06}", live_prefix(run_id, started_at_ms))
}
/// Key of a stop request.
pub fn stop_key(run_id: &str) -> String {
    ["stop#", run_id].concat()
}
/// Key of an effect record.
pub fn effect_key(key: &str) -> String {
    ["effect#", key].concat()
}

/// Where a thread stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ThreadStatus {
    /// No run, nothing pending.
    #[default]
    Idle,
    /// A run holds the lease.
    Running,
    /// Waiting for a resume.
    Interrupted,
}

/// The claim a run holds on its thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    /// The holder.
    pub run_id: RunId,
    /// After this, another run may take the thread over.
    pub expires_at_ms: u64,
    /// The resume key of the answer the holder applies. Should the holder die, its
    /// effects are in doubt, so until the answer is settled only it may be applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
}

/// An interrupt waiting for an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingInterrupt {
    /// As announced.
    pub interrupt: Interrupt,
    /// The run that raised it.
    pub run_id: RunId,
    /// Parsed `expiresAt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<u64>,
    /// The resume key of an answer whose run stopped with a side effect in doubt. Only
    /// that answer may be applied now, so the effect is re-driven under its own key
    /// instead of a different answer taking another path while the effect may have run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_answer: Option<String>,
    /// The principal whose run raised it: the requester an approval policy's
    /// not-the-requester rule compares with (absent on records stored before it was kept;
    /// the thread's owner stands in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raised_by: Option<Owner>,
    /// The arguments the tool call it is about proposed (parsed), the baseline of the
    /// approval policy's edit rules. Kept on the server: an answer cannot restate them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_args: Option<Value>,
    /// When the run that raised it finished (Unix ms; absent on records stored before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raised_at_ms: Option<u64>,
    /// The approval policy it was raised under (see [`crate::approval`]): set only from
    /// the typed policy of the raised interrupt, never from its metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalPolicy>,
    /// What raised the approval (with `approval`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_source: Option<ApprovalSource>,
    /// The agent whose run raised it: only that agent's routes may answer it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The name of the tool its tool call is about (the baseline of a policy chosen from
    /// the call's arguments, asked again for edited ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The watches of the run that raised it, inherited by the run that answers it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub watches: Vec<crate::outbox::watch::Watch>,
}

impl PendingInterrupt {
    /// The approval policy that governs answers to it: the typed field, or for a record
    /// stored before policies were typed, the policy its metadata carried. `Err` when a
    /// record claims a policy that cannot be read: nobody may then resolve it.
    pub fn policy(&self) -> Result<Option<ApprovalPolicy>, String> {
        match &self.approval {
            Some(policy) => Ok(Some(policy.clone())),
            None => ApprovalPolicy::from_legacy_metadata(&self.interrupt),
        }
    }
}

/// Summary of the latest run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastRun {
    /// Run id.
    pub run_id: RunId,
    /// Final or current status.
    pub status: RunStatus,
}

/// The authoritative thread head. It stays small whatever the conversation's length:
/// messages live in append-only [`HistoryPage`]s, so a claim or a finish rewrites a few
/// hundred bytes, not the history.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRecord {
    /// Status.
    pub status: ThreadStatus,
    /// Current lease, while running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Lease>,
    /// Pending interrupts (kept until a run that answers them commits).
    #[serde(default)]
    pub pending: Vec<PendingInterrupt>,
    /// Shared state.
    #[serde(default)]
    pub state: Value,
    /// History written inline by releases before history pages (read, never written
    /// again: the next claim moves it into page 0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
    /// History pages `msgs#0..pages`.
    #[serde(default)]
    pub pages: u32,
    /// Messages across the pages.
    #[serde(default)]
    pub message_count: u64,
    /// When the oldest of the pages expires (Unix ms): set when page 0 is written, moved
    /// on when a finish renews the pages (they must live as long as the head). Absent on
    /// heads without pages and on those written before it was kept (their next finish
    /// renews the pages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages_expire_at_ms: Option<u64>,
    /// Id of the newest message; a request that shares history with the thread must
    /// contain it (else it was built on a stale copy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_message_id: Option<MessageId>,
    /// Hex SHA-256 chain over the paged history (`engine::digest`): lets a run take a
    /// resent history from its input instead of reading the pages. Absent on threads
    /// stored before it (the next run computes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_digest: Option<String>,
    /// Latest run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<LastRun>,
    /// The principal of the thread's first run (absent on threads stored before owners
    /// were recorded; the next run records its principal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// What a thread list shows: name, archived, agent, timestamps.
    #[serde(default, skip_serializing_if = "ThreadMeta::is_empty")]
    pub meta: ThreadMeta,
}

/// A thread's listing facts that runs keep, in its head (the owner's are its
/// [`ThreadProfile`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadMeta {
    /// The agent of its latest run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// When its first run was claimed (Unix ms; absent on threads stored before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at_ms: Option<u64>,
    /// When a run last changed it (claim or finish).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at_ms: Option<u64>,
    /// When its latest run was claimed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run_at_ms: Option<u64>,
}

impl ThreadMeta {
    fn is_empty(&self) -> bool {
        *self == ThreadMeta::default()
    }

    /// Its place in a thread list: latest activity first (the latest run, else creation).
    pub fn activity_ms(&self) -> u64 {
        self.last_run_at_ms
            .or(self.created_at_ms)
            .or(self.updated_at_ms)
            .unwrap_or(0)
    }
}

/// The listing of `owner`'s threads in `tenant` ([`crate::store::Store::list_index`]).
/// Tenants hold no control character, so the first `\u{1f}` ends the tenant.
pub fn threads_scope(tenant: &str, owner: &Owner) -> String {
    ["threads\u{1f}", tenant, "\u{1f}", &owner.subject].concat()
}

impl ThreadRecord {
    /// What a finish carries over from the head it claimed: the history counters (with
    /// the pages' expiry) and the owner. Status, lease, pending interrupts, state and last
    /// run are left at their defaults for the finish to set (copying the claimed ones only
    /// to replace them was a measurable share of a finish).
    pub(crate) fn carried_over(&self) -> ThreadRecord {
        // Every field named: a new one must be placed on one side or the other.
        let ThreadRecord {
            status: _,
            lease: _,
            pending: _,
            state: _,
            messages,
            pages,
            message_count,
            pages_expire_at_ms,
            last_message_id,
            history_digest,
            last_run: _,
            owner,
            meta,
        } = self;
        ThreadRecord {
            messages: messages.clone(),
            pages: *pages,
            message_count: *message_count,
            pages_expire_at_ms: *pages_expire_at_ms,
            last_message_id: last_message_id.clone(),
            history_digest: history_digest.clone(),
            owner: owner.clone(),
            meta: meta.clone(),
            ..ThreadRecord::default()
        }
    }

    /// The put of this head into `partition`: its bytes, and its place in its owner's
    /// thread list. Every head write goes through here, so none drops the thread from it.
    pub(crate) fn write(
        &self,
        partition: &str,
        condition: Condition,
        expires_at_ms: Option<u64>,
    ) -> Write {
        let put = Write::put(THREAD_KEY, condition, encode(self), expires_at_ms);
        match &self.owner {
            Some(owner) => {
                let (tenant, _) = crate::principal::split_partition(partition);
                put.indexed(IndexEntry {
                    scope: threads_scope(tenant, owner),
                    rank: self.meta.activity_ms(),
                })
            }
            None => put,
        }
    }
}

/// Lifecycle of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RunStatus {
    /// Holding the lease.
    Running,
    /// Finished with success.
    Succeeded,
    /// Finished with interrupts.
    Interrupted,
    /// Finished cancelled (deadline or request).
    Cancelled,
    /// Ended with `RUN_ERROR`.
    Errored,
}

impl RunStatus {
    /// Whether the run has ended.
    pub fn is_final(self) -> bool {
        self != RunStatus::Running
    }
}

/// One run and its compacted event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    /// SHA-256 of the canonical input.
    pub input_hash: String,
    /// Status.
    pub status: RunStatus,
    /// Resume record this run applies, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_key: Option<String>,
    /// Start time.
    pub started_at_ms: u64,
    /// The events as emitted (text and argument deltas merged). A `MESSAGES_SNAPSHOT`
    /// is stored empty when `snapshot_pages` is set.
    #[serde(default)]
    pub events: Vec<Event>,
    /// The `MESSAGES_SNAPSHOT` in `events` is the history of pages `0..n` (read back on
    /// replay) rather than a copy of it in every interrupted run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_pages: Option<u32>,
    /// Who asked for this run (for a resume: who sent its answers). They may always
    /// replay it without a read of the thread, an approver's retry included once the
    /// interrupts are no longer pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_by: Option<Owner>,
    /// Where the merged deltas in `events` were cut when they streamed, so a replay (and
    /// a reconnect by `Last-Event-ID`) streams exactly the events the run did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cuts: Vec<DeltaCuts>,
    /// While the run is running: what it was asked, for a re-drive if its instance stops
    /// before its end. Written by its claim (the record then listed in the engine's
    /// `REDRIVE_SCOPE` by the lease's end) and gone from the record its end writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redrive: Option<RedriveRequest>,
}

/// The fragments one merged delta event of a run's log streamed as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeltaCuts {
    /// Index of the merged event in the log.
    #[serde(rename = "i")]
    pub index: u32,
    /// Byte length of each fragment, in order.
    #[serde(rename = "l")]
    pub lengths: Vec<u32>,
    /// Each fragment's timestamp, in ms after the first's (empty when all are equal).
    #[serde(rename = "t", default, skip_serializing_if = "Vec::is_empty")]
    pub offsets_ms: Vec<u64>,
}

impl RunRecord {
    /// Whether `principal` asked for this run.
    pub fn made_by(&self, principal: &crate::Principal) -> bool {
        self.requested_by
            .as_ref()
            .is_some_and(|by| principal.same_as(by))
    }

    /// Who sent the answers this run applies, if it applies any.
    pub fn answered_by(&self) -> Option<&Owner> {
        self.resume_key.as_ref().and(self.requested_by.as_ref())
    }
}

/// The messages one run added to its thread, written once (and re-put unchanged when a
/// finish renews the pages' retention).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryPage {
    /// The run that added them.
    pub run_id: RunId,
    /// In order.
    pub messages: Vec<Message>,
    /// The answers the run applied, with who sent them (the audit trail).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<AnswerAudit>,
    /// The shared state after the run, when the run changed it (what a fork at one of
    /// these messages starts from).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
}

/// One applied answer: who answered which interrupt, how, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerAudit {
    /// The interrupt answered.
    pub interrupt_id: String,
    /// `resolved` or `cancelled`.
    pub status: agui_protocol::ResumeStatus,
    /// `true`/`false` when the payload carried `approved`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
    /// The principal's subject.
    pub by: String,
    /// The run that applied it.
    pub run_id: RunId,
    /// When that run started (Unix ms).
    pub at_ms: u64,
}

/// Which run applies a given resume answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeRecord {
    /// The run.
    pub run_id: RunId,
    /// A copy of that run's record once it finished (written in the same commit as the run
    /// record), so a duplicate of the answer is replayed from the claim's one read instead of
    /// a second read of `run#{runId}`. Absent while the run is in flight, and for runs
    /// whose record is large (16 KiB and up), which a duplicate reads from `run#{runId}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished: Option<Box<RunRecord>>,
}

/// Progress of one side effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EffectRecord {
    /// Whether the result is recorded.
    pub done: bool,
    /// Thread version (fence) of the run that started it.
    pub fence: u64,
    /// How many times the downstream was called with this key.
    pub attempts: u32,
    /// The recorded result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}

/// Events a running run emitted, journaled for clients that reconnect mid-run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveBatch {
    /// The id (1-based position in the run) of the first event.
    pub first: u64,
    /// The events, as streamed.
    pub events: Vec<Event>,
}

/// A request to stop a running run, left where whichever instance runs it polls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StopRequest {
    /// The `startedAtMs` of the run asked to stop: a later run reusing the id (a
    /// CopilotKit resume) is not stopped by a request meant for an earlier one.
    pub run_started_at_ms: u64,
    /// The subject of the principal who asked.
    pub by: String,
    /// When (Unix ms).
    pub at_ms: u64,
}
