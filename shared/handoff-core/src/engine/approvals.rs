//! The approvals inbox: the pending interrupts a caller may resolve, across its tenant's
//! threads (`GET /approvals`).
//!
//! A thread with pending interrupts holds an `approvals` item listed in its tenant's
//! approvals scope, written by the finish that leaves them pending (in the same commit)
//! and deleted by the one that leaves none. The inbox pages that listing, newest first,
//! reads each thread head, and keeps the interrupts the caller may resolve under their
//! approval policy: a role it holds (not its own request when the policy says so), or
//! no role and a thread it owns.

use agui_protocol::{Interrupt, ResumeStatus};
use serde::Serialize;
use serde_json::Value;

use super::Inner;
use super::cursor::{IndexPosition, ListCursor};
use crate::access::{Access, approver_roles};
use crate::error::CoreError;
use crate::principal::{Principal, split_partition};
use crate::records::{
    self, APPROVALS_KEY, PendingInterrupt, THREAD_KEY, ThreadRecord, approvals_scope,
};
use crate::store::{Condition, IndexEntry, IndexHit, Write};
use crate::time_fmt::format_ms;

/// Threads one inbox call reads at most before it answers with a cursor.
const MAX_THREADS_READ: usize = 400;

/// The finish's write of the thread's inbox entry: listed while interrupts are pending,
/// removed when none are left (nothing when there were none before either).
pub(crate) fn entry(
    inner: &Inner,
    partition: &str,
    thread: &ThreadRecord,
    before: &ThreadRecord,
    now: u64,
) -> Option<Write> {
    if thread.pending.is_empty() {
        return (!before.pending.is_empty())
            .then(|| Write::delete(APPROVALS_KEY, Condition::Always));
    }
    let newest = thread
        .pending
        .iter()
        .filter_map(|p| p.raised_at_ms)
        .max()
        .unwrap_or(now);
    let (tenant, _) = split_partition(partition);
    let put = Write::put(
        APPROVALS_KEY,
        Condition::Always,
        b"{}".to_vec(),
        Some(now + inner.config.thread_ttl_ms),
    );
    Some(put.indexed(IndexEntry {
        scope: approvals_scope(tenant),
        rank: newest,
    }))
}

/// One interrupt of the inbox.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// Its thread.
    pub thread_id: String,
    /// The interrupt.
    pub interrupt_id: String,
    /// Why it was raised.
    pub reason: String,
    /// What the user is asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The tool call it is about: `{id, args}` (the proposed arguments).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<Value>,
    /// The shape of an answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Value>,
    /// When it lapses (ISO-8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// The subject whose run raised it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_by: Option<String>,
    /// The roles that may answer it (empty: its thread's owner).
    pub required_roles: Vec<String>,
    /// When it was raised (ISO-8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}

/// A page of the inbox.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalPage {
    /// Newest first.
    pub approvals: Vec<Approval>,
    /// The next page's cursor; `null` at the end.
    pub next_cursor: Option<String>,
}

/// Whether `principal` may resolve `pending` on `thread` (the approval policy as the
/// claim will enforce it, and the authorizer's word).
fn may_resolve(
    inner: &Inner,
    principal: &Principal,
    thread: &ThreadRecord,
    pending: &PendingInterrupt,
) -> bool {
    let access = Access::Answer {
        pending,
        status: ResumeStatus::Resolved,
    };
    if inner
        .authorize(principal, Some(thread), Access::Read)
        .is_err()
        || inner.authorize(principal, Some(thread), access).is_err()
    {
        return false;
    }
    // The claim's own rule, so the inbox lists only what the caller's answer would pass.
    crate::approval::may_resolve(principal, pending, thread.owner.as_ref()).is_ok()
}

fn approval(thread_id: &str, pending: PendingInterrupt) -> Approval {
    let required_roles = approver_roles(&pending);
    let Interrupt {
        id,
        reason,
        message,
        tool_call_id,
        response_schema,
        expires_at,
        ..
    } = pending.interrupt.clone();
    let tool_call = tool_call_id.map(|id| {
        let mut call = serde_json::json!({ "id": id });
        if let Some(args) = pending.tool_args {
            call["args"] = args;
        }
        call
    });
    Approval {
        thread_id: thread_id.to_owned(),
        interrupt_id: id.to_string(),
        reason,
        message,
        tool_call,
        response_schema: response_schema.map(|s| (*s).clone()),
        expires_at,
        requested_by: pending.raised_by.map(|o| o.subject),
        required_roles,
        created_at: pending.raised_at_ms.map(format_ms),
    }
}

/// The caller's inbox, newest first.
pub(crate) async fn list(
    inner: &Inner,
    principal: &Principal,
    limit: usize,
    cursor_text: Option<&str>,
) -> Result<ApprovalPage, CoreError> {
    let (approvals, next_cursor) =
        list_mapped(inner, principal, limit, cursor_text, &|_| true, &approval).await?;
    Ok(ApprovalPage {
        approvals,
        next_cursor,
    })
}

/// The interrupts the caller may resolve that `keep` keeps, newest first, each as `map`
/// makes it of its thread id and record; the next page's cursor when there may be more.
pub(crate) async fn list_mapped<T>(
    inner: &Inner,
    principal: &Principal,
    limit: usize,
    cursor_text: Option<&str>,
    keep: &(dyn Fn(&PendingInterrupt) -> bool + Sync),
    map: &(dyn Fn(&str, PendingInterrupt) -> T + Sync),
) -> Result<(Vec<T>, Option<String>), CoreError> {
    if !(1..=super::threads::MAX_LIMIT).contains(&limit) {
        return Err(CoreError::InvalidInput(format!(
            "limit must be between 1 and {}",
            super::threads::MAX_LIMIT
        )));
    }
    let scope = approvals_scope(&principal.tenant);
    // A page ends inside a thread: after `skip` of the interrupts it shows the caller.
    let cursors = ListCursor::<IndexPosition>::new(
        inner,
        [scope.as_str(), "\u{1f}", &principal.subject].concat(),
    );
    let (mut after, mut skip) = match cursors.open(cursor_text).await? {
        Some(at) => {
            let (hit, skip) = at.into_parts();
            // Each thread has one inbox entry, under this key (cursors sealed before the
            // position carried a key have none).
            let hit = IndexHit {
                key: APPROVALS_KEY.to_owned(),
                ..hit
            };
            // The thread the page ended in comes again, minus what was shown of it.
            (Some(hit), skip)
        }
        None => (None, 0),
    };
    let now = inner.runtime.now_ms();
    let mut approvals = Vec::new();
    let mut read = 0;
    // A cursor points into a thread: start at it again (not after it).
    let mut resume_at = after.take();
    loop {
        let batch = (limit + 1).min(100);
        let mut hits = Vec::new();
        if let Some(at) = resume_at.take() {
            hits.push(at.clone());
            after = Some(at);
            let rest = inner
                .store
                .list_index(&scope, after.as_ref(), batch, now)
                .await?;
            hits.extend(rest);
        } else {
            hits = inner
                .store
                .list_index(&scope, after.as_ref(), batch, now)
                .await?;
        }
        let exhausted = hits.len() < batch;
        for hit in hits {
            read += 1;
            let Some(item) = inner.store.get_one(&hit.partition, THREAD_KEY, now).await? else {
                skip = 0;
                after = Some(hit);
                continue;
            };
            let thread: ThreadRecord = records::decode(&item)?;
            let (_, thread_id) = split_partition(&hit.partition);
            let mine: Vec<&PendingInterrupt> = thread
                .pending
                .iter()
                .filter(|p| keep(p) && may_resolve(inner, principal, &thread, p))
                .collect();
            for (n, pending) in mine.iter().enumerate().skip(skip) {
                if approvals.len() == limit {
                    let position = IndexPosition::new(hit.clone(), n);
                    let next = cursors.seal(&position).await?;
                    return Ok((approvals, Some(next)));
                }
                approvals.push(map(thread_id, (*pending).clone()));
            }
            skip = 0;
            after = Some(hit);
            if read >= MAX_THREADS_READ && approvals.len() < limit {
                break;
            }
        }
        if exhausted {
            return Ok((approvals, None));
        }
        if read >= MAX_THREADS_READ {
            break;
        }
    }
    // Read as much as one call may: the next page starts after the last thread read.
    let next_cursor = match after {
        Some(at) => {
            let position = IndexPosition::new(at, usize::MAX);
            Some(cursors.seal(&position).await?)
        }
        None => None,
    };
    Ok((approvals, next_cursor))
}
