//! A digest of a thread's stored history, so a run recognises the history a client
//! resends without reading the thread's pages.
//!
//! Clients such as `@ag-ui/client` send the whole conversation on every run. The head
//! keeps a SHA-256 chain over the stored messages (`d₀ = 0³², dₖ = SHA-256(dₖ₋₁ ‖ len ‖
//! JSON(mₖ))`, updated by every page a finish writes); a run whose input starts with
//! `message_count` messages chaining to the head's digest has, byte for byte, the stored
//! history, and takes it from its input. Any difference (an edited message, another key
//! order, a message dropped) only misses: the run then reads its pages, as before, and
//! stored history still wins. A collision would take breaking SHA-256.

use std::borrow::Borrow;

use agui_protocol::Message;
use sha2::{Digest, Sha256};

use crate::records::ThreadRecord;

/// The digest of an empty history.
pub(crate) const EMPTY: [u8; 32] = [0; 32];

/// `digest` extended by `messages`, in order.
pub(crate) fn extend<'a>(
    digest: [u8; 32],
    messages: impl IntoIterator<Item = &'a Message>,
) -> [u8; 32] {
    let mut json = Vec::with_capacity(512);
    messages
        .into_iter()
        .fold(digest, |digest, message| step(digest, message, &mut json))
}

/// The chain over a run's input messages, once per run: `links[k]` is the digest of the
/// first `k` messages. The claim hashes the input with its last link, and the run finds
/// the stored prefix among them, so each message is written and hashed once per run.
pub(crate) struct Chain {
    links: Vec<[u8; 32]>,
}

impl Chain {
    pub(crate) fn of(messages: &[Message]) -> Self {
        let mut links = Vec::with_capacity(messages.len() + 1);
        links.push(EMPTY);
        let mut json = Vec::with_capacity(512);
        for message in messages {
            let last = links[links.len() - 1];
            links.push(step(last, message, &mut json));
        }
        Self { links }
    }

    /// The digest of all the messages.
    pub(crate) fn whole(&self) -> [u8; 32] {
        self.links[self.links.len() - 1]
    }

    /// The digest of the first `count` messages.
    pub(crate) fn prefix(&self, count: usize) -> Option<[u8; 32]> {
        self.links.get(count).copied()
    }
}

/// One link: `SHA-256(digest ‖ len ‖ JSON(message))`, `json` a reused buffer.
fn step(digest: [u8; 32], message: &Message, json: &mut Vec<u8>) -> [u8; 32] {
    json.clear();
    // The bytes serde_json writes, by the protocol crate's serde-free writer (the chain is
    // computed over every message a client resends, on every run).
    message.write_json(json);
    let mut hasher = Sha256::new();
    hasher.update(digest);
    hasher.update((json.len() as u64).to_be_bytes());
    hasher.update(&*json);
    hasher.finalize().into()
}

/// The hex form kept in the head.
pub(crate) fn to_hex(digest: [u8; 32]) -> String {
    hex::encode(digest)
}

/// Moves `head`'s digest over the messages of the page being appended. A head without
/// one gets one only when it has no history yet (a thread stored before digests gets its
/// first from the run that reads its pages, see `execute`).
pub(crate) fn advance(head: &mut ThreadRecord, added: &[impl Borrow<Message>]) {
    let base = match &head.history_digest {
        Some(hex) => {
            let mut digest = [0u8; 32];
            hex::decode_to_slice(hex, &mut digest).ok().map(|()| digest)
        }
        None if head.pages == 0 && head.messages.is_empty() => Some(EMPTY),
        None => None,
    };
    head.history_digest = base.map(|d| to_hex(extend(d, added.iter().map(Borrow::borrow))));
}

/// How many leading messages of the run's input (whose [`Chain`] is `input`) are the
/// thread's stored history, when the head's digest proves it (`None`: read the pages).
pub(crate) fn recognised_prefix(thread: &ThreadRecord, input: &Chain) -> Option<usize> {
    let expected = thread.history_digest.as_deref()?;
    // History written inline by old releases is not covered by the digest.
    if !thread.messages.is_empty() {
        return None;
    }
    let count = usize::try_from(thread.message_count).ok()?;
    let mut digest = [0u8; 32];
    hex::decode_to_slice(expected, &mut digest).ok()?;
    (input.prefix(count)? == digest).then_some(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread_of(messages: &[Message]) -> ThreadRecord {
        ThreadRecord {
            message_count: messages.len() as u64,
            history_digest: Some(to_hex(extend(EMPTY, messages))),
            ..ThreadRecord::default()
        }
    }

    #[test]
    fn the_stored_history_resent_is_recognised_and_any_change_misses() {
        let stored = vec![
            Message::user("m1", "Refund A1"),
            Message::assistant("a1", "Done"),
        ];
        let thread = thread_of(&stored);
        let mut input = stored.clone();
        input.push(Message::user("m2", "Thanks"));
        assert_eq!(recognised_prefix(&thread, &Chain::of(&input)), Some(2));

        let mut edited = input.clone();
        edited[1] = Message::assistant("a1", "Done!");
        assert_eq!(recognised_prefix(&thread, &Chain::of(&edited)), None);
        let mut reordered = input.clone();
        reordered.swap(0, 1);
        assert_eq!(recognised_prefix(&thread, &Chain::of(&reordered)), None);
        assert_eq!(
            recognised_prefix(&thread, &Chain::of(&input[..1])),
            None,
            "too short"
        );
        let legacy = ThreadRecord {
            history_digest: None,
            ..thread.clone()
        };
        assert_eq!(recognised_prefix(&legacy, &Chain::of(&input)), None);
    }

    #[test]
    fn extending_equals_digesting_the_whole() {
        let all = [
            Message::user("m1", "a"),
            Message::assistant("a1", "b"),
            Message::user("m2", "c"),
        ];
        assert_eq!(
            extend(extend(EMPTY, &all[..1]), &all[1..]),
            extend(EMPTY, &all)
        );
        // The length prefix keeps message boundaries apart.
        assert_ne!(extend(EMPTY, &all[..2]), extend(EMPTY, &all[1..]));
        // A chain's links are the digests of its prefixes.
        let chain = Chain::of(&all);
        for count in 0..=all.len() {
            assert_eq!(chain.prefix(count), Some(extend(EMPTY, &all[..count])));
        }
        assert_eq!(chain.whole(), extend(EMPTY, &all));
        assert_eq!(chain.prefix(all.len() + 1), None);
    }
}
