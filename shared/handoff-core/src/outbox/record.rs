//! The stored form of a notice, and its schedule.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::store::{Condition, IndexEntry, IndexHit, Item, Store, StoreError, Write};

/// The listing of every undelivered item, soonest due first.
pub const OUTBOX_SCOPE: &str = "\u{1f}outbox";
/// The highest rank every store keeps exactly: an item's rank is this minus its due time,
/// so the soonest due is listed first.
pub(crate) const RANK_TOP: u64 = crate::store::MAX_INDEX_RANK;
/// Key prefix of items in a thread's partition.
pub(crate) const PREFIX: &str = "outbox#";
/// Key prefix of an item's entry in its notice's listing ([`crate::outbox::Notice::listing`]).
const LISTED_PREFIX: &str = "outbox-listed#";
/// How long items (delivered or not) stay readable: a week.
pub(crate) const ITEM_TTL_MS: u64 = 7 * 24 * 3_600_000;
/// How long a failing item is tried: a day at least.
pub(crate) const GIVE_UP_AFTER_MS: u64 = 24 * 3_600_000;

/// A notice in the outbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxItem {
    /// Its id, the same on every attempt (the receivers' de-duplication key).
    pub id: String,
    /// Its sender.
    pub kind: String,
    /// What it says.
    pub body: Value,
    /// Unix ms it was written (with the run's end).
    pub created_ms: u64,
    /// Attempts so far.
    #[serde(default)]
    pub attempts: u32,
    /// When the next attempt is due (Unix ms).
    pub due_ms: u64,
    /// Receivers already served, for a sender with several (their names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub done: Vec<String>,
    /// Why the last attempt failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// `delivered`, `failed` (given up) or absent while pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
}

impl OutboxItem {
    /// A notice due now, for a caller that writes it itself (with [`OutboxItem::write`], in
    /// the commit of the change it reports) rather than through a run's end.
    pub fn pending(
        id: impl Into<String>,
        kind: impl Into<String>,
        body: Value,
        now_ms: u64,
    ) -> Self {
        OutboxItem {
            id: id.into(),
            kind: kind.into(),
            body,
            created_ms: now_ms,
            attempts: 0,
            due_ms: now_ms,
            done: Vec::new(),
            last_error: None,
            outcome: None,
        }
    }

    /// Its key in its partition.
    pub fn key(&self) -> String {
        format!("{PREFIX}{}", self.id)
    }

    /// The write that stores it under `condition`: listed while pending, unlisted once
    /// it has an outcome.
    pub fn write(&self, condition: Condition, now_ms: u64) -> Write {
        let bytes = serde_json::to_vec(self).unwrap_or_default();
        let write = Write::put(self.key(), condition, bytes, Some(now_ms + ITEM_TTL_MS));
        match self.outcome {
            Some(_) => write,
            None => write.indexed(IndexEntry {
                scope: OUTBOX_SCOPE.to_owned(),
                rank: RANK_TOP.saturating_sub(self.due_ms),
            }),
        }
    }

    /// The write that lists it in `scope` for as long as it lives, newest first: a small
    /// item of its own beside it, written once with it (the item itself is listed in
    /// the due listing while pending, and a stored item has one listing).
    pub(crate) fn listing_write(&self, scope: &str, now_ms: u64) -> Write {
        let key = format!("{LISTED_PREFIX}{}", self.id);
        Write::put(
            key,
            Condition::Absent,
            Vec::new(),
            Some(now_ms + ITEM_TTL_MS),
        )
        .indexed(IndexEntry {
            scope: scope.to_owned(),
            rank: self.created_ms,
        })
    }

    pub(crate) fn decode(item: &Item) -> Option<OutboxItem> {
        serde_json::from_slice(&item.value).ok()
    }
}

/// An item found in a listing.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedItem {
    /// The partition it is stored in (its thread's).
    pub partition: String,
    /// The item as it stands now.
    pub item: OutboxItem,
}

/// Up to `limit` items of the listing `scope`, newest first, as they stand now, after
/// `after` (the last hit of an earlier page): the items and the hit the next page starts
/// after. One listing read and one read per item.
pub async fn listed(
    store: &dyn Store,
    scope: &str,
    after: Option<&IndexHit>,
    limit: usize,
    now_ms: u64,
) -> Result<(Vec<ListedItem>, Option<IndexHit>), StoreError> {
    let hits = store.list_index(scope, after, limit, now_ms).await?;
    let next = (hits.len() == limit)
        .then(|| hits.last().cloned())
        .flatten();
    let mut items = Vec::with_capacity(hits.len());
    for hit in &hits {
        let Some(id) = hit.key.strip_prefix(LISTED_PREFIX) else {
            continue;
        };
        let key = format!("{PREFIX}{id}");
        if let Some(stored) = store.get_one(&hit.partition, &key, now_ms).await?
            && let Some(item) = OutboxItem::decode(&stored)
        {
            items.push(ListedItem {
                partition: hit.partition.clone(),
                item,
            });
        }
    }
    Ok((items, next))
}

/// The wait before attempt `attempt + 1` (1-based `attempt` failed): 5 s, 10 s, 20 s, …,
/// at most an hour.
pub fn backoff_ms(attempt: u32) -> u64 {
    let doubled = 5_000u64.saturating_mul(1u64 << attempt.saturating_sub(1).min(20));
    doubled.min(3_600_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_five_seconds_up_to_an_hour() {
        let waits: Vec<u64> = (1..=4).map(backoff_ms).collect();
        assert_eq!(waits, [5_000, 10_000, 20_000, 40_000]);
        assert_eq!(backoff_ms(10), 2_560_000);
        assert_eq!(backoff_ms(11), 3_600_000);
        assert_eq!(backoff_ms(60), 3_600_000);
    }
}
