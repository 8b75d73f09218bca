//! Following a run from any instance: the live journal a running run writes (its readers
//! are in `follow`).
//!
//! While a run runs, its events are appended to the store every
//! [`EngineConfig::live_flush_ms`](super::EngineConfig::live_flush_ms) (default 250 ms)
//! as one `live#…` item holding what was emitted since the last one, so a run that
//! streams costs at most one small write per interval and a run that ends sooner writes
//! none (its run record holds the whole log). A reader joins with the id of the last
//! frame it has: it gets the join prelude and the rest of the journal, then polls for
//! new batches at the same interval until the run record is final, whose full log
//! supplies the remainder and the terminal event.

use super::Inner;
use crate::context::SharedLog;
use crate::records::{LiveBatch, live_key};
use crate::store::{Condition, StoreError, Write};

/// How long journal batches are kept: long enough for any run and its reconnects; a
/// finished run is replayed from its record.
const JOURNAL_TTL_MS: u64 = 24 * 60 * 60 * 1000;

/// Appends the run's new events to its journal every `live_flush_ms`; never resolves.
pub(crate) async fn journal(
    inner: &Inner,
    partition: &str,
    run_id: &str,
    started_at_ms: u64,
    log: SharedLog,
) {
    let every = inner.config.live_flush_ms;
    if every == 0 {
        return futures::future::pending().await;
    }
    let mut flushed = 0usize;
    let mut batch = 0u32;
    // A batch whose write failed is retried as it was: a write that timed out may have
    // landed, and then the retry's `Absent` condition fails on the very same content.
    let mut pending: Option<(Vec<u8>, usize)> = None;
    loop {
        inner.runtime.sleep.sleep(every).await;
        let (bytes, count) = match pending.take() {
            Some(retry) => retry,
            None => {
                let log = log.lock();
                if log.len() <= flushed {
                    continue;
                }
                let bytes = LiveBatch::encode_from(flushed as u64 + 1, &log[flushed..]);
                (bytes, log.len() - flushed)
            }
        };
        let now = inner.runtime.now_ms();
        let key = live_key(run_id, started_at_ms, batch);
        let write = Write::put(
            key,
            Condition::Absent,
            bytes.clone(),
            Some(now + JOURNAL_TTL_MS),
        );
        match inner.store.commit(partition, vec![write], now).await {
            Ok(()) | Err(StoreError::ConditionFailed { .. }) => {
                flushed += count;
                batch += 1;
            }
            Err(error) => {
                tracing::warn!(%error, run_id, "live journal write failed; retrying");
                pending = Some((bytes, count));
            }
        }
    }
}
