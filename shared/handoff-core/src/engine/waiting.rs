//! What waits for the caller right now (`GET /approvals/waiting`, the console's bell): the
//! approvals inbox's interrupts that have not expired, counted.
//!
//! It reads the inbox's listing, which the finish of a run writes in the same commit as the
//! outbox's `interrupt.created` and `run.finished` / `run.failed` notices, so it says what
//! those events say with or without webhooks configured, and an answer given by any path
//! (AG-UI, A2A, MCP, the console) takes it off in the commit that records it. Who may answer
//! is the inbox's rule, the claim's own (`approvals::may_resolve`).

use serde::Serialize;

use super::Inner;
use super::approvals::list_mapped;
use crate::error::CoreError;
use crate::principal::Principal;
use crate::records::PendingInterrupt;

/// The most a call lists; past it the answer says `more`.
pub const MAX_WAITING: usize = super::threads::MAX_LIMIT;

/// One interrupt waiting for the caller.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitingApproval {
    /// Its thread.
    pub thread_id: String,
    /// The interrupt.
    pub interrupt_id: String,
    /// What the user is asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The subject whose run raised it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_by: Option<String>,
    /// When it was raised (Unix ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_at: Option<u64>,
    /// When it lapses (Unix ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
}

/// What waits for the caller, newest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitingApprovals {
    /// How many are listed.
    pub count: usize,
    /// Newest first, at most [`MAX_WAITING`].
    pub approvals: Vec<WaitingApproval>,
    /// There may be more than those listed (omitted when not).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub more: bool,
}

fn waiting_approval(thread_id: &str, pending: PendingInterrupt) -> WaitingApproval {
    WaitingApproval {
        thread_id: thread_id.to_owned(),
        interrupt_id: pending.interrupt.id.to_string(),
        message: pending.interrupt.message,
        requested_by: pending.raised_by.map(|o| o.subject),
        requested_at: pending.raised_at_ms,
        expires_at: pending.expires_at_ms,
    }
}

/// The interrupts `principal` may resolve now, across its tenant's threads.
pub(crate) async fn waiting(
    inner: &Inner,
    principal: &Principal,
) -> Result<WaitingApprovals, CoreError> {
    let now = inner.runtime.now_ms();
    let live = move |p: &PendingInterrupt| p.expires_at_ms.is_none_or(|at| at > now);
    let (approvals, next) = list_mapped(
        inner,
        principal,
        MAX_WAITING,
        None,
        &live,
        &waiting_approval,
    )
    .await?;
    Ok(WaitingApprovals {
        count: approvals.len(),
        approvals,
        more: next.is_some(),
    })
}
