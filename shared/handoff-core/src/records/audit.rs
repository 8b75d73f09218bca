//! The approval audit trail: per thread, an append-only chain of entries, one per applied
//! answer and per attempt at an effect under an answer, each carrying the hash of the one
//! before it.
//!
//! Entries live in the thread's partition (so each is written in the same commit as the
//! answer or effect record it describes) under [`audit_entry_key`], with the chain's head
//! (its last sequence number and hash) under [`AUDIT_HEAD_KEY`]. They are kept for
//! [`AUDIT_RETENTION_MS`] (a century: in effect never) and survive the thread's deletion
//! and expiry: a new thread on the same id continues the chain. Each entry is listed in
//! its tenant's [`audit_scope`] by time; one thread's entries need no listing of their
//! own: the head names the last sequence number and the keys follow from it.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Key of the chain's head.
pub const AUDIT_HEAD_KEY: &str = "audit";

/// How long the trail is kept: a century, in effect for ever on a durable store. Finite on
/// purpose: a store's items without an expiry are an application's own data, which a
/// budgeted memory store never drops, so entries stored without one would pin every
/// answered thread in memory (its partition could never be evicted whole).
pub const AUDIT_RETENTION_MS: u64 = 100 * 365 * 24 * 60 * 60 * 1000;

/// Prefix shared by the head and every entry: what deletion keeps.
pub const AUDIT_PREFIX: &str = "audit";

/// The hash the first entry of a chain links to.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Key of entry `seq` (zero-padded so keys sort in chain order).
pub fn audit_entry_key(seq: u64) -> String {
    format!("audit#{seq:020}")
}

/// Whether `key` belongs to the audit trail (kept when the thread goes).
pub fn is_audit_key(key: &str) -> bool {
    key == AUDIT_HEAD_KEY || key.starts_with("audit#")
}

/// The listing of a tenant's audit entries, by time.
pub fn audit_scope(tenant: &str) -> String {
    ["audit\u{1f}", tenant].concat()
}

/// The chain's head: the last entry's sequence number and hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditHead {
    /// The last entry's `seq` (the first is 1).
    pub seq: u64,
    /// The last entry's `hash`.
    pub hash: String,
}

/// What an entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditKind {
    /// An answer to an interrupt, applied by a run.
    Answer,
    /// An effect under an answer: an attempt starting (written with the record that marks
    /// it started, before the call, so a call left in doubt is on the trail too), or a
    /// replay of its recorded result.
    Effect,
}

/// One entry, as stored and as served by `GET /audit` (`time` as ISO-8601 there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Position in the thread's chain, from 1.
    pub seq: u64,
    /// When (Unix ms).
    pub time_ms: u64,
    /// The thread.
    pub thread_id: String,
    /// Answer or effect.
    pub kind: AuditKind,
    /// Who answered (the subject of the run's principal).
    pub principal: String,
    /// The roles the answer relied on: those the principal holds that the interrupt's
    /// approval policy requires.
    pub roles: Vec<String>,
    /// The interrupt answered (for an effect: the one whose answer it executes, if any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupt_id: Option<String>,
    /// `approved`, `denied`, `resolved` or `cancelled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// SHA-256 (hex) of the answer's payload, edits included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_hash: Option<String>,
    /// The run that applied the answer or executed the effect.
    pub run_id: String,
    /// The effect's key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect_key: Option<String>,
    /// For an effect: whether the run found its result recorded (a replay) instead of
    /// executing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replayed: Option<bool>,
    /// For an effect's attempt: the idempotency key the downstream was handed (what to
    /// ask the downstream about when the attempt's outcome is in doubt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// For an effect's attempt: which one (1 for the first call, more when a call left in
    /// doubt is driven again under the same idempotency key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// The previous entry's hash ([`GENESIS_HASH`] for the first).
    pub prev_hash: String,
    /// SHA-256 (hex) of this entry without `hash`.
    #[serde(default)]
    pub hash: String,
}

impl AuditEntry {
    /// The hash of this entry's contents (everything but `hash`), in its stored form.
    pub fn compute_hash(&self) -> String {
        let unhashed = AuditEntry {
            hash: String::new(),
            ..self.clone()
        };
        let bytes = serde_json::to_vec(&unhashed).unwrap_or_default();
        hex::encode(Sha256::digest(&bytes))
    }

    /// Links this entry after `head` (or first in its chain) and seals it.
    pub fn seal_after(mut self, head: Option<&AuditHead>) -> Self {
        self.seq = head.map_or(1, |h| h.seq + 1);
        self.prev_hash = head.map_or_else(|| GENESIS_HASH.to_owned(), |h| h.hash.clone());
        self.hash = self.compute_hash();
        self
    }
}

/// SHA-256 (hex) of a JSON value's serialization: the payload hash of an answer.
pub fn payload_hash(value: &serde_json::Value) -> String {
    hex::encode(Sha256::digest(value.to_string().as_bytes()))
}
