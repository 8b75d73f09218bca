//! Sending the batch until it commits: what an attempt found, and trying again with backoff.

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::config::AsyncSleep;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use handoff_core::StoreError;

use crate::DynamoStore;
use crate::codec;
use crate::errors::map_sdk;

use super::plan::{Kind, Op, Plan};
use super::{MAX_BACKOFFS, MAX_GUESSES};

/// What one attempt found.
pub(super) enum Outcome {
    Done,
    /// Positions (into the ops) whose condition failed.
    Failed(Vec<usize>),
    /// Cancelled by a concurrent transaction or throttled (nothing applied): try again.
    Conflict(String),
    /// An earlier attempt with the same idempotency token is still running: try again with
    /// the same token, which reports that attempt's success instead of applying it twice.
    InProgress(String),
}

impl DynamoStore {
    /// Sends the batch until it commits or a condition genuinely fails.
    pub(super) async fn apply(
        &self,
        pk: &str,
        ops: &mut [Op],
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let mut guesses = 0;
        let mut conflicts = 0;
        // One token per distinct request: kept while an attempt may still apply, renewed once
        // the request changes or was definitely not applied.
        let mut token = codec::unique_id();
        loop {
            let outcome = if ops.len() == 1 && ops[0].single_call_ok() {
                self.single(pk, &ops[0], now_ms).await?
            } else {
                self.transact(pk, ops, now_ms, &token).await?
            };
            let in_progress = matches!(outcome, Outcome::InProgress(_));
            match outcome {
                Outcome::Done => return Ok(()),
                Outcome::Failed(positions) => {
                    // An unconditional put cannot fail: its failure only means the guess about
                    // the item's state was wrong. Any other failure fails the batch.
                    if let Some(index) = positions
                        .iter()
                        .filter(|&&p| !ops[p].is_unconditional_put())
                        .map(|&p| ops[p].index)
                        .min()
                    {
                        return Err(StoreError::ConditionFailed { index });
                    }
                    guesses += 1;
                    if guesses > MAX_GUESSES {
                        return Err(StoreError::Unavailable(format!(
                            "unconditional put kept racing with creations and deletions ({MAX_GUESSES} attempts)"
                        )));
                    }
                    for p in positions {
                        if let Kind::Put { live, .. } = &mut ops[p].kind {
                            *live = !*live;
                        }
                    }
                    token = codec::unique_id();
                }
                Outcome::Conflict(reason) | Outcome::InProgress(reason) => {
                    if !in_progress {
                        token = codec::unique_id();
                    }
                    conflicts += 1;
                    if conflicts > MAX_BACKOFFS {
                        return Err(StoreError::Unavailable(reason));
                    }
                    self.backoff(conflicts).await;
                }
            }
        }
    }

    /// Sleeps before attempt `n + 1`: 20 ms doubling, capped at 1 s, with jitter.
    pub(crate) async fn backoff(&self, n: u32) {
        let base = 20u64.saturating_mul(1 << n.min(6)).min(1_000);
        let jitter = codec::unique_id()
            .get(..4)
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .unwrap_or(0)
            % (base / 2 + 1);
        sleep(&self.client, Duration::from_millis(base / 2 + jitter)).await;
    }
}

/// Sleeps with the client's sleep implementation, or tokio's when the client has none (a
/// client built from `Config::builder()` gets its default only inside the SDK).
pub(crate) async fn sleep(client: &aws_sdk_dynamodb::Client, duration: Duration) {
    match client.config().sleep_impl() {
        Some(sleep) => sleep.sleep(duration).await,
        None => tokio::time::sleep(duration).await,
    }
}

/// A write that collided with a transaction in flight on the same item is tried again; any
/// other error is mapped.
pub(super) fn conflict_or<E>(
    op: &str,
    err: SdkError<E, HttpResponse>,
) -> Result<Outcome, StoreError>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    match err.code() {
        Some(code @ "TransactionConflictException") => {
            Ok(Outcome::Conflict(format!("{op}: {code}")))
        }
        Some(code @ "TransactionInProgressException") => {
            Ok(Outcome::InProgress(format!("{op}: {code}")))
        }
        _ => Err(map_sdk(op, err)),
    }
}

/// A failed single put whose current item carries this put's write id was applied by an
/// earlier attempt of the same request (the SDK retried after losing the response).
pub(super) fn self_applied(
    current: Option<&HashMap<String, AttributeValue>>,
    plan: &Plan,
) -> Outcome {
    if current.and_then(codec::w_of) == Some(plan.w.as_str()) {
        Outcome::Done
    } else {
        Outcome::Failed(vec![0])
    }
}
