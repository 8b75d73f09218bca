//! Message ids for membership tests, shared by the engine's history merge and the run's
//! message log. It sits below both (it needs only the protocol's `Message`) so that
//! `context` does not import from `engine`.

use std::collections::HashSet;

use agui_protocol::Message;

/// The ids of some messages, for membership tests: a scan while only a few tests will be
/// made (a turn usually adds one or two messages to a long history, and hashing every
/// stored id would cost more than the scans), a set otherwise.
pub(crate) enum Ids<'a> {
    Scan(&'a [Message]),
    Set(HashSet<&'a str>),
}

impl<'a> Ids<'a> {
    /// Scans below this many lookups.
    const SCAN_LOOKUPS: usize = 8;

    /// The ids of `messages`, to be looked up about `lookups` times.
    pub(crate) fn of(messages: &'a [Message], lookups: usize) -> Self {
        if lookups < Self::SCAN_LOOKUPS {
            Ids::Scan(messages)
        } else {
            Ids::Set(messages.iter().map(|m| m.id().as_str()).collect())
        }
    }

    pub(crate) fn contains(&self, id: &str) -> bool {
        match self {
            Ids::Scan(messages) => messages.iter().any(|m| m.id().as_str() == id),
            Ids::Set(ids) => ids.contains(id),
        }
    }
}

#[cfg(test)]
mod tests {
    use agui_protocol::Message;
    use proptest::prelude::*;

    use super::Ids;

    fn message(id: u8) -> Message {
        Message::user(format!("m{id}"), "text")
    }

    proptest! {
        #[test]
        fn scanned_and_hashed_ids_agree(
            held in proptest::collection::vec(0u8..40, 0..30),
            asked in 0u8..50,
        ) {
            let held: Vec<Message> = held.into_iter().map(message).collect();
            let id = format!("m{asked}");
            let (scan, set) = (Ids::of(&held, 1), Ids::of(&held, 100));
            prop_assert!(matches!(scan, Ids::Scan(_)) && matches!(set, Ids::Set(_)));
            prop_assert_eq!(scan.contains(&id), set.contains(&id));
            prop_assert_eq!(scan.contains(&id), held.iter().any(|m| m.id().as_str() == id));
        }
    }
}
