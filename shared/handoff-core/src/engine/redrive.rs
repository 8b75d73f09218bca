//! Finishing a run whose instance died: the request kept with the claim, the listing of
//! runs by lease end, and the re-drive.
//!
//! Every claim writes the run's record with what the run was asked (its input, less the
//! leading messages that were the thread's stored history, and who asked), listed in
//! [`REDRIVE_SCOPE`] by the lease's end. The commit that ends the run rewrites the record
//! without the request and unlisted. So a listed record whose lease has lapsed while its
//! thread still says `running` is a run nobody is finishing: [`redrive_due`] (a host's
//! sweep), the next request on the thread and a client reconnecting to the run each hand it
//! to the claim again, as if its client had retried the same request. The claim re-executes
//! an abandoned run in place; its effects replay from their records and its journaled steps
//! (model answers, [`crate::RunContext::replay_step`]) from theirs, so the re-driven run
//! emits the same events without doing any of it twice.

use std::sync::Arc;

use agui_protocol::{Message, RunAgentInput, RunId};
use futures::StreamExt;

use super::handover::{LEGACY_PREFIX, REDRIVE_SCOPE, hand_off, legacy_key, listing, rank};
use super::{Inner, RunOptions, claim, execute, history};
use crate::error::CoreError;
use crate::records::{
    self, RedriveRequest, RunRecord, RunStatus, THREAD_KEY, ThreadRecord, ThreadStatus,
};
use crate::store::{Condition, IndexHit, Item, Write};

/// What one sweep did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RedriveReport {
    /// Runs re-driven to their end here.
    pub redriven: usize,
    /// Listed runs that turned out alive (their lease renewed) or already ended.
    pub skipped: usize,
    /// Re-drives that failed (logged).
    pub failed: usize,
}

/// Re-drives up to `limit` runs whose lease has lapsed, one after the other, each to its
/// end (on hosts that run work beside responses, their runs are spawned and awaited).
pub(crate) async fn redrive_due(
    inner: &Arc<Inner>,
    limit: usize,
    deadline_ms: Option<u64>,
) -> RedriveReport {
    let mut report = RedriveReport::default();
    let now = inner.runtime.now_ms();
    let hits = match inner
        .store
        .list_index(REDRIVE_SCOPE, None, limit, now)
        .await
    {
        Ok(hits) => hits,
        Err(error) => {
            tracing::warn!(%error, "listing unfinished runs failed");
            report.failed += 1;
            return report;
        }
    };
    // Soonest lease end first: those due lead the listing.
    for hit in hits.iter().take_while(|hit| hit.rank >= rank(now)) {
        match redrive_hit(inner, hit, deadline_ms).await {
            Ok(true) => report.redriven += 1,
            Ok(false) => report.skipped += 1,
            Err(error) => {
                tracing::warn!(%error, partition = %hit.partition, key = %hit.key, "re-drive failed");
                report.failed += 1;
            }
        }
    }
    report
}

async fn redrive_hit(
    inner: &Arc<Inner>,
    hit: &IndexHit,
    deadline_ms: Option<u64>,
) -> Result<bool, CoreError> {
    let listed = [records::RUN_PREFIX, LEGACY_PREFIX];
    let Some(run_id) = listed
        .iter()
        .find_map(|prefix| hit.key.strip_prefix(prefix))
    else {
        return Ok(false);
    };
    let run_id = RunId::from(run_id.to_owned());
    redrive_run(inner, &hit.partition, &run_id, deadline_ms).await
}

/// Re-drives `run_id` of the thread in `partition` to its end if it is abandoned: its
/// thread still running it, its lease lapsed. `Ok(false)`: nothing to do (alive, ended,
/// or superseded; a stale item is removed, a live one re-listed by its renewed lease).
/// `deadline_ms`: when the host ends this invocation, as for any run.
pub(crate) async fn redrive_run(
    inner: &Arc<Inner>,
    partition: &str,
    run_id: &RunId,
    deadline_ms: Option<u64>,
) -> Result<bool, CoreError> {
    let Some((input, mut options)) = abandoned_request(inner, partition, run_id).await? else {
        return Ok(false);
    };
    options.deadline_ms = deadline_ms;
    // Nobody streams a re-drive: at this invocation's end it is handed on again.
    options.hand_off_at_deadline = true;
    tracing::info!(%run_id, "re-driving a run whose instance stopped before its end");
    match claim::claim(inner, &input, &options, false).await? {
        claim::Claim::Run(claimed) => {
            drain(execute::spawn_run(inner.clone(), input, options, claimed)).await;
            Ok(true)
        }
        // Somebody else finished it meanwhile.
        claim::Claim::Replay(_) | claim::Claim::Abandoned(_) => Ok(false),
    }
}

async fn drain(mut events: super::SharedRunStream) {
    while events.next().await.is_some() {}
}

/// The request of `run_id` when the run is abandoned, rebuilt whole.
async fn abandoned_request(
    inner: &Inner,
    partition: &str,
    run_id: &RunId,
) -> Result<Option<(RunAgentInput, RunOptions)>, CoreError> {
    let now = inner.runtime.now_ms();
    let run_key = records::run_key(run_id.as_str());
    let legacy_key = legacy_key(run_id.as_str());
    let keys = [THREAD_KEY, run_key.as_str(), legacy_key.as_str()];
    let [thread, run_item, legacy] =
        <[_; 3]>::try_from(inner.store.get(partition, &keys, now).await?)
            .map_err(|_| CoreError::CorruptRecord("store returned a short read".to_owned()))?;
    let thread: Option<ThreadRecord> = thread.as_ref().map(records::decode).transpose()?;
    let mut run: Option<RunRecord> = run_item.as_ref().map(records::decode).transpose()?;
    let kept_in_record = run.as_ref().is_some_and(|r| r.redrive.is_some());
    if !kept_in_record && legacy.is_none() {
        return Ok(None);
    }
    let lease = thread
        .as_ref()
        .filter(|t| t.status == ThreadStatus::Running)
        .and_then(|t| t.lease.as_ref())
        .filter(|l| l.run_id == *run_id);
    let running = run.as_ref().is_some_and(|r| r.status == RunStatus::Running);
    let (Some(thread), Some(lease), true) = (&thread, lease, running) else {
        // Ended, superseded or erased: nothing to re-drive, and the listing is stale.
        let mut writes: Vec<Write> = legacy
            .iter()
            .map(|item| Write::delete(item.key.clone(), Condition::Version(item.version)))
            .collect();
        if let (Some(item), Some(mut record)) = (&run_item, run.filter(|_| kept_in_record)) {
            record.redrive = None;
            writes.push(Write::put(
                run_key,
                Condition::Version(item.version),
                record.encode(),
                item.expires_at_ms,
            ));
        }
        if !writes.is_empty() {
            let _ = inner.store.commit(partition, writes, now).await;
        }
        return Ok(None);
    };
    if lease.expires_at_ms > now {
        // Alive, its lease renewed since it was listed: listed again by its new end.
        let listed = if kept_in_record { run_item } else { legacy };
        if let Some(item) = listed {
            let moved = relisted(item, lease.expires_at_ms);
            let _ = inner.store.commit(partition, vec![moved], now).await;
        }
        return Ok(None);
    }
    let request = match run.as_mut().and_then(|r| r.redrive.take()) {
        Some(request) => request,
        None => match &legacy {
            Some(item) => records::decode::<RedriveRequest>(item)?,
            None => return Ok(None),
        },
    };
    let mut input = request.input;
    if let Some(n) = request.history_prefix {
        let stored = history::load(inner, partition, thread, thread.pages, now).await?;
        let Some(prefix) = stored.get(..n) else {
            return Err(CoreError::CorruptRecord(format!(
                "run {run_id}: its input's history is no longer stored"
            )));
        };
        let mut messages: Vec<Message> = prefix.to_vec();
        messages.append(&mut input.messages);
        input.messages = messages;
    }
    let options = RunOptions {
        principal: request.principal,
        agent_id: request.agent_id,
        watches: request.watches,
        ..RunOptions::default()
    };
    Ok(Some((input, options)))
}

/// `item` put back as it is, listed by `lease_end`, unless it changed meanwhile.
fn relisted(item: Item, lease_end: u64) -> Write {
    Write::put(
        item.key,
        Condition::Version(item.version),
        item.value,
        item.expires_at_ms,
    )
    .indexed(listing(lease_end))
}

/// The stream of a request that found its thread held by `abandoned`: that run is
/// re-driven to its end here first, then this request is claimed again as one sent while
/// a run ran (merged after what that run committed).
pub(crate) fn then_run(
    inner: Arc<Inner>,
    input: RunAgentInput,
    options: RunOptions,
    abandoned: RunId,
) -> super::SharedRunStream {
    let run = async move {
        let partition = options.principal.partition(input.thread_id.as_str());
        if let Ok(partition) = partition
            && let Err(error) =
                redrive_run(&inner, &partition, &abandoned, options.deadline_ms).await
        {
            tracing::warn!(%error, run_id = %abandoned, "could not re-drive the abandoned run; it is superseded");
        }
        super::double_text::claim_after(inner, input, options).await
    };
    futures::stream::once(run).flatten().boxed()
}

/// [`crate::Engine::start_detached`]: claims the run and hands it over at once.
pub(crate) async fn start_detached(
    inner: &Arc<Inner>,
    input: &RunAgentInput,
    options: &RunOptions,
) -> Result<(), CoreError> {
    match claim::claim(inner, input, options, false).await? {
        claim::Claim::Run(claimed) => {
            let fence = crate::context::fence::Fence::new(claimed.fence);
            hand_off(inner, &claimed.partition, &claimed, &fence).await;
            Ok(())
        }
        // Ran already: its status says how it ended.
        claim::Claim::Replay(_) => Ok(()),
        // The previous run died mid-way: this one waits behind its re-drive, which the same
        // sweep makes first (it is listed sooner).
        claim::Claim::Abandoned(run_id) => Err(CoreError::ThreadBusy {
            run_id: run_id.to_string(),
            retry_after_ms: inner.config.busy_retry_after_ms,
        }),
    }
}

impl super::Engine {
    /// Claims a run and leaves it for a re-drive instead of running it here: for hosts
    /// whose work ends with the response (Lambda), a background run is started by the
    /// next sweep ([`crate::Engine::redrive_due`]). Errors as for [`crate::Engine::start`], before
    /// anything is written.
    pub async fn start_detached(
        &self,
        input: RunAgentInput,
        options: RunOptions,
    ) -> Result<(), CoreError> {
        let inner = self.inner.counting(&options.store_calls);
        super::take_run_limits(&inner, &options.principal).await?;
        start_detached(&inner, &input, &options).await
    }

    /// Finishes up to `limit` runs whose instance stopped before their end (their lease
    /// lapsed while their thread still says `running`), each on this instance, to its end;
    /// a host calls it from its sweep (`HANDOFF_SWEEP_SECS`). Their effects replay from
    /// their records and their journaled steps ([`crate::RunContext::replay_step`]) from theirs,
    /// so nothing they did is done twice. The next request on such a run's thread, and a
    /// client following it ([`crate::Engine::follow_run`]), re-drive it too.
    /// `deadline_ms`: when the host ends this invocation, as for any run.
    pub async fn redrive_due(&self, limit: usize, deadline_ms: Option<u64>) -> RedriveReport {
        redrive_due(&self.inner, limit, deadline_ms).await
    }
}
