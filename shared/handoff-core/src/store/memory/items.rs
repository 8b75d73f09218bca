//! One partition's items: a vector sorted by key. Partitions are small (a thread holds a
//! few records per run; an application's record is often alone), and a map's node is
//! sized for eleven entries whatever it holds, with every key stored twice; a sorted
//! vector stores each key once and allocates for what is there.

use crate::store::Item;

#[derive(Debug, Default)]
pub(super) struct Items(Vec<Item>);

impl Items {
    fn position(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|item| item.key.as_str().cmp(key))
    }

    pub(super) fn get(&self, key: &str) -> Option<&Item> {
        self.position(key).ok().map(|at| &self.0[at])
    }

    /// Puts `item` in place of the one with its key, if any; returns that one.
    pub(super) fn insert(&mut self, item: Item) -> Option<Item> {
        match self.position(&item.key) {
            Ok(at) => Some(std::mem::replace(&mut self.0[at], item)),
            Err(at) => {
                self.0.insert(at, item);
                None
            }
        }
    }

    pub(super) fn remove(&mut self, key: &str) -> Option<Item> {
        self.position(key).ok().map(|at| self.0.remove(at))
    }

    pub(super) fn retain(&mut self, keep: impl FnMut(&Item) -> bool) {
        self.0.retain(keep);
    }

    /// The items whose key starts with `prefix`, in key order.
    pub(super) fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a Item> {
        let start = self.0.partition_point(|item| item.key.as_str() < prefix);
        self.0[start..]
            .iter()
            .take_while(move |item| item.key.starts_with(prefix))
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
