//! The memory store's listings: per scope, its entries in listing order.
//!
//! An entry leaves when its item is written without one, deleted, swept as expired or
//! dropped with its partition by the budget. An item that expires unseen (reads treat it
//! as absent before a sweep takes it) is skipped by a page, which forgets it.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};

use crate::store::{IndexEntry, IndexHit};

/// Listing order: highest rank first, then partition and key.
type Position = (Reverse<u64>, String, String);

#[derive(Debug, Default)]
pub(super) struct Listings {
    /// Each listed item's entry, by partition, then key (looked up by `&str`: most writes
    /// list nothing, and checking that allocates nothing).
    entries: HashMap<String, HashMap<String, IndexEntry>>,
    /// Each scope's items in listing order.
    scopes: HashMap<String, BTreeSet<Position>>,
}

impl Listings {
    /// Lists `key` of `partition` under `entry`, or nowhere.
    pub(super) fn set(&mut self, partition: &str, key: &str, entry: Option<IndexEntry>) {
        let old = self.entries.get(partition).and_then(|keys| keys.get(key));
        if entry.as_ref() == old {
            return;
        }
        if let Some(old) = old.cloned() {
            self.unlist(&old, partition, key);
        }
        match entry {
            Some(entry) => {
                self.scopes.entry(entry.scope.clone()).or_default().insert((
                    Reverse(entry.rank),
                    partition.to_owned(),
                    key.to_owned(),
                ));
                self.entries
                    .entry(partition.to_owned())
                    .or_default()
                    .insert(key.to_owned(), entry);
            }
            None => {
                if let Some(keys) = self.entries.get_mut(partition) {
                    keys.remove(key);
                    if keys.is_empty() {
                        self.entries.remove(partition);
                    }
                }
            }
        }
    }

    /// Forgets every entry of `partition` (dropped whole by the budget).
    pub(super) fn forget_partition(&mut self, partition: &str) {
        for (key, entry) in self.entries.remove(partition).unwrap_or_default() {
            self.unlist(&entry, partition, &key);
        }
    }

    fn unlist(&mut self, entry: &IndexEntry, partition: &str, key: &str) {
        if let Some(set) = self.scopes.get_mut(&entry.scope) {
            set.remove(&(Reverse(entry.rank), partition.to_owned(), key.to_owned()));
            if set.is_empty() {
                self.scopes.remove(&entry.scope);
            }
        }
    }

    /// Up to `limit` hits of `scope` after `after` whose items `is_live`.
    pub(super) fn page(
        &mut self,
        scope: &str,
        after: Option<&IndexHit>,
        limit: usize,
        is_live: impl Fn(&str, &str) -> bool,
    ) -> Vec<IndexHit> {
        let mut hits = Vec::new();
        let mut gone = Vec::new();
        if let Some(set) = self.scopes.get(scope) {
            let start = after.map(|a| (Reverse(a.rank), a.partition.clone(), a.key.clone()));
            let range = match &start {
                Some(start) => set.range((
                    std::ops::Bound::Excluded(start.clone()),
                    std::ops::Bound::Unbounded,
                )),
                None => set.range(..),
            };
            for (Reverse(rank), partition, key) in range {
                if hits.len() == limit {
                    break;
                }
                if is_live(partition, key) {
                    hits.push(IndexHit {
                        rank: *rank,
                        partition: partition.clone(),
                        key: key.clone(),
                    });
                } else {
                    gone.push((partition.clone(), key.clone()));
                }
            }
        }
        for (partition, key) in gone {
            self.set(&partition, &key, None);
        }
        hits
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.values().map(HashMap::len).sum()
    }
}
