//! Double-texting: what a new message does while a run is running on its thread.
//!
//! - [`DoubleText::Reject`] (the default): 409 `THREAD_BUSY`, as ever.
//! - [`DoubleText::Interrupt`]: the running run is asked to stop at its next checkpoint
//!   (it ends `cancelled`, as with the stop route), then the new one starts.
//! - [`DoubleText::Enqueue`]: the new run starts when the running one finishes.
//!
//! Under both, the new run's stream starts at once and waits (the host sends SSE
//! keep-alives while it is quiet), bounded by the host's deadline (less the engine's
//! margin) or the lease length; past it, the stream ends with `RUN_ERROR` `THREAD_BUSY`.
//! The new message cannot contain the running run's reply, so it is merged after what
//! that run committed instead of being refused as stale (`THREAD_CHANGED`).

use std::sync::Arc;

use agui_protocol::Event;
use agui_protocol::RunAgentInput;
use agui_protocol::event::RunError;
use futures::StreamExt;

use super::{Inner, RunOptions, SharedRunStream, claim, execute, stop};
use crate::agent::DoubleText;
use crate::error::CoreError;

/// How often a waiting run tries its claim again.
const RETRY_MS: u64 = 250;

/// The stream of a run that waits for the running run `busy` to end first.
pub(crate) fn wait_then_run(
    inner: Arc<Inner>,
    input: RunAgentInput,
    options: RunOptions,
    busy: String,
    policy: DoubleText,
) -> SharedRunStream {
    let run = async move {
        let now = inner.runtime.now_ms();
        let until = options
            .deadline_ms
            .map(|d| d.saturating_sub(inner.config.deadline_margin_ms))
            .unwrap_or(now + inner.config.lease_ms);
        let mut stopping = String::new();
        let mut busy = busy;
        loop {
            if policy == DoubleText::Interrupt && stopping != busy {
                stopping = busy.clone();
                let principal = &options.principal;
                if let Err(error) =
                    stop::request(&inner, principal, input.thread_id.as_str(), &busy).await
                {
                    tracing::warn!(%error, run_id = %busy, "double-text: could not stop the running run");
                }
            }
            inner.runtime.sleep.sleep(RETRY_MS).await;
            match claim::claim(&inner, &input, &options, true).await {
                Err(CoreError::ThreadBusy { run_id, .. })
                    if inner.runtime.now_ms() < until && !run_id.is_empty() =>
                {
                    busy = run_id;
                }
                claimed => return stream_of(inner, input, options, claimed),
            }
        }
    };
    futures::stream::once(run).flatten().boxed()
}

/// The stream of a request claimed (once) after the thread's previous run ended.
pub(crate) async fn claim_after(
    inner: Arc<Inner>,
    input: RunAgentInput,
    options: RunOptions,
) -> SharedRunStream {
    let claimed = claim::claim(&inner, &input, &options, true).await;
    stream_of(inner, input, options, claimed)
}

fn stream_of(
    inner: Arc<Inner>,
    input: RunAgentInput,
    options: RunOptions,
    claimed: Result<claim::Claim, CoreError>,
) -> SharedRunStream {
    match claimed {
        Ok(claim::Claim::Run(claimed)) => execute::spawn_run(inner, input, options, claimed),
        Ok(claim::Claim::Replay(events)) => {
            futures::stream::iter(events.into_iter().map(Arc::new)).boxed()
        }
        // A claim after a run ended never asks for that run's re-drive.
        Ok(claim::Claim::Abandoned(run_id)) => {
            let error = CoreError::ThreadBusy {
                run_id: run_id.to_string(),
                retry_after_ms: inner.config.busy_retry_after_ms,
            };
            let event = Event::from(RunError::from(&error)).with_timestamp(inner.runtime.now_ms());
            futures::stream::iter([Arc::new(event)]).boxed()
        }
        Err(error) => {
            let event = Event::from(RunError::from(&error)).with_timestamp(inner.runtime.now_ms());
            futures::stream::iter([Arc::new(event)]).boxed()
        }
    }
}
