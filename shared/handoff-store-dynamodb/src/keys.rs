//! How partitions and item keys become `pk` / `sk` strings, and where internal items live.
//!
//! DynamoDB rejects empty key strings, and the store keeps internal items (chunks of large
//! values) in the same partition as the user's items, so the mapping reserves a corner of the
//! sort-key space:
//!
//! - a key whose first character is below `}` (U+007D) is stored as is (`thread`, `run#42`,
//!   `resume#…`: every ASCII letter, digit and punctuation mark except `}` and `~`);
//! - every other key (empty, or starting with `}`, `~`, DEL or any non-ASCII character) is
//!   stored behind one `}`: `""` → `}`, `é` → `}é`, `~x` → `}~x`;
//! - internal items start with `~` (U+007E), which no encoded user key does.
//!
//! So every user sort key is below `"~"` and every internal one at or above it: listing all
//! keys is one `Query` with `sk < "~"`, and a prefix query never meets a chunk. The order of
//! encoded keys is the order of the keys, except that `""` (stored as `}`) sorts after
//! unescaped keys; `list` sorts its (decoded) result anyway. Partitions are encoded the same
//! way (only so that `""` is a valid `pk`).
//!
//! Listings (the `listing` index) have their own keys: `ls` is the scope encoded like a
//! partition, `lo` an order-preserving string of (rank descending, partition, key), see
//! [`order`]; a hit's partition and key are read back from the item's `pk` / `sk`, which
//! every index projects.

/// The character put in front of keys that would otherwise be empty or reach into `~…`.
pub(crate) const ESCAPE: char = '}';
/// The first character of every internal sort key; every encoded user key is below it.
pub(crate) const INTERNAL: &str = "~";
/// DynamoDB's limit on a partition key value, in UTF-8 bytes.
pub(crate) const MAX_PK_BYTES: usize = 2048;
/// DynamoDB's limit on a sort key value, in UTF-8 bytes.
pub(crate) const MAX_SK_BYTES: usize = 1024;

/// The stored form of a partition name or item key.
pub(crate) fn encode(key: &str) -> String {
    match key.chars().next() {
        Some(first) if first < ESCAPE => key.to_owned(),
        _ => {
            let mut out = String::with_capacity(key.len() + 1);
            out.push(ESCAPE);
            out.push_str(key);
            out
        }
    }
}

/// The user key behind a stored sort key, or `None` for internal items.
pub(crate) fn decode(sk: &str) -> Option<&str> {
    match sk.chars().next() {
        Some(ESCAPE) => Some(&sk[ESCAPE.len_utf8()..]),
        Some(first) if first < ESCAPE => Some(sk),
        _ => None,
    }
}

/// DynamoDB's limit on a global secondary index's partition key value, in UTF-8 bytes.
pub(crate) const MAX_INDEX_PK_BYTES: usize = 2048;
/// DynamoDB's limit on a global secondary index's sort key value, in UTF-8 bytes.
pub(crate) const MAX_INDEX_SK_BYTES: usize = 1024;
/// Decimal digits of the inverted rank that starts every listing order.
const RANK_DIGITS: usize = 20;
/// Ends the partition in a listing order: below every escaped character (see [`order`]).
const PARTITION_END: &str = "\u{1}\u{1}";

/// The `ls` of an item listed in `scope`: the scope, encoded like a partition (so the empty
/// scope is a valid key).
pub(crate) fn scope(scope: &str) -> String {
    encode(scope)
}

/// The `lo` of an item listed at `rank` from `partition` / `key`: a string whose ascending
/// (UTF-8 byte, i.e. code point) order is the listing order — rank descending, then
/// partition, then key ascending, exactly, for every string.
///
/// It is `u64::MAX - rank` in 20 zero-padded digits, the partition with U+0000 written as
/// U+0001 U+0002 and U+0001 as U+0001 U+0003, U+0001 U+0001 (below every escaped
/// character, so a partition sorts before its extensions), then the key escaped the same
/// way. Each character's escape sorts like the character and none is a prefix of another,
/// so comparing two orders compares the ranks, then the partitions, then the keys.
pub(crate) fn order(rank: u64, partition: &str, key: &str) -> String {
    let mut out = String::with_capacity(RANK_DIGITS + partition.len() + key.len() + 2);
    out.push_str(&format!("{:0width$}", u64::MAX - rank, width = RANK_DIGITS));
    push_escaped(&mut out, partition);
    out.push_str(PARTITION_END);
    push_escaped(&mut out, key);
    out
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\u{0}' => out.push_str("\u{1}\u{2}"),
            '\u{1}' => out.push_str("\u{1}\u{3}"),
            c => out.push(c),
        }
    }
}

/// The rank an `lo` was written with.
pub(crate) fn rank_of(order: &str) -> Option<u64> {
    let digits = order.get(..RANK_DIGITS)?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits
        .parse::<u64>()
        .ok()
        .map(|inverted| u64::MAX - inverted)
}

/// The longest prefix of `text` of at most `max` bytes (on a character boundary).
pub(crate) fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The sort key of chunk `n` of the value written with write id `w`.
pub(crate) fn chunk_sk(w: &str, n: u32) -> String {
    format!("~c#{w}#{n}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_orders() {
        let keys = [
            "", "a", "run#1", "}", "}x", "~", "~~", "é", "\u{7f}", "\u{0}", " x", "|",
        ];
        for key in keys {
            let sk = encode(key);
            assert!(!sk.is_empty());
            assert!(
                sk.as_str() < INTERNAL,
                "{key:?} encodes below the internal range"
            );
            assert_eq!(decode(&sk), Some(key));
        }
        assert_eq!(decode(&chunk_sk("ab", 3)), None);
        assert_eq!(encode("thread"), "thread");
        // Prefix preservation: k starts with p iff encode(k) starts with encode(p), p non-empty.
        for p in ["a", "r", "}", "~", "é", "run#"] {
            for k in keys {
                assert_eq!(
                    k.starts_with(p),
                    encode(k).starts_with(&encode(p)),
                    "{k:?} / {p:?}"
                );
            }
        }
    }

    #[test]
    fn listing_orders_sort_like_hits() {
        let strings = [
            "",
            "\u{0}",
            "\u{0}\u{0}",
            "\u{1}",
            "\u{1}\u{0}",
            "\u{2}",
            "a",
            "a\u{0}",
            "a\u{1}",
            "ab",
            "}",
            "~",
            "é",
            "\u{10ffff}",
        ];
        let mut hits = Vec::new();
        for rank in [0, 1, 7, u64::MAX - 1, u64::MAX] {
            for partition in strings {
                for key in strings {
                    hits.push((rank, partition, key));
                }
            }
        }
        let mut by_order = hits.clone();
        by_order.sort_by_key(|(rank, partition, key)| order(*rank, partition, key));
        let mut by_hit = hits;
        by_hit.sort_by_key(|(rank, partition, key)| (std::cmp::Reverse(*rank), *partition, *key));
        assert_eq!(by_order, by_hit);
        for (rank, partition, key) in &by_order {
            assert_eq!(rank_of(&order(*rank, partition, key)), Some(*rank));
        }
        assert_eq!(order(u64::MAX, "", ""), "00000000000000000000\u{1}\u{1}");
        assert_eq!(rank_of("x"), None);
        assert_eq!(truncate("aé", 2), "a");
        assert_eq!(truncate("aé", 3), "aé");
    }
}
