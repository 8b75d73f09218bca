//! Compact JSON written straight into a byte sink, byte-identical to
//! `serde_json::to_writer` (and so to `JSON.stringify`, for the values AG-UI carries):
//! strings escape `"`, `\` and controls below U+0020 only (`\b \f \n \r \t`, else
//! `\u00xx` in lowercase hex); everything else, U+2028/9 and U+007F included, is
//! copied as is. Numbers are formatted by `serde_json` itself.

use bytes::BytesMut;
use serde::Serialize;
use serde_json::{Map, Number, Value};

/// Where frames are written: a `Vec<u8>` (one-shot `encode`) or the caller's `BytesMut`.
pub(super) trait Sink {
    fn put(&mut self, bytes: &[u8]);
    /// Appends `value` as `serde_json` would (the general path for rare shapes).
    fn put_serde<T: Serialize + ?Sized>(&mut self, value: &T);
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    fn put_serde<T: Serialize + ?Sized>(&mut self, value: &T) {
        serde_json::to_writer(self, value).expect("AG-UI events always serialize");
    }
}

impl Sink for BytesMut {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    fn put_serde<T: Serialize + ?Sized>(&mut self, value: &T) {
        // A Vec<u8> writer is several times faster than `BytesMut::writer()`.
        let json = serde_json::to_vec(value).expect("AG-UI events always serialize");
        self.extend_from_slice(&json);
    }
}

/// What follows a byte that must be escaped; 0 means "copy as is".
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// A high bit set in the lane of each byte that is `"`, `\` or below 0x20. Lanes above
/// a flagged one may be flagged wrongly (borrows run upwards), so only the lowest
/// flag is exact, and that is the only one used.
#[inline]
fn special_lanes(word: u64) -> u64 {
    let zero_in = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    below_space | zero_in(word ^ (ONES * u64::from(b'"'))) | zero_in(word ^ (ONES * 0x5c))
}

/// The lowest flagged lane of `word`, if any.
#[inline]
fn first_lane(word: u64) -> Option<usize> {
    match special_lanes(word) {
        0 => None,
        lanes => Some((lanes.trailing_zeros() / 8) as usize),
    }
}

#[inline]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

#[inline]
fn half_at(bytes: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes(
        bytes[at..at + 4].try_into().expect("4 bytes"),
    ))
}

/// The index of the first byte at or after `from` that needs escaping (or the length),
/// eight bytes at a time. Short tails are read as overlapping words: bytes read twice
/// were clean the first time, so the lowest flag still points at the first special.
#[inline]
fn next_special(bytes: &[u8], from: usize) -> usize {
    let len = bytes.len();
    let mut at = from;
    while at + 8 <= len {
        if let Some(lane) = first_lane(word_at(bytes, at)) {
            return at + lane;
        }
        at += 8;
    }
    let rest = len - at;
    if rest == 0 {
        len
    } else if len - from >= 8 {
        first_lane(word_at(bytes, len - 8)).map_or(len, |lane| len - 8 + lane)
    } else if rest >= 4 {
        let word = half_at(bytes, at) | (half_at(bytes, len - 4) << 32);
        match first_lane(word) {
            None => len,
            Some(lane) if lane < 4 => at + lane,
            Some(lane) => len - 4 + (lane - 4),
        }
    } else {
        (at..len)
            .find(|&i| ESCAPE[bytes[i] as usize] != 0)
            .unwrap_or(len)
    }
}

/// The contents of a JSON string, without the quotes.
#[inline]
pub(super) fn str_body<S: Sink>(out: &mut S, s: &str) {
    let bytes = s.as_bytes();
    let mut start = 0;
    loop {
        let at = next_special(bytes, start);
        if at > start {
            out.put(&bytes[start..at]);
        }
        let Some(&byte) = bytes.get(at) else { return };
        match ESCAPE[byte as usize] {
            b'u' => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.put(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[(byte >> 4) as usize],
                    HEX[(byte & 0xf) as usize],
                ]);
            }
            short => out.put(&[b'\\', short]),
        }
        start = at + 1;
    }
}

/// A JSON string with its quotes.
#[inline]
pub(super) fn string<S: Sink>(out: &mut S, s: &str) {
    out.put(b"\"");
    str_body(out, s);
    out.put(b"\"");
}

/// `<key>"<text>"` when `text` is set (`key` is `,"name":`); nothing otherwise, as serde skips
/// a `None`.
#[inline]
pub(super) fn optional_string<S: Sink>(out: &mut S, key: &[u8], text: Option<&str>) {
    if let Some(text) = text {
        out.put(key);
        string(out, text);
    }
}

/// `<key>{…}` when `map` is set; nothing otherwise.
#[inline]
pub(super) fn optional_object<S: Sink>(out: &mut S, key: &[u8], map: Option<&Map<String, Value>>) {
    if let Some(map) = map {
        out.put(key);
        object(out, map);
    }
}

/// "00" to "99", for two digits per division.
static DIGIT_PAIRS: [u8; 200] = {
    let mut table = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        table[2 * i] = b'0' + (i / 10) as u8;
        table[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    table
};

/// An unsigned integer in decimal (what `serde_json` prints for `u64`).
pub(super) fn uint<S: Sink>(out: &mut S, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        i -= 2;
        let pair = n as usize * 2;
        digits[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        i -= 1;
        digits[i] = b'0' + n as u8;
    }
    out.put(&digits[i..]);
}

fn number<S: Sink>(out: &mut S, n: &Number) {
    if let Some(u) = n.as_u64() {
        return uint(out, u);
    }
    // Negative integers and floats: serde_json's own formatting, into a stack buffer.
    let mut buf = [0u8; 64];
    let mut cursor: &mut [u8] = &mut buf;
    if serde_json::to_writer(&mut cursor, n).is_ok() {
        let len = 64 - cursor.len();
        out.put(&buf[..len]);
    } else {
        out.put_serde(n);
    }
}

/// Any JSON value, as `serde_json` serializes a `Value`.
pub(super) fn value<S: Sink>(out: &mut S, v: &Value) {
    match v {
        Value::Null => out.put(b"null"),
        Value::Bool(true) => out.put(b"true"),
        Value::Bool(false) => out.put(b"false"),
        Value::Number(n) => number(out, n),
        Value::String(s) => string(out, s),
        Value::Array(items) => array(out, items, value),
        Value::Object(map) => object(out, map),
    }
}

/// `[a,b,…]`, each item written by `write`.
pub(super) fn array<S: Sink, T>(out: &mut S, items: &[T], mut write: impl FnMut(&mut S, &T)) {
    out.put(b"[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.put(b",");
        }
        write(out, item);
    }
    out.put(b"]");
}

/// A JSON object, keys in the map's own order (as `serde_json` writes it).
pub(super) fn object<S: Sink>(out: &mut S, map: &Map<String, Value>) {
    out.put(b"{");
    for (i, (k, v)) in map.iter().enumerate() {
        out.put(if i > 0 { b",\"" } else { b"\"" });
        str_body(out, k);
        out.put(b"\":");
        value(out, v);
    }
    out.put(b"}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time scan agrees with a byte-by-byte one for every length,
    /// start offset and position of one or two specials.
    #[test]
    fn next_special_matches_a_byte_scan() {
        let naive = |b: &[u8], from: usize| {
            (from..b.len())
                .find(|&i| ESCAPE[b[i] as usize] != 0)
                .unwrap_or(b.len())
        };
        for len in 0..26 {
            for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                for p in 0..=len {
                    for q in p..=len {
                        let mut bytes = vec![b'a'; len];
                        for (i, byte) in bytes.iter_mut().enumerate() {
                            // Bytes next to the specials' values that must not match.
                            *byte = [b'a', b' ', b'!', b'#', b'[', b']', 0x7f, 0xe4][i % 8];
                        }
                        if p < len {
                            bytes[p] = special;
                        }
                        if q < len {
                            bytes[q] = b'"';
                        }
                        for from in 0..=len {
                            assert_eq!(
                                next_special(&bytes, from),
                                naive(&bytes, from),
                                "{bytes:?} from {from}"
                            );
                        }
                    }
                }
            }
        }
    }
}
