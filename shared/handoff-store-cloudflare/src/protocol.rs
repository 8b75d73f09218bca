//! The messages between a Worker ([`crate::DurableStore`]) and a partition's
//! Durable Object ([`crate::PartitionObject`]), and the pure decision a commit
//! makes. No I/O here, so the rules are unit-tested natively.

use handoff_core::store::{Condition, is_live};
use serde::{Deserialize, Serialize};

/// One call to a partition's object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum StoreRequest {
    /// Consistent multi-key read.
    Get {
        /// Keys, answered in order.
        keys: Vec<String>,
        /// The caller's clock, for expiry.
        now_ms: u64,
    },
    /// All-or-nothing conditional batch.
    Commit {
        /// The partition the object owns (for the listings its puts feed).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition: Option<String>,
        /// Distinct keys.
        writes: Vec<WireWrite>,
        /// The caller's clock, for expiry and conditions.
        now_ms: u64,
    },
    /// Live keys by prefix, sorted.
    List {
        /// Key prefix.
        prefix: String,
        /// The caller's clock, for expiry.
        now_ms: u64,
    },
    /// Blobs the caller wrote for a commit it could not confirm (the KV put or
    /// the call to the object failed): the object deletes from KV those that
    /// no row references, after the collection grace.
    Release {
        /// KV keys of the blobs.
        keys: Vec<String>,
    },
    /// To a scope's object: changes to its listing from one partition's outbox.
    Relist {
        /// The partition the changes come from.
        partition: String,
        /// In sequence order.
        changes: Vec<ListingChange>,
    },
    /// To a scope's object: a page of its listing.
    ListIndex {
        /// Continue after this hit.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<WireHit>,
        /// At most this many hits.
        limit: u32,
        /// The caller's clock, for expiry.
        now_ms: u64,
    },
}

/// Where an item's bytes live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum StoredValue {
    /// In the object's own row (base64 on the wire).
    Inline(#[serde(with = "base64_bytes")] Vec<u8>),
    /// In KV under a content-addressed key, written before the commit that references it.
    Blob(BlobRef),
}

/// Prefix of the KV keys of blobs that belong to one partition's object: a
/// blob under `blob/p/{scope}/{id}` was written for one commit of one
/// partition (`scope` names the partition, `id` is random), so only that
/// partition's rows can reference it and its object may delete it.
pub const PARTITION_BLOB_PREFIX: &str = "blob/p/";

/// A reference to a write-once KV blob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobRef {
    /// KV key: `blob/p/{partition scope}/{random id}`, or `blob/{sha256 hex}/{expiry}`
    /// from before blobs were collected (content-addressed across partitions, so
    /// never deleted: they expire). The bytes under a key never change.
    pub kv_key: String,
    /// SHA-256 of the bytes, hex; checked on every read.
    pub sha256: String,
    /// Length in bytes.
    pub len: u64,
}

impl BlobRef {
    /// Whether the blob belongs to one partition, whose object may delete it
    /// once no row references it (see [`PARTITION_BLOB_PREFIX`]).
    pub fn is_collectable(&self) -> bool {
        is_collectable(&self.kv_key)
    }
}

/// Whether a KV key names a blob its partition's object may delete.
pub fn is_collectable(kv_key: &str) -> bool {
    kv_key.starts_with(PARTITION_BLOB_PREFIX)
}

/// A write as sent to the object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireWrite {
    /// Item key.
    pub key: String,
    /// Precondition.
    pub condition: WireCondition,
    /// `Some` puts this value, `None` with `delete` deletes, neither only checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub put: Option<WirePut>,
    /// Delete the item.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub delete: bool,
}

/// The new contents of a put.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WirePut {
    /// The bytes or their blob reference.
    pub value: StoredValue,
    /// Expiry in Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<u64>,
    /// The listing the item appears in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<Listed>,
}

/// [`Condition`] on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WireCondition {
    /// No precondition.
    Always,
    /// Absent or expired.
    Absent,
    /// Live at exactly this version.
    Version(u64),
}

impl From<Condition> for WireCondition {
    fn from(condition: Condition) -> Self {
        match condition {
            Condition::Always => WireCondition::Always,
            Condition::Absent => WireCondition::Absent,
            Condition::Version(v) => WireCondition::Version(v),
        }
    }
}

impl From<WireCondition> for Condition {
    fn from(condition: WireCondition) -> Self {
        match condition {
            WireCondition::Always => Condition::Always,
            WireCondition::Absent => Condition::Absent,
            WireCondition::Version(v) => Condition::Version(v),
        }
    }
}

/// A stored row (live or not).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// Item key.
    pub key: String,
    /// Version, 1 on creation.
    pub version: u64,
    /// Bytes or blob reference.
    pub value: StoredValue,
    /// Expiry in Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<u64>,
    /// The listing the row appears in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<Listed>,
}

impl Row {
    /// Whether the row reads as present at `now_ms`.
    pub fn is_live(&self, now_ms: u64) -> bool {
        is_live(self.expires_at_ms, now_ms)
    }
}

/// The answer to [`StoreRequest::Get`]: rows in request order, `None` when absent or expired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GetResponse {
    /// One entry per requested key.
    pub items: Vec<Option<Row>>,
}

/// The answer to [`StoreRequest::List`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListResponse {
    /// Live keys with the prefix, sorted.
    pub keys: Vec<String>,
}

/// The body of a refused commit (HTTP 409).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConditionFailedResponse {
    /// First write whose condition did not hold.
    pub index: usize,
}

/// What a commit does to one row once every condition held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mutation {
    /// Insert or replace the row.
    Upsert(Row),
    /// Remove the row.
    Delete(String),
}

/// Decides a commit: `current[i]` is the stored row for `writes[i].key` (live or
/// not). Returns the mutations to apply, or the index of the first failing
/// condition, in which case nothing may be written.
pub fn plan_commit(
    writes: Vec<WireWrite>,
    current: &[Option<Row>],
    now_ms: u64,
) -> Result<Vec<Mutation>, usize> {
    let live = |i: usize| {
        current
            .get(i)
            .and_then(Option::as_ref)
            .filter(|r| r.is_live(now_ms))
    };
    for (index, write) in writes.iter().enumerate() {
        let holds = match write.condition {
            WireCondition::Always => true,
            WireCondition::Absent => live(index).is_none(),
            WireCondition::Version(v) => live(index).is_some_and(|r| r.version == v),
        };
        if !holds {
            return Err(index);
        }
    }
    let mut mutations = Vec::with_capacity(writes.len());
    for (index, write) in writes.into_iter().enumerate() {
        if let Some(put) = write.put {
            let version = live(index).map_or(1, |r| r.version + 1);
            mutations.push(Mutation::Upsert(Row {
                key: write.key,
                version,
                value: put.value,
                expires_at_ms: put.expires_at_ms,
                index: put.index,
            }));
        } else if write.delete {
            mutations.push(Mutation::Delete(write.key));
        }
    }
    Ok(mutations)
}

/// The collectable blobs a batch's puts reference: when the batch is refused,
/// nothing references them any more.
pub fn batch_blobs(writes: &[WireWrite]) -> Vec<String> {
    let mut keys: Vec<String> = writes
        .iter()
        .filter_map(|w| match &w.put {
            Some(WirePut {
                value: StoredValue::Blob(reference),
                ..
            }) if reference.is_collectable() => Some(reference.kv_key.clone()),
            _ => None,
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// What a planned commit does to blob references: `retired` are the
/// collectable blobs of the rows it replaces or deletes (live or expired) that
/// none of its new rows references; `adopted` are the collectable blobs its
/// new rows reference. `current[i]` is the stored row for the batch's `i`th
/// key, as given to [`plan_commit`].
pub fn blob_changes(current: &[Option<Row>], mutations: &[Mutation]) -> BlobChanges {
    let mut adopted = Vec::new();
    let mut touched = std::collections::HashSet::new();
    for mutation in mutations {
        match mutation {
            Mutation::Upsert(row) => {
                touched.insert(row.key.as_str());
                if let StoredValue::Blob(reference) = &row.value
                    && reference.is_collectable()
                {
                    adopted.push(reference.kv_key.clone());
                }
            }
            Mutation::Delete(key) => {
                touched.insert(key.as_str());
            }
        }
    }
    let mut retired: Vec<String> = current
        .iter()
        .flatten()
        .filter(|row| touched.contains(row.key.as_str()))
        .filter_map(|row| match &row.value {
            StoredValue::Blob(reference) if reference.is_collectable() => {
                Some(reference.kv_key.clone())
            }
            _ => None,
        })
        .filter(|key| !adopted.contains(key))
        .collect();
    retired.sort();
    retired.dedup();
    adopted.sort();
    adopted.dedup();
    BlobChanges { retired, adopted }
}

/// See [`blob_changes`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlobChanges {
    /// Blobs no longer referenced by the rows the commit wrote or deleted.
    pub retired: Vec<String>,
    /// Blobs the commit's new rows reference.
    pub adopted: Vec<String>,
}

mod base64_bytes {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(bytes))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        STANDARD
            .decode(text.as_bytes())
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests;

/// Where a put item is listed, on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listed {
    /// The scope.
    pub scope: String,
    /// Highest first.
    pub rank: u64,
}

/// One change to a scope's listing, as the partition's object sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListingChange {
    /// The partition's sequence number (0 until the outbox numbers it).
    #[serde(default)]
    pub seq: u64,
    /// The scope whose listing changes.
    pub scope: String,
    /// The item's key in its partition.
    pub key: String,
    /// Its new rank, or `None`: the item leaves the listing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u64>,
    /// The item's expiry (Unix ms): the entry stops listing it then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<u64>,
}

/// One listed item, on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireHit {
    /// Rank when last written.
    pub rank: u64,
    /// The item's partition.
    pub partition: String,
    /// The item's key.
    pub key: String,
}

/// The answer to a listing request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListIndexResponse {
    /// Up to the requested number of hits, in listing order.
    pub hits: Vec<WireHit>,
}
