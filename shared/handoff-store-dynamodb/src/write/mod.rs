//! `commit`: conditional writes as one `TransactWriteItems` (or one single-item call), large
//! values written as chunks first.
//!
//! The module is split along the commit's stages: [`plan`] validates the batch and decides how
//! each value is stored, [`expr`] builds the items and expressions, [`chunks`] writes and
//! deletes chunk sets with `BatchWriteItem`, [`single`] and [`transact`] send one attempt, and
//! [`retry`] tries again until the batch commits or a condition genuinely fails.

mod chunks;
mod expr;
mod plan;
mod retry;
mod single;
mod transact;

use handoff_core::{StoreError, Write};

use crate::{DynamoStore, Hint};

use plan::Kind;

pub(crate) use retry::sleep;

/// DynamoDB's limit on actions in one `TransactWriteItems`.
pub(crate) const MAX_TRANSACTION_ITEMS: usize = 100;
/// Inline bytes one transaction may carry before its largest values move to chunks (the
/// request limit is 4 MB, keys and attribute names included).
const TRANSACTION_INLINE_BUDGET: usize = 3 * 1024 * 1024;
/// Rough per-action overhead of a transaction item besides its key and value.
const ACTION_OVERHEAD: usize = 256;
/// DynamoDB's limit on requests in one `BatchWriteItem`.
const BATCH_WRITE_ITEMS: usize = 25;
/// Attempts after wrong guesses for unconditional puts (see [`Kind::Put::live`]).
const MAX_GUESSES: usize = 8;
/// Attempts after transaction conflicts or unprocessed batch items.
pub(crate) const MAX_BACKOFFS: u32 = 8;

impl DynamoStore {
    pub(crate) async fn commit_impl(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let (pk, mut ops) = self.plan(partition, writes, now_ms)?;
        if ops.is_empty() {
            return Ok(());
        }
        // Chunk sets this process saw committed under the keys about to be replaced: garbage
        // once this commit succeeds. Taken before sending, so it never names chunks committed
        // after this commit.
        let replaced: Vec<(String, u32)> = ops
            .iter()
            .filter(|op| !matches!(op.kind, Kind::Check))
            .filter_map(|op| match self.hint(partition, &op.key) {
                Some(Hint::Present {
                    chunks: Some(chunks),
                    ..
                }) => Some(chunks),
                _ => None,
            })
            .collect();
        let written: Vec<(String, u32)> = ops
            .iter()
            .filter_map(|op| match &op.kind {
                Kind::Put { plan, .. } => plan.chunk_set(),
                _ => None,
            })
            .collect();

        self.write_chunks(&pk, &ops, now_ms).await?;
        let result = self.apply(&pk, &mut ops, now_ms).await;
        match &result {
            Ok(()) => {
                self.set_hints(
                    partition,
                    ops.iter().filter_map(|op| match &op.kind {
                        Kind::Put { plan, .. } => Some((
                            op.key.clone(),
                            Hint::Present {
                                exp: plan.exp,
                                chunks: plan.chunk_set(),
                            },
                        )),
                        Kind::Delete => Some((op.key.clone(), Hint::Absent)),
                        Kind::Check => None,
                    }),
                );
                self.delete_chunks(&pk, replaced, "replaced").await;
            }
            // The batch may have been applied: its chunks may be referenced.
            Err(StoreError::Unavailable(_)) => {}
            // Nothing was written: the chunks written for it are garbage.
            Err(_) => self.delete_chunks(&pk, written, "unused").await,
        }
        result
    }
}
