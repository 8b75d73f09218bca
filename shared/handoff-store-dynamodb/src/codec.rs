//! The item layout: attribute names, how values are stored (inline, compressed, chunked), and
//! how items are parsed back.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use handoff_core::StoreError;
use sha2::{Digest, Sha256};

/// Partition key (S): the encoded partition.
pub(crate) const PK: &str = "pk";
/// Sort key (S): the encoded item key, or an internal key (`~…`).
pub(crate) const SK: &str = "sk";
/// Version (N).
pub(crate) const V: &str = "v";
/// Write id (S, 32 hex digits): unique per put; names the value's chunks.
pub(crate) const W: &str = "w";
/// Inline stored bytes (B).
pub(crate) const B: &str = "b";
/// Chunk count (N), instead of `b`.
pub(crate) const C: &str = "c";
/// SHA-256 of the stored bytes (B), with `c`.
pub(crate) const H: &str = "h";
/// Uncompressed length (N): present iff the stored bytes are zlib-compressed.
pub(crate) const Z: &str = "z";
/// Expiry in Unix milliseconds (N): exact filtering on read and in conditions.
pub(crate) const EXP: &str = "exp";
/// Expiry in Unix seconds (N), rounded up: the table's TTL attribute (physical deletion).
pub(crate) const TTL: &str = "ttl";
/// Chunk bytes (B), on chunk items.
pub(crate) const D: &str = "d";
/// The writer's `now_ms` when a chunk was written (N), on chunk items.
pub(crate) const T: &str = "t";
/// Listing scope (S): the partition key of the `listing` index, on heads put with an
/// `IndexEntry` ([`crate::keys::scope`]).
pub(crate) const LS: &str = "ls";
/// Listing order (S): the sort key of the `listing` index, with `ls`
/// ([`crate::keys::order`]).
pub(crate) const LO: &str = "lo";
/// The global secondary index listing heads by `ls` / `lo`, projecting `exp`.
pub(crate) const LISTING_INDEX: &str = "listing";

/// A number attribute.
pub(crate) fn num(n: u64) -> AttributeValue {
    AttributeValue::N(n.to_string())
}

/// A string attribute.
pub(crate) fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

/// The `ttl` for an expiry in milliseconds: seconds, rounded up, so TTL never deletes an item
/// before it reads as expired.
pub(crate) fn ttl_seconds(expires_at_ms: u64) -> u64 {
    expires_at_ms.div_ceil(1000)
}

/// The primary key of one item.
pub(crate) fn key(pk: &str, sk: &str) -> HashMap<String, AttributeValue> {
    HashMap::from([(PK.to_owned(), s(pk)), (SK.to_owned(), s(sk))])
}

/// 128 unpredictable bits as 32 hex digits: write ids and transaction tokens.
///
/// Each `RandomState` is seeded from the OS once per thread and then stepped, so ids differ
/// across threads, processes and hosts; the sequence number separates ids within a thread.
pub(crate) fn unique_id() -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    let hi = RandomState::new().hash_one((seq, pid, 0x68_61_6e_64_u32));
    let lo = RandomState::new().hash_one((pid, seq, 0x6f_66_66_u32));
    format!("{hi:016x}{lo:016x}")
}

/// Stored bytes: the value, or its zlib compression.
#[derive(Debug, Clone)]
pub(crate) struct Packed {
    /// What is stored (inline or across chunks).
    pub(crate) bytes: Vec<u8>,
    /// The value's length when `bytes` is compressed.
    pub(crate) raw_len: Option<u64>,
}

/// How much of a value is test-compressed to decide whether compressing all of it pays.
const SAMPLE_BYTES: usize = 64 * 1024;

/// Compresses `value` (zlib, fastest level) when it is at least `min_bytes` long and
/// compression saves at least an eighth; otherwise stores it as is.
///
/// A 64 KiB sample is compressed first, so incompressible values (media, encrypted or random
/// bytes) cost one small attempt instead of a full pass.
pub(crate) fn pack(value: Vec<u8>, min_bytes: Option<usize>) -> Packed {
    let worth_trying = min_bytes.is_some_and(|min| value.len() >= min.max(1));
    if worth_trying {
        let sample = &value[..value.len().min(SAMPLE_BYTES)];
        let pays = |raw: usize, packed: usize| packed.saturating_mul(8) <= raw.saturating_mul(7);
        let sampled = miniz_oxide::deflate::compress_to_vec_zlib(sample, 1);
        if pays(sample.len(), sampled.len()) {
            let packed = if sample.len() == value.len() {
                sampled
            } else {
                miniz_oxide::deflate::compress_to_vec_zlib(&value, 1)
            };
            if pays(value.len(), packed.len()) {
                return Packed {
                    bytes: packed,
                    raw_len: Some(value.len() as u64),
                };
            }
        }
    }
    Packed {
        bytes: value,
        raw_len: None,
    }
}

/// The value behind stored bytes.
pub(crate) fn unpack(bytes: Vec<u8>, raw_len: Option<u64>) -> Result<Vec<u8>, StoreError> {
    let Some(raw_len) = raw_len else {
        return Ok(bytes);
    };
    let limit = usize::try_from(raw_len)
        .map_err(|_| StoreError::Backend(format!("stored length {raw_len} is too large")))?;
    let value = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(&bytes, limit)
        .map_err(|e| StoreError::Backend(format!("corrupt compressed value: {e}")))?;
    if value.len() != limit {
        return Err(StoreError::Backend(format!(
            "compressed value inflates to {} bytes, expected {raw_len}",
            value.len()
        )));
    }
    Ok(value)
}

/// SHA-256 of stored bytes.
pub(crate) fn digest(bytes: &[u8]) -> Vec<u8> {
    Sha256::digest(bytes).to_vec()
}

/// How a head item holds its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Body {
    /// In `b`.
    Inline(Vec<u8>),
    /// In `count` chunk items named after the head's write id, hashing to `digest`.
    Chunked {
        /// Number of chunks.
        count: u32,
        /// SHA-256 of the concatenated chunks.
        digest: Vec<u8>,
    },
}

/// A parsed head item (the item a user key names).
#[derive(Debug, Clone)]
pub(crate) struct Head {
    /// The stored sort key.
    pub(crate) sk: String,
    pub(crate) version: u64,
    pub(crate) w: String,
    pub(crate) body: Body,
    pub(crate) raw_len: Option<u64>,
    pub(crate) exp: Option<u64>,
}

impl Head {
    /// The chunk set this head references, if any.
    pub(crate) fn chunks(&self) -> Option<(String, u32)> {
        match self.body {
            Body::Chunked { count, .. } => Some((self.w.clone(), count)),
            Body::Inline(_) => None,
        }
    }
}

fn bad(what: &str) -> StoreError {
    StoreError::Backend(format!("malformed item: {what}"))
}

fn take_s(item: &mut HashMap<String, AttributeValue>, name: &str) -> Result<String, StoreError> {
    match item.remove(name) {
        Some(AttributeValue::S(value)) => Ok(value),
        _ => Err(bad(&format!("`{name}` is not a string"))),
    }
}

fn take_n(
    item: &mut HashMap<String, AttributeValue>,
    name: &str,
) -> Result<Option<u64>, StoreError> {
    match item.remove(name) {
        None => Ok(None),
        Some(AttributeValue::N(n)) => n
            .parse()
            .map(Some)
            .map_err(|_| bad(&format!("`{name}` = {n} is not a u64"))),
        Some(_) => Err(bad(&format!("`{name}` is not a number"))),
    }
}

fn take_b(
    item: &mut HashMap<String, AttributeValue>,
    name: &str,
) -> Result<Option<Vec<u8>>, StoreError> {
    match item.remove(name) {
        None => Ok(None),
        Some(AttributeValue::B(blob)) => Ok(Some(blob.into_inner())),
        Some(_) => Err(bad(&format!("`{name}` is not binary"))),
    }
}

/// The sort key of a returned item.
pub(crate) fn sk_of(item: &HashMap<String, AttributeValue>) -> Result<&str, StoreError> {
    match item.get(SK) {
        Some(AttributeValue::S(sk)) => Ok(sk),
        _ => Err(bad("`sk` is missing")),
    }
}

/// The write id of a returned item, if it has one.
pub(crate) fn w_of(item: &HashMap<String, AttributeValue>) -> Option<&str> {
    match item.get(W) {
        Some(AttributeValue::S(w)) => Some(w),
        _ => None,
    }
}

/// The expiry (ms) of a returned item.
pub(crate) fn exp_of(item: &HashMap<String, AttributeValue>) -> Option<u64> {
    match item.get(EXP) {
        Some(AttributeValue::N(n)) => n.parse().ok(),
        _ => None,
    }
}

/// Parses a full head item.
pub(crate) fn parse_head(mut item: HashMap<String, AttributeValue>) -> Result<Head, StoreError> {
    let sk = take_s(&mut item, SK)?;
    let version = take_n(&mut item, V)?.ok_or_else(|| bad("`v` is missing"))?;
    let w = take_s(&mut item, W)?;
    let raw_len = take_n(&mut item, Z)?;
    let exp = take_n(&mut item, EXP)?;
    let body = match take_b(&mut item, B)? {
        Some(bytes) => Body::Inline(bytes),
        None => {
            let count = take_n(&mut item, C)?.ok_or_else(|| bad("neither `b` nor `c`"))?;
            let count = u32::try_from(count).map_err(|_| bad("`c` is out of range"))?;
            let digest = take_b(&mut item, H)?.ok_or_else(|| bad("`h` is missing"))?;
            Body::Chunked { count, digest }
        }
    };
    Ok(Head {
        sk,
        version,
        w,
        body,
        raw_len,
        exp,
    })
}

/// The bytes of a chunk item.
pub(crate) fn chunk_bytes(
    mut item: HashMap<String, AttributeValue>,
) -> Result<Vec<u8>, StoreError> {
    take_b(&mut item, D)?.ok_or_else(|| bad("chunk without `d`"))
}

/// A binary attribute.
pub(crate) fn blob(bytes: Vec<u8>) -> AttributeValue {
    AttributeValue::B(Blob::new(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_round_trips() {
        let json = br#"{"messages":[{"role":"user","content":"hello"}]}"#.repeat(200);
        let packed = pack(json.clone(), Some(1024));
        assert!(packed.raw_len.is_some() && packed.bytes.len() < json.len() / 4);
        assert_eq!(unpack(packed.bytes, packed.raw_len).unwrap(), json);

        let small = b"tiny".to_vec();
        let packed = pack(small.clone(), Some(1024));
        assert_eq!((packed.bytes, packed.raw_len), (small, None));

        let mut x = 0x9E37_79B9_7F4A_7C15_u64;
        let noise: Vec<u8> = (0..200_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let packed = pack(noise.clone(), Some(1024));
        assert_eq!((packed.bytes, packed.raw_len), (noise, None));

        assert!(unpack(vec![1, 2, 3], Some(10)).is_err());
    }

    #[test]
    fn ids_are_distinct() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| unique_id()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| id.len() == 32));
    }

    #[test]
    fn ttl_rounds_up() {
        assert_eq!(ttl_seconds(1_000), 1);
        assert_eq!(ttl_seconds(1_001), 2);
        assert_eq!(ttl_seconds((1 << 53) - 1), 9_007_199_254_741);
    }
}
