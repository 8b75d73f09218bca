//! The conversation as stored: append-only pages under the small thread head, and how
//! a request's messages merge into it (stored history is the source of truth).

use std::borrow::Borrow;
use std::collections::HashSet;

use agui_protocol::{Event, Message, RunId};

use super::Inner;
use crate::error::CoreError;
use crate::message_ids::Ids;
use crate::records::{
    self, AnswerAudit, HistoryPage, PAGE_PREFIX, RunRecord, ThreadRecord, page_key,
};
use crate::store::{Condition, Item, Write};

/// The thread's history: inline messages of a record written before pages, then pages
/// `0..pages` (one range read; pages past the head's count belong to a later commit and
/// are left out). A page gone past its retention is simply absent (finishes renew the
/// pages before that, see `renew`, unless every attempt failed).
pub(crate) async fn load(
    inner: &Inner,
    partition: &str,
    thread: &ThreadRecord,
    pages: u32,
    now: u64,
) -> Result<Vec<Message>, CoreError> {
    let mut messages = thread.messages.clone();
    for page in pages_upto(inner, partition, pages, now).await? {
        messages.extend(page.messages);
    }
    Ok(messages)
}

/// [`load`] of the whole history, with the audit of the answers applied along it.
pub(crate) async fn load_with_answers(
    inner: &Inner,
    partition: &str,
    thread: &ThreadRecord,
    now: u64,
) -> Result<(Vec<Message>, Vec<AnswerAudit>), CoreError> {
    let mut messages = thread.messages.clone();
    let mut answers = Vec::new();
    for page in pages_upto(inner, partition, thread.pages, now).await? {
        messages.extend(page.messages);
        answers.extend(page.answers);
    }
    Ok((messages, answers))
}

async fn pages_upto(
    inner: &Inner,
    partition: &str,
    pages: u32,
    now: u64,
) -> Result<Vec<HistoryPage>, CoreError> {
    page_items(inner, partition, pages, now)
        .await?
        .iter()
        .map(records::decode::<HistoryPage>)
        .collect()
}

/// The stored items of pages `0..pages` that have not expired, in order (one range read).
pub(crate) async fn page_items(
    inner: &Inner,
    partition: &str,
    pages: u32,
    now: u64,
) -> Result<Vec<Item>, CoreError> {
    if pages == 0 {
        return Ok(Vec::new());
    }
    let end = page_key(pages);
    let mut items = inner.store.scan(partition, PAGE_PREFIX, now).await?;
    items.retain(|item| item.key < end);
    Ok(items)
}

/// How long a page lives from its write (or its renewal): the history's retention, and at
/// least twice the head's. The pages a finish writes or renews so outlive the head it
/// writes, by enough that the next renewal is at least `thread_ttl_ms` of activity away
/// (with a retention equal to the head's, every finish would renew every page).
pub(crate) fn page_ttl(inner: &Inner) -> u64 {
    let config = &inner.config;
    config
        .history_ttl_ms
        .max(config.thread_ttl_ms.saturating_mul(2))
}

/// Whether a new run's input must be checked against the stored history before the
/// claim: it has messages, the thread has history, and the input lacks the thread's
/// newest message (so it is either stale or shares nothing and only appends).
pub(crate) fn needs_check(thread: &ThreadRecord, input: &[Message]) -> bool {
    let last = thread
        .last_message_id
        .as_ref()
        .or(thread.messages.last().map(Message::id));
    last.is_some_and(|last| !input.is_empty() && !input.iter().any(|m| m.id() == last))
}

/// The messages of a new run's input the thread does not have yet, in input order.
///
/// Messages are matched by id; stored ones win over the client's copy. A request that
/// shares history with the thread but lacks its newest message was built on a stale
/// copy (a second tab, a late retry): it is refused rather than allowed to drop turns.
/// A request sharing nothing with the thread only appends.
///
/// With `after_running` (a message sent while a run streamed, under double-texting
/// `interrupt` or `enqueue`) the input cannot contain that run's reply: its new messages
/// are appended after what the run committed instead.
pub(crate) fn merge(
    stored: &[Message],
    input: &[Message],
    after_running: bool,
) -> Result<Vec<Message>, CoreError> {
    let stored_ids = Ids::of(stored, input.len());
    let overlaps = input.iter().any(|m| stored_ids.contains(m.id()));
    if let Some(last) = stored.last().filter(|_| overlaps && !after_running)
        && !input.iter().any(|m| m.id() == last.id())
    {
        return Err(CoreError::ThreadChanged(format!(
            "the request's history lacks message {}, which the thread has from a later run",
            last.id()
        )));
    }
    Ok(new_in(&stored_ids, input))
}

/// [`merge`] of an input whose first `count` messages are, byte for byte, the thread's
/// stored history (the digest proved it): only the messages after them are looked at.
pub(crate) fn merge_recognised(input: &[Message], count: usize) -> Vec<Message> {
    let (stored, rest) = input.split_at(count.min(input.len()));
    new_in(&Ids::of(stored, rest.len()), rest)
}

/// The messages of `input` whose ids are not `stored`, each id once (its first occurrence).
fn new_in(stored: &Ids<'_>, input: &[Message]) -> Vec<Message> {
    let mut seen = HashSet::new();
    input
        .iter()
        .filter(|m| !stored.contains(m.id()) && seen.insert(m.id().as_str()))
        .cloned()
        .collect()
}

/// Appends `added` (and the audit of the answers the run applied) to `head` as its next
/// page; returns the page's write-once put, `None` when there is nothing to keep. Page 0
/// sets the head's `pages_expire_at_ms` (later pages expire later).
pub(crate) fn append(
    inner: &Inner,
    head: &mut ThreadRecord,
    run_id: &RunId,
    added: &[impl Borrow<Message>],
    answers: &[AnswerAudit],
    state: Option<&serde_json::Value>,
    now: u64,
) -> Option<Write> {
    if added.is_empty() && answers.is_empty() {
        return None;
    }
    let key = page_key(head.pages);
    let expires_at_ms = now + page_ttl(inner);
    if head.pages == 0 {
        head.pages_expire_at_ms = Some(expires_at_ms);
    }
    super::digest::advance(head, added);
    head.pages += 1;
    head.message_count += added.len() as u64;
    if let Some(last) = added.last() {
        head.last_message_id = Some(last.borrow().id().clone());
    }
    Some(Write::put(
        key,
        Condition::Absent,
        HistoryPage::encode_parts(run_id, added, answers, state),
        Some(expires_at_ms),
    ))
}

/// Moves the inline history of a record written before pages into page 0 (part of the
/// claim commit), so nothing rewrites it again.
pub(crate) fn migrate(
    inner: &Inner,
    head: &mut ThreadRecord,
    run_id: &RunId,
    now: u64,
) -> Option<Write> {
    if head.messages.is_empty() {
        return None;
    }
    let legacy = std::mem::take(&mut head.messages);
    append(inner, head, run_id, &legacy, &[], None, now)
}

/// Makes a stored run's log replayable as it streamed: its merged deltas cut back into
/// their fragments, its referenced `MESSAGES_SNAPSHOT` filled back in.
pub(crate) async fn hydrate(
    inner: &Inner,
    partition: &str,
    run: &mut RunRecord,
    now: u64,
) -> Result<(), CoreError> {
    let cuts = std::mem::take(&mut run.cuts);
    run.events = super::compact::expand(std::mem::take(&mut run.events), &cuts);
    let Some(pages) = run.snapshot_pages else {
        return Ok(());
    };
    let messages = load(inner, partition, &ThreadRecord::default(), pages, now).await?;
    for event in run.events.iter_mut() {
        if let Event::MessagesSnapshot(snapshot) = event
            && snapshot.messages.is_empty()
        {
            snapshot.messages = messages.clone();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use agui_protocol::Message;
    use proptest::prelude::*;

    use super::{merge, merge_recognised};

    fn message(id: u8) -> Message {
        Message::user(format!("m{id}"), "text")
    }

    proptest! {
        /// An input that starts with the stored history merges the same whether the digest
        /// recognised the prefix or the whole history was read and compared.
        #[test]
        fn a_recognised_prefix_merges_as_the_stored_history_does(
            stored in proptest::collection::vec(0u8..40, 0..30),
            rest in proptest::collection::vec(0u8..40, 0..20),
        ) {
            let stored: Vec<Message> = stored.into_iter().map(message).collect();
            let mut input = stored.clone();
            input.extend(rest.into_iter().map(message));
            let read = merge(&stored, &input, false).expect("the input holds the whole history");
            prop_assert_eq!(merge_recognised(&input, stored.len()), read);
        }
    }
}
