//! The batch as sent: one [`Op`] per write, and the [`Plan`] that says how a put is stored.

use handoff_core::store::is_live;
use handoff_core::{Condition, StoreError, Write, WriteOp};

use crate::codec::{self, Body, Packed};
use crate::keys::{
    self, MAX_INDEX_PK_BYTES, MAX_INDEX_SK_BYTES, MAX_PK_BYTES, MAX_SK_BYTES, encode,
};
use crate::{DynamoStore, Hint};

use super::{ACTION_OVERHEAD, MAX_TRANSACTION_ITEMS, TRANSACTION_INLINE_BUDGET};

/// One write of the batch, as sent.
#[derive(Debug)]
pub(super) struct Op {
    /// Position in the caller's batch.
    pub(super) index: usize,
    pub(super) key: String,
    pub(super) sk: String,
    pub(super) condition: Condition,
    pub(super) kind: Kind,
}

#[derive(Debug)]
pub(super) enum Kind {
    Put {
        plan: Plan,
        /// For `Condition::Always` only: whether this attempt assumes a live or absent item
        /// (an `Update` that counts the version on from the live one, or creates it at 1) or
        /// an absent/expired one (a `Put` at version 1 conditioned on absence or expiry). A
        /// wrong guess (an `Update` meeting an expired item, a `Put` a live one) fails its
        /// condition and flips.
        live: bool,
    },
    Delete,
    Check,
}

/// How one put is stored.
#[derive(Debug)]
pub(super) struct Plan {
    /// Unique per put: names the chunks and lets a retried request recognise itself.
    pub(super) w: String,
    pub(super) packed: Packed,
    pub(super) exp: Option<u64>,
    /// `Some((count, digest))` once the value goes to chunks.
    pub(super) chunked: Option<(u32, Vec<u8>)>,
    /// `(ls, lo)` when the put lists the item ([`keys::scope`], [`keys::order`]); `None`
    /// takes it out of any listing. On the head only, never on chunks.
    pub(super) listing: Option<(String, String)>,
}

impl Plan {
    fn inline_len(&self) -> usize {
        if self.chunked.is_some() {
            0
        } else {
            self.packed.bytes.len()
        }
    }

    fn chunk(&mut self, chunk_bytes: usize) {
        let count = self.packed.bytes.len().div_ceil(chunk_bytes).max(1);
        let count = u32::try_from(count).unwrap_or(u32::MAX);
        self.chunked = Some((count, codec::digest(&self.packed.bytes)));
    }

    pub(super) fn body(&self) -> Body {
        match &self.chunked {
            Some((count, digest)) => Body::Chunked {
                count: *count,
                digest: digest.clone(),
            },
            None => Body::Inline(self.packed.bytes.clone()),
        }
    }

    pub(super) fn chunk_set(&self) -> Option<(String, u32)> {
        self.chunked
            .as_ref()
            .map(|(count, _)| (self.w.clone(), *count))
    }
}

impl Op {
    pub(super) fn is_unconditional_put(&self) -> bool {
        matches!(self.kind, Kind::Put { .. }) && self.condition == Condition::Always
    }

    /// Whether a single-item call (no transaction) has the same semantics for this write.
    /// A `Delete` at a version goes through a transaction, whose idempotency token makes an
    /// SDK retry of an applied delete succeed instead of failing its condition.
    pub(super) fn single_call_ok(&self) -> bool {
        !(matches!(self.kind, Kind::Delete) && matches!(self.condition, Condition::Version(_)))
    }
}

impl DynamoStore {
    /// Validates the batch and decides how each value is stored.
    pub(super) fn plan(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(String, Vec<Op>), StoreError> {
        let pk = encode(partition);
        if pk.len() > MAX_PK_BYTES {
            return Err(StoreError::TooLarge(format!(
                "partition name of {} bytes (DynamoDB allows {} in a partition key)",
                partition.len(),
                MAX_PK_BYTES - 1
            )));
        }
        let mut ops = Vec::with_capacity(writes.len());
        for (index, write) in writes.into_iter().enumerate() {
            let sk = encode(&write.key);
            if sk.len() > MAX_SK_BYTES {
                return Err(StoreError::TooLarge(format!(
                    "key of {} bytes at batch index {index} (DynamoDB allows {} in a sort key)",
                    write.key.len(),
                    MAX_SK_BYTES - 1
                )));
            }
            let kind = match write.op {
                // Holds whatever the item is: nothing to send.
                WriteOp::Check if write.condition == Condition::Always => continue,
                WriteOp::Check => Kind::Check,
                WriteOp::Delete => Kind::Delete,
                WriteOp::Put {
                    value,
                    expires_at_ms,
                } => {
                    let live = match self.hint(partition, &write.key) {
                        Some(Hint::Present { exp, .. }) => is_live(exp, now_ms),
                        Some(Hint::Absent) => false,
                        None => true,
                    };
                    let listing = match &write.index {
                        Some(entry) => {
                            let ls = keys::scope(&entry.scope);
                            let lo = keys::order(entry.rank, partition, &write.key);
                            if ls.len() > MAX_INDEX_PK_BYTES {
                                return Err(StoreError::TooLarge(format!(
                                    "index scope of {} bytes at batch index {index} (the `listing` index allows {} in its partition key)",
                                    entry.scope.len(),
                                    MAX_INDEX_PK_BYTES - 1
                                )));
                            }
                            if lo.len() > MAX_INDEX_SK_BYTES {
                                return Err(StoreError::TooLarge(format!(
                                    "listed item at batch index {index}: its `listing` sort key would be {} bytes (22 + partition + key, +1 per U+0000 or U+0001), DynamoDB allows {MAX_INDEX_SK_BYTES}",
                                    lo.len()
                                )));
                            }
                            Some((ls, lo))
                        }
                        None => None,
                    };
                    let mut plan = Plan {
                        w: codec::unique_id(),
                        packed: codec::pack(value, self.options.compress_min_bytes),
                        exp: expires_at_ms,
                        chunked: None,
                        listing,
                    };
                    if plan.packed.bytes.len() > self.options.inline_max_bytes {
                        plan.chunk(self.options.chunk_bytes);
                    }
                    Kind::Put { plan, live }
                }
            };
            ops.push(Op {
                index,
                key: write.key,
                sk,
                condition: write.condition,
                kind,
            });
        }
        if ops.len() > MAX_TRANSACTION_ITEMS {
            return Err(StoreError::TooLarge(format!(
                "{} conditional writes in one batch (a DynamoDB transaction holds {MAX_TRANSACTION_ITEMS})",
                ops.len()
            )));
        }
        if ops.len() > 1 {
            // Keep the transaction under its 4 MB request limit: move the largest inline values
            // to chunks until the rest fits.
            let size = |ops: &[Op]| -> usize {
                ops.iter()
                    .map(|op| {
                        let value = match &op.kind {
                            Kind::Put { plan, .. } => plan.inline_len(),
                            _ => 0,
                        };
                        pk.len() + op.sk.len() + ACTION_OVERHEAD + value
                    })
                    .sum()
            };
            while size(&ops) > TRANSACTION_INLINE_BUDGET {
                let largest = ops
                    .iter_mut()
                    .filter_map(|op| match &mut op.kind {
                        Kind::Put { plan, .. } if plan.inline_len() > 0 => Some(plan),
                        _ => None,
                    })
                    .max_by_key(|plan| plan.inline_len());
                match largest {
                    Some(plan) => plan.chunk(self.options.chunk_bytes),
                    None => break,
                }
            }
        }
        Ok((pk, ops))
    }
}
