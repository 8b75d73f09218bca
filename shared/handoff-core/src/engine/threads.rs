//! Threads as a product: a caller's thread list, renaming and archiving, deletion, and
//! the history in pages.
//!
//! The list is the owner's listing in the store ([`Store::list_index`](crate::Store)),
//! written by every head write ([`ThreadRecord::write`]), so it costs no extra item: each
//! hit points at a thread head, which is read and trusted (the listing may lag on some
//! stores; the head never does).

use agui_protocol::{Interrupt, Message};
use serde::{Deserialize, Serialize};

use super::cursor::{IndexPosition, ListCursor};
use super::{Inner, leftovers, stop};
use crate::access::Access;
use crate::error::CoreError;
use crate::principal::{Owner, Principal, split_partition};
use crate::records::{
    self, HistoryPage, PROFILE_KEY, THREAD_KEY, ThreadProfile, ThreadRecord, ThreadStatus,
    page_key, threads_scope,
};
use crate::store::{Condition, IndexHit, Item, StoreError, Write};
use crate::time_fmt::format_ms;

/// Largest page of a list.
pub const MAX_LIMIT: usize = 100;
/// Longest thread name, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// Listing reads one list call may make before it answers with a cursor (so a list of
/// mostly archived threads answers in bounded time).
const MAX_ROUNDS: usize = 8;
/// History pages one messages call reads at most.
const MAX_PAGE_READS: usize = MAX_LIMIT + 8;
/// How long a delete waits for the thread's running run to stop.
const STOP_WAIT_MS: u64 = 10_000;
const STOP_POLL_MS: u64 = 100;

/// What `GET /threads` asks for.
#[derive(Debug, Clone, Default)]
pub struct ThreadQuery {
    /// Page size, 1..=[`MAX_LIMIT`].
    pub limit: usize,
    /// Where the previous page ended.
    pub cursor: Option<String>,
    /// Archived threads too.
    pub include_archived: bool,
    /// Only threads this agent last ran.
    pub agent_id: Option<String>,
}

/// One thread of a list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSummary {
    /// The thread id.
    pub id: String,
    /// Its name (`null` until named).
    pub name: Option<String>,
    /// Out of the default list.
    pub archived: bool,
    /// The agent of its latest run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Its owner's subject.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by_id: Option<String>,
    /// ISO-8601.
    pub created_at: String,
    /// ISO-8601: the latest run, rename or archive.
    pub updated_at: String,
    /// ISO-8601, `null` before any run.
    pub last_run_at: Option<String>,
    /// `idle`, `running` or `interrupted`.
    pub status: ThreadStatus,
    /// The interrupts waiting for an answer.
    pub pending_interrupts: Vec<Interrupt>,
}

/// A page of a thread list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadPage {
    /// Latest activity first.
    pub threads: Vec<ThreadSummary>,
    /// The next page's cursor; `null` at the end.
    pub next_cursor: Option<String>,
}

/// What `PATCH /threads/{id}` changes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadChanges {
    /// New name.
    #[serde(default)]
    pub name: Option<String>,
    /// Archive or restore.
    #[serde(default)]
    pub archived: Option<bool>,
}

/// A page of a thread's history.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessagePage {
    /// Oldest first.
    pub messages: Vec<Message>,
    /// The cursor of the page before this one; `null` at the start of the history.
    pub next_before: Option<String>,
}

/// Where a history page began: messages before `offset` of virtual page `page` (0: the
/// inline history of a head written before pages; n: `msgs#{n-1}`) come next, `left` of
/// them in all.
#[derive(Serialize, Deserialize)]
struct HistoryPosition {
    page: u32,
    offset: usize,
    left: u64,
}

fn check_limit(limit: usize) -> Result<(), CoreError> {
    if (1..=MAX_LIMIT).contains(&limit) {
        Ok(())
    } else {
        Err(CoreError::InvalidInput(format!(
            "limit must be between 1 and {MAX_LIMIT}"
        )))
    }
}

/// The caller's threads, latest activity first.
pub(crate) async fn list(
    inner: &Inner,
    principal: &Principal,
    query: &ThreadQuery,
) -> Result<ThreadPage, CoreError> {
    check_limit(query.limit)?;
    let scope = threads_scope(&principal.tenant, &Owner::from(principal));
    let cursors = ListCursor::<IndexPosition>::new(inner, scope.clone());
    let opened = cursors.open(query.cursor.as_deref()).await?;
    let mut after = opened.map(|at| at.into_parts().0);
    let now = inner.runtime.now_ms();
    let mut threads = Vec::new();
    for _ in 0..MAX_ROUNDS {
        // One more than needed: a hit past a full page proves there is a next one.
        let want = query.limit - threads.len() + 1;
        let hits = inner
            .store
            .list_index(&scope, after.as_ref(), want, now)
            .await?;
        let exhausted = hits.len() < want;
        let reads = hits.iter().map(|hit| {
            inner
                .store
                .get(&hit.partition, &[THREAD_KEY, PROFILE_KEY], now)
        });
        let heads = futures::future::join_all(reads).await;
        for (hit, items) in hits.into_iter().zip(heads) {
            if threads.len() == query.limit {
                return Ok(ThreadPage {
                    threads,
                    next_cursor: Some(list_cursor(&cursors, after).await?),
                });
            }
            let items = items?;
            after = Some(hit);
            let partition = &after.as_ref().expect("just set").partition;
            let Some(summary) = summarize(principal, partition, &items)? else {
                continue;
            };
            if summary.archived && !query.include_archived {
                continue;
            }
            if query
                .agent_id
                .as_ref()
                .is_some_and(|agent| summary.agent_id.as_ref() != Some(agent))
            {
                continue;
            }
            threads.push(summary);
        }
        if exhausted {
            return Ok(ThreadPage {
                threads,
                next_cursor: None,
            });
        }
    }
    let next_cursor = match after {
        Some(at) => Some(list_cursor(&cursors, Some(at)).await?),
        None => None,
    };
    Ok(ThreadPage {
        threads,
        next_cursor,
    })
}

async fn list_cursor(
    cursors: &ListCursor<'_, IndexPosition>,
    at: Option<IndexHit>,
) -> Result<String, CoreError> {
    let at = at.unwrap_or(IndexHit {
        rank: u64::MAX,
        partition: String::new(),
        key: String::new(),
    });
    cursors.seal(&IndexPosition::new(at, 0)).await
}

/// The summary of a listed thread from its head and profile, if it is still the caller's.
fn summarize(
    principal: &Principal,
    partition: &str,
    items: &[Option<Item>],
) -> Result<Option<ThreadSummary>, CoreError> {
    let Some(Some(head)) = items.first() else {
        return Ok(None);
    };
    let thread: ThreadRecord = records::decode(head)?;
    if !thread.owner.as_ref().is_some_and(|o| principal.same_as(o)) {
        return Ok(None);
    }
    let profile: ThreadProfile = match items.get(1) {
        Some(Some(item)) => records::decode(item)?,
        _ => ThreadProfile::default(),
    };
    let (_, thread_id) = split_partition(partition);
    Ok(Some(summary(thread_id, thread, profile)))
}

pub(crate) fn summary(
    thread_id: &str,
    thread: ThreadRecord,
    profile: ThreadProfile,
) -> ThreadSummary {
    let meta = &thread.meta;
    let created = meta
        .created_at_ms
        .or(meta.last_run_at_ms)
        .or(meta.updated_at_ms)
        .unwrap_or(0);
    let updated = meta
        .updated_at_ms
        .unwrap_or(created)
        .max(profile.updated_at_ms);
    ThreadSummary {
        id: thread_id.to_owned(),
        name: profile.name,
        archived: profile.archived,
        agent_id: meta.agent_id.clone(),
        created_by_id: thread.owner.map(|o| o.subject),
        created_at: format_ms(created),
        updated_at: format_ms(updated),
        last_run_at: meta.last_run_at_ms.map(format_ms),
        status: thread.status,
        pending_interrupts: thread.pending.into_iter().map(|p| p.interrupt).collect(),
    }
}

/// The head of `thread_id` as `principal` may manage it (rename, archive, delete).
async fn managed_head(
    inner: &Inner,
    principal: &Principal,
    partition: &str,
    now: u64,
) -> Result<(Item, ThreadRecord), CoreError> {
    let Some(item) = inner.store.get_one(partition, THREAD_KEY, now).await? else {
        return Err(CoreError::ThreadNotFound);
    };
    let thread: ThreadRecord = records::decode(&item)?;
    inner.authorize(principal, Some(&thread), Access::Read)?;
    inner.authorize(principal, Some(&thread), Access::Manage)?;
    Ok((item, thread))
}

fn check_name(name: &str) -> Result<(), CoreError> {
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(CoreError::InvalidInput(format!(
            "name: at most {MAX_NAME_CHARS} characters"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(CoreError::InvalidInput(
            "name: control characters are not allowed".into(),
        ));
    }
    Ok(())
}

/// Renames or (un)archives a thread; its runs are not disturbed.
pub(crate) async fn update(
    inner: &Inner,
    principal: &Principal,
    thread_id: &str,
    changes: &ThreadChanges,
) -> Result<ThreadSummary, CoreError> {
    if let Some(name) = &changes.name {
        check_name(name)?;
    }
    let partition = principal.partition(thread_id)?;
    for _ in 0..5 {
        let now = inner.runtime.now_ms();
        let (head, thread) = managed_head(inner, principal, &partition, now).await?;
        let stored = inner.store.get_one(&partition, PROFILE_KEY, now).await?;
        let mut profile: ThreadProfile = match &stored {
            Some(item) => records::decode(item)?,
            None => ThreadProfile::default(),
        };
        if let Some(name) = &changes.name {
            profile.name = Some(name.clone());
        }
        if let Some(archived) = changes.archived {
            profile.archived = archived;
        }
        profile.updated_at_ms = now;
        let ttl = inner.config.history_ttl_ms.max(inner.config.thread_ttl_ms);
        let condition = stored
            .as_ref()
            .map_or(Condition::Absent, |item| Condition::Version(item.version));
        // The head check keeps a profile from outliving a thread deleted meanwhile.
        let writes = vec![
            Write::check(THREAD_KEY, Condition::Version(head.version)),
            Write::put(
                PROFILE_KEY,
                condition,
                records::encode(&profile),
                Some(now + ttl),
            ),
        ];
        match inner.store.commit(&partition, writes, now).await {
            Ok(()) => return Ok(summary(thread_id, thread, profile)),
            Err(StoreError::ConditionFailed { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Err(CoreError::ThreadBusy {
        run_id: String::new(),
        retry_after_ms: inner.config.busy_retry_after_ms,
    })
}

/// Erases a thread whole, after stopping its running run (waiting a bounded time).
pub(crate) async fn delete(
    inner: &Inner,
    principal: &Principal,
    thread_id: &str,
) -> Result<(), CoreError> {
    let partition = principal.partition(thread_id)?;
    let started = inner.runtime.now_ms();
    let mut stop_asked = false;
    loop {
        let now = inner.runtime.now_ms();
        let (head, thread) = managed_head(inner, principal, &partition, now).await?;
        let running = thread
            .lease
            .as_ref()
            .filter(|lease| lease.expires_at_ms > now && thread.status == ThreadStatus::Running);
        if let Some(lease) = running
            && now < started + STOP_WAIT_MS
        {
            if !stop_asked {
                stop_asked = true;
                if let Err(error) = stop::request(inner, principal, thread_id, &lease.run_id).await
                {
                    tracing::warn!(%error, "could not ask the running run to stop before a delete");
                }
            }
            inner.runtime.sleep.sleep(STOP_POLL_MS).await;
            continue;
        }
        let gone = vec![Write::delete(THREAD_KEY, Condition::Version(head.version))];
        match inner.store.commit(&partition, gone, now).await {
            Ok(()) => break,
            Err(StoreError::ConditionFailed { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    tracing::info!(thread_id, "thread deleted");
    // The head is gone, so every route answers 404 now; the rest goes in batches, each
    // checking no new thread took the id meanwhile (whose records it would then leave).
    let now = inner.runtime.now_ms();
    leftovers::clear(inner, &partition, now).await?;
    Ok(())
}

/// A page of the thread's history: up to `limit` messages before `before` (the end
/// without it), oldest first, reading only the history pages it returns from.
pub(crate) async fn messages(
    inner: &Inner,
    principal: &Principal,
    thread_id: &str,
    limit: usize,
    before: Option<&str>,
) -> Result<MessagePage, CoreError> {
    check_limit(limit)?;
    let partition = principal.partition(thread_id)?;
    let now = inner.runtime.now_ms();
    let Some(item) = inner.store.get_one(&partition, THREAD_KEY, now).await? else {
        return Err(CoreError::ThreadNotFound);
    };
    let thread: ThreadRecord = records::decode(&item)?;
    inner.authorize(principal, Some(&thread), Access::Read)?;
    let cursors = ListCursor::new(inner, ["messages\u{1f}", partition.as_str()].concat());
    let mut at = match cursors.open(before).await? {
        Some(at) => at,
        None => HistoryPosition {
            page: thread.pages,
            offset: usize::MAX,
            left: thread.message_count + thread.messages.len() as u64,
        },
    };
    let mut chunks = Vec::new();
    let mut need = limit;
    let mut reads = 0;
    while need > 0 && at.left > 0 && reads < MAX_PAGE_READS {
        let page = if at.page == 0 {
            thread.messages.clone()
        } else {
            reads += 1;
            match inner
                .store
                .get_one(&partition, &page_key(at.page - 1), now)
                .await?
            {
                Some(item) => records::decode::<HistoryPage>(&item)?.messages,
                None => Vec::new(),
            }
        };
        let end = at.offset.min(page.len());
        let start = end.saturating_sub(need);
        let taken = page[start..end].to_vec();
        need -= taken.len();
        at.left = at.left.saturating_sub(taken.len() as u64);
        chunks.push(taken);
        if start > 0 {
            at.offset = start;
        } else if at.page == 0 {
            at.left = 0;
        } else {
            at.page -= 1;
            at.offset = usize::MAX;
        }
    }
    let messages = chunks.into_iter().rev().flatten().collect();
    let next_before = if at.left > 0 {
        Some(cursors.seal(&at).await?)
    } else {
        None
    };
    Ok(MessagePage {
        messages,
        next_before,
    })
}
