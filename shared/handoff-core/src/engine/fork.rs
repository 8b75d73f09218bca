//! `POST /threads/{id}/fork`: a new thread, owned by the caller, whose history is the
//! source's up to a message ("edit a message and regenerate": fork before it, then run).
//!
//! The new thread gets the messages as one history page (one page write, whatever the
//! length; the source is only read), and the state as it stood after the run that wrote
//! that message (pages keep the state of runs that changed it; before they did, a fork
//! short of the end starts from `{}`). A source with a run in progress forks its last
//! finished state: the head's page count and state are those of its last finish.

use agui_protocol::{Message, MessageId, RunId};
use serde_json::Value;

use super::{Inner, history, leftovers};
use crate::access::Access;
use crate::error::CoreError;
use crate::principal::{Owner, Principal, check_id};
use crate::records::{
    self, HistoryPage, MARK_KEY, PAGE_PREFIX, THREAD_KEY, ThreadMeta, ThreadRecord, page_key,
};
use crate::store::{Condition, StoreError};

/// What a fork asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkRequest {
    /// The last message the fork keeps (the whole history without it).
    #[serde(default)]
    pub at_message_id: Option<String>,
    /// The new thread's id (a fresh one without it).
    #[serde(default)]
    pub thread_id: Option<String>,
}

/// The source's messages up to `at` (inclusive) and the state after them.
async fn cut(
    inner: &Inner,
    partition: &str,
    source: &ThreadRecord,
    at: Option<&str>,
    now: u64,
) -> Result<(Vec<Message>, Value), CoreError> {
    let mut messages = source.messages.clone();
    let mut state = None;
    let end = page_key(source.pages);
    for item in inner.store.scan(partition, PAGE_PREFIX, now).await? {
        if item.key >= end {
            break;
        }
        let page: HistoryPage = records::decode(&item)?;
        let reached = at.and_then(|at| page.messages.iter().position(|m| m.id().as_str() == at));
        if let Some(position) = reached {
            let whole_page = position + 1 == page.messages.len();
            messages.extend(page.messages.into_iter().take(position + 1));
            // Past the page's run the state is that run's only if the cut is at its end.
            if whole_page {
                state = page.state.or(state);
            }
            let last = source.pages > 0 && item.key == page_key(source.pages - 1);
            let state = if last && whole_page {
                source.state.clone()
            } else {
                state.unwrap_or_else(|| Value::Object(Default::default()))
            };
            return Ok((messages, state));
        }
        messages.extend(page.messages);
        state = page.state.or(state);
    }
    match at {
        Some(at) if !messages.iter().any(|m| m.id().as_str() == at) => Err(
            CoreError::InvalidInput(format!("atMessageId: the thread has no message {at}")),
        ),
        // A legacy inline history: cut there.
        Some(at) => {
            let position = messages.iter().position(|m| m.id().as_str() == at);
            messages.truncate(position.map_or(messages.len(), |p| p + 1));
            Ok((messages, Value::Object(Default::default())))
        }
        None => Ok((messages, source.state.clone())),
    }
}

/// Forks `source_id` into a new thread of `principal`; its id.
pub(crate) async fn fork(
    inner: &Inner,
    principal: &Principal,
    source_id: &str,
    request: &ForkRequest,
) -> Result<String, CoreError> {
    let source_partition = principal.partition(source_id)?;
    if let Some(at) = &request.at_message_id {
        check_id("atMessageId", at)?;
    }
    let now = inner.runtime.now_ms();
    let Some(item) = inner
        .store
        .get_one(&source_partition, THREAD_KEY, now)
        .await?
    else {
        return Err(CoreError::ThreadNotFound);
    };
    let source: ThreadRecord = records::decode(&item)?;
    // Read first: a caller who may not see the thread learns nothing (404), one who
    // may only read it (an approver) is refused the copy (403).
    inner.authorize(principal, Some(&source), Access::Read)?;
    inner.authorize(principal, Some(&source), Access::Fork)?;
    let (messages, state) = cut(
        inner,
        &source_partition,
        &source,
        request.at_message_id.as_deref(),
        now,
    )
    .await?;

    let thread_id = match &request.thread_id {
        Some(id) => id.clone(),
        None => inner.runtime.ids.next_id("thread"),
    };
    let partition = principal.partition(&thread_id)?;
    let mut head = ThreadRecord {
        state,
        owner: Some(Owner::from(principal)),
        meta: ThreadMeta {
            agent_id: source.meta.agent_id.clone(),
            created_at_ms: Some(now),
            updated_at_ms: Some(now),
            last_run_at_ms: None,
        },
        ..ThreadRecord::default()
    };
    let fork_run = RunId::from(inner.runtime.ids.next_id("fork"));
    let page = history::append(inner, &mut head, &fork_run, &messages, &[], None, now);
    head.last_message_id = messages
        .last()
        .map(|m| MessageId::from(m.id().as_str().to_owned()));
    for _ in 0..3 {
        let items = inner
            .store
            .get(&partition, &[THREAD_KEY, MARK_KEY], now)
            .await?;
        if items.first().is_some_and(Option::is_some) {
            return Err(CoreError::ThreadExists(thread_id));
        }
        // An expired thread under the id left records: erase them first.
        if items.get(1).is_some_and(Option::is_some)
            && !leftovers::clear(inner, &partition, now).await?
        {
            continue;
        }
        let mut writes = vec![head.write(
            &partition,
            Condition::Absent,
            Some(now + inner.config.thread_ttl_ms),
        )];
        writes.extend(page.clone());
        writes.push(leftovers::mark(inner, now));
        match inner.store.commit(&partition, writes, now).await {
            Ok(()) => {
                tracing::info!(source_id, thread_id, "thread forked");
                return Ok(thread_id);
            }
            Err(StoreError::ConditionFailed { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Err(CoreError::ThreadExists(thread_id))
}
