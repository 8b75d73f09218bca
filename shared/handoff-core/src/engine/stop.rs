//! Stopping a run on purpose, from any instance.
//!
//! A stop request is a `stop#{runId}` item in the thread's partition. The instance that
//! runs the run learns of it at once when the request reached that same instance (the
//! [`StopBoard`]), otherwise at its next poll of the item (every
//! [`EngineConfig::stop_poll_ms`](super::EngineConfig::stop_poll_ms)). The run then ends
//! like a run at its deadline, but announced as `RUN_FINISHED{outcome: cancelled}`.
//! A dropped connection is not a stop: the run goes on and commits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::channel::oneshot;
use futures::future::{Either, select};
use serde::Serialize;

use super::Inner;
use crate::access::Access;
use crate::error::CoreError;
use crate::principal::Principal;
use crate::records::{self, RunRecord, RunStatus, StopRequest, THREAD_KEY, ThreadRecord};
use crate::store::{Condition, Write};

/// What a stop request found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum StopOutcome {
    /// The run is running; it ends `cancelled` at its next checkpoint.
    Stopping,
    /// The run had already ended with this status; nothing was written.
    Finished(RunStatus),
}

/// The runs this process drives, by partition and run id, so that a stop request that
/// lands on the same instance reaches its run without waiting for a poll.
#[derive(Debug, Default)]
pub(crate) struct StopBoard {
    runs: Mutex<HashMap<String, oneshot::Sender<()>>>,
}

/// A run's place on the [`StopBoard`]; leaves it when dropped.
pub(crate) struct StopTicket {
    board: Arc<StopBoard>,
    key: String,
    signal: Option<oneshot::Receiver<()>>,
}

impl StopBoard {
    fn key(partition: &str, run_id: &str) -> String {
        [partition, "\u{1f}", run_id].concat()
    }

    pub(crate) fn register(board: &Arc<StopBoard>, partition: &str, run_id: &str) -> StopTicket {
        let key = Self::key(partition, run_id);
        let (tx, rx) = oneshot::channel();
        board.lock().insert(key.clone(), tx);
        StopTicket {
            board: board.clone(),
            key,
            signal: Some(rx),
        }
    }

    fn signal(&self, partition: &str, run_id: &str) {
        if let Some(tx) = self.lock().remove(&Self::key(partition, run_id)) {
            let _ = tx.send(());
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<()>>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for StopTicket {
    fn drop(&mut self) {
        self.board.lock().remove(&self.key);
    }
}

/// Records a stop request for `run_id` and tells this instance's run at once.
pub(crate) async fn request(
    inner: &Inner,
    principal: &Principal,
    thread_id: &str,
    run_id: &str,
) -> Result<StopOutcome, CoreError> {
    let partition = principal.partition(thread_id)?;
    // The registry key joins partition and run id with \x1f: neither may hold one.
    crate::principal::check_id("runId", run_id)?;
    let now = inner.runtime.now_ms();
    let run_key = records::run_key(run_id);
    let items = inner
        .store
        .get(&partition, &[THREAD_KEY, &run_key], now)
        .await?;
    let [thread, run] = <[_; 2]>::try_from(items)
        .map_err(|_| CoreError::CorruptRecord("store returned a short read".to_owned()))?;
    let Some(thread) = thread else {
        return Err(CoreError::ThreadNotFound);
    };
    let thread: ThreadRecord = records::decode(&thread)?;
    let run: Option<RunRecord> = run.as_ref().map(records::decode).transpose()?;
    // Whoever asked for the run may stop it; anyone else needs to be allowed to run on
    // the thread (and a caller who may not see it learns nothing about the run).
    if !run.as_ref().is_some_and(|r| r.made_by(principal)) {
        inner.authorize(principal, Some(&thread), Access::Read)?;
        inner.authorize(principal, Some(&thread), Access::Run)?;
    }
    let run = run.ok_or(CoreError::RunNotFound)?;
    if run.status.is_final() {
        return Ok(StopOutcome::Finished(run.status));
    }
    let stop = StopRequest {
        run_started_at_ms: run.started_at_ms,
        by: principal.subject.clone(),
        at_ms: now,
    };
    let write = Write::put(
        records::stop_key(run_id),
        Condition::Always,
        records::encode(&stop),
        Some(now + inner.config.run_ttl_ms),
    );
    inner.store.commit(&partition, vec![write], now).await?;
    inner.stops.signal(&partition, run_id);
    tracing::info!(run_id, "stop requested");
    Ok(StopOutcome::Stopping)
}

/// Resolves once a stop was requested for the run holding `ticket`: signalled on this
/// instance, or found by polling the store.
pub(crate) async fn requested(
    inner: &Inner,
    partition: &str,
    run_id: &str,
    run_started_at_ms: u64,
    ticket: &mut StopTicket,
) {
    let signal = ticket.signal.take();
    let poll = Box::pin(poll(inner, partition, run_id, run_started_at_ms));
    match signal {
        // A closed channel is a board entry replaced or removed: nothing to stop for.
        Some(signal) => match select(signal, poll).await {
            Either::Left((Ok(()), _)) => {}
            Either::Left((Err(_), poll)) => poll.await,
            Either::Right(((), _)) => {}
        },
        None => poll.await,
    }
}

async fn poll(inner: &Inner, partition: &str, run_id: &str, run_started_at_ms: u64) {
    let every = inner.config.stop_poll_ms;
    if every == 0 {
        return futures::future::pending().await;
    }
    let key = records::stop_key(run_id);
    loop {
        inner.runtime.sleep.sleep(every).await;
        let now = inner.runtime.now_ms();
        match inner.store.get_one(partition, &key, now).await {
            Ok(Some(item)) => match records::decode::<StopRequest>(&item) {
                Ok(stop) if stop.run_started_at_ms == run_started_at_ms => return,
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "unreadable stop request ignored"),
            },
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, "stop poll failed; polling on"),
        }
    }
}
