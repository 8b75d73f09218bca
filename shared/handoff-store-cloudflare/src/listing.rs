//! Listings across partitions ([`handoff_core::Store::list_index`]) on Durable Objects.
//!
//! A scope (one owner's threads, one tenant's approvals) is kept by its own object, of the
//! same class as the partitions, named [`scope_object_name`]. The partition's object stays
//! the authority for its items, so the listing is a copy fed from it:
//!
//! 1. The commit that puts an item with an index entry (or takes one out: a put without
//!    one, a delete) writes, in the same transaction, a **change** to the partition's
//!    outbox, numbered by a per-partition sequence that never goes back.
//! 2. Before answering the commit, the partition's object sends its due changes to each
//!    scope's object and drops them from the outbox once the scope acknowledged them; a
//!    scope that cannot be reached is retried by the object's alarm with backoff, so a
//!    change is never lost, only late.
//! 3. The scope's object keeps, per (partition, key), the change with the highest sequence
//!    (a removal stays as a tombstone for a day, so a late, older change cannot bring an
//!    item back), and pages through its live entries, highest rank first, with one
//!    indexed query.
//!
//! A hit is a pointer: the engine reads the item it names and trusts what it reads.

use crate::protocol::{ListingChange, Mutation, Row};

/// The name of the object that keeps `scope`'s listing. The record separator keeps it
/// apart from partition names, which the engine never starts with one followed by `listing`.
pub fn scope_object_name(scope: &str) -> String {
    format!("\u{1e}listing\u{1e}{scope}")
}

/// Ranks are bound to SQL as JavaScript numbers, exact up to 2^53 - 1; a higher one is
/// refused rather than stored rounded.
pub const MAX_RANK: u64 = handoff_core::store::MAX_INDEX_RANK;

/// The listing changes a planned commit makes: `current[i]` is the stored row (live or
/// not) of the batch's `i`th key, as given to [`crate::protocol::plan_commit`]. A put
/// with an entry lists its item (and takes it out of a scope it leaves); a put without
/// one, or a delete, takes it out of the scope it was in.
pub fn listing_changes(current: &[Option<Row>], mutations: &[Mutation]) -> Vec<ListingChange> {
    let was_listed = |key: &str| {
        current
            .iter()
            .flatten()
            .find(|row| row.key == key)
            .and_then(|row| row.index.as_ref())
    };
    let removal = |scope: &str, key: &str| ListingChange {
        seq: 0,
        scope: scope.to_owned(),
        key: key.to_owned(),
        rank: None,
        expires_at_ms: None,
    };
    let mut changes = Vec::new();
    for mutation in mutations {
        let (key, listed, expires_at_ms) = match mutation {
            Mutation::Upsert(row) => (row.key.as_str(), row.index.as_ref(), row.expires_at_ms),
            Mutation::Delete(key) => (key.as_str(), None, None),
        };
        if let Some(before) = was_listed(key)
            && listed.is_none_or(|now| now.scope != before.scope)
        {
            changes.push(removal(&before.scope, key));
        }
        if let Some(listed) = listed {
            changes.push(ListingChange {
                seq: 0,
                scope: listed.scope.clone(),
                key: key.to_owned(),
                rank: Some(listed.rank),
                expires_at_ms,
            });
        }
    }
    changes
}

#[cfg(test)]
mod tests;
