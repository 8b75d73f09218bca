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
}
