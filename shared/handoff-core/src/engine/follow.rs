//! Reconnecting readers of a run: the join prelude and the rest of the run's frames from
//! its record, or, while it runs, from its live journal (`live`) as it grows. A reader that
//! finds the run's instance gone re-drives it (`redrive`) and reads on.

use std::sync::Arc;

use agui_protocol::event::RunError;
use agui_protocol::span::rejoin;
use agui_protocol::{Event, RunId};
use futures::StreamExt;
use futures::stream::BoxStream;

use super::{Inner, history, redrive};
use crate::error::CoreError;
use crate::records::{self, LiveBatch, RunRecord, THREAD_KEY, ThreadRecord, live_key};

/// Frames with their ids (1-based positions in the run).
pub type FrameStream = BoxStream<'static, (u64, Event)>;

/// Where a reader stands.
struct Cursor {
    /// The id of the last frame the client had when it joined.
    joined_after: u64,
    /// Events already sent (once anything was).
    sent: Option<usize>,
}

impl Cursor {
    /// The frames `events` add for this client: the join prelude and everything after
    /// its last id the first time, the new events afterwards.
    fn advance(&mut self, events: &[Event]) -> Vec<(u64, Event)> {
        match self.sent {
            Some(sent) => {
                let frames = events
                    .iter()
                    .enumerate()
                    .skip(sent)
                    .map(|(i, e)| (i as u64 + 1, e.clone()))
                    .collect();
                self.sent = Some(events.len().max(sent));
                frames
            }
            None => {
                let frames = rejoin(events, self.joined_after);
                if !frames.is_empty() {
                    self.sent = Some(events.len());
                }
                frames
            }
        }
    }
}

struct Follower {
    inner: Arc<Inner>,
    partition: String,
    run_id: RunId,
    started_at_ms: u64,
    events: Vec<Event>,
    next_batch: u32,
    cursor: Cursor,
    done: bool,
    wait: bool,
    /// This reader re-drove the run once already.
    redriven: bool,
    /// The events of the attempt a re-drive replaced, until the new one is seen to repeat
    /// them (see [`check_continues`]).
    replaced: Option<Vec<Event>>,
}

/// The frames of `run` after `last_id`: at once if it has finished, else as it goes.
pub(crate) fn follow(
    inner: Arc<Inner>,
    partition: String,
    run_id: RunId,
    run: RunRecord,
    last_id: u64,
) -> FrameStream {
    let mut cursor = Cursor {
        joined_after: last_id,
        sent: None,
    };
    if run.status.is_final() {
        return Box::pin(futures::stream::iter(cursor.advance(&run.events)));
    }
    let follower = Follower {
        inner,
        partition,
        run_id,
        started_at_ms: run.started_at_ms,
        events: Vec::new(),
        next_batch: 0,
        cursor,
        done: false,
        wait: false,
        redriven: false,
        replaced: None,
    };
    let frames = futures::stream::unfold(follower, |mut f| async move {
        let frames = f.step().await?;
        Some((futures::stream::iter(frames), f))
    });
    Box::pin(frames.flatten())
}

impl Follower {
    /// The next frames (possibly none), or `None` once the run's end was sent.
    async fn step(&mut self) -> Option<Vec<(u64, Event)>> {
        if self.done {
            return None;
        }
        if self.wait {
            let every = self.inner.config.live_flush_ms.max(50);
            self.inner.runtime.sleep.sleep(every).await;
        }
        match self.poll().await {
            Ok(frames) => Some(frames),
            Err(error) => {
                tracing::warn!(%error, run_id = %self.run_id, "following a run failed");
                self.done = true;
                let mut frames = self.cursor.advance(&self.events);
                // A consumer joining now still sees the run start before its error.
                if self.cursor.sent.is_none()
                    && let Some(first) = self.events.first()
                {
                    frames.push((1, first.clone()));
                }
                let mut event = RunError::from(&error);
                event.base.timestamp = Some(self.inner.runtime.now_ms());
                frames.push((self.events.len() as u64 + 1, event.into()));
                Some(frames)
            }
        }
    }

    async fn poll(&mut self) -> Result<Vec<(u64, Event)>, CoreError> {
        let now = self.inner.runtime.now_ms();
        let run_key = records::run_key(&self.run_id);
        let batch_key = live_key(&self.run_id, self.started_at_ms, self.next_batch);
        let items = self
            .inner
            .store
            .get(&self.partition, &[THREAD_KEY, &run_key, &batch_key], now)
            .await?;
        let [thread, run, batch] = <[_; 3]>::try_from(items)
            .map_err(|_| CoreError::CorruptRecord("store returned a short read".to_owned()))?;
        let run: Option<RunRecord> = run.as_ref().map(records::decode).transpose()?;
        if let Some(mut run) = run.as_ref().filter(|r| r.status.is_final()).cloned() {
            history::hydrate(&self.inner, &self.partition, &mut run, now).await?;
            if run.started_at_ms != self.started_at_ms && self.replaced.is_none() {
                // Re-driven to its end since the last look.
                self.replaced = Some(std::mem::take(&mut self.events));
            }
            check_continues(&mut self.replaced, &run.events)?;
            self.done = true;
            return Ok(self.cursor.advance(&run.events));
        }
        if let Some(run) = run.filter(|r| r.started_at_ms != self.started_at_ms) {
            // Re-driven (its first instance died): the new attempt journals afresh and,
            // replaying what the first one did, emits the same events; the client is sent
            // those past what it has.
            self.started_at_ms = run.started_at_ms;
            self.next_batch = 0;
            self.replaced = Some(std::mem::take(&mut self.events));
            self.wait = false;
            return Ok(Vec::new());
        }
        if let Some(batch) = batch {
            let batch: LiveBatch = records::decode(&batch)?;
            let have = self.events.len() as u64;
            let skip = (have + 1).saturating_sub(batch.first) as usize;
            self.events.extend(batch.events.into_iter().skip(skip));
            check_continues(&mut self.replaced, &self.events)?;
            self.next_batch += 1;
            // More batches may be waiting: read on without pausing.
            self.wait = false;
            return Ok(self.cursor.advance(&self.events));
        }
        let thread: Option<ThreadRecord> = thread.as_ref().map(records::decode).transpose()?;
        let held = thread
            .and_then(|t| t.lease)
            .is_some_and(|l| l.run_id == self.run_id && l.expires_at_ms > now);
        if !held {
            if std::mem::replace(&mut self.redriven, true) {
                return Err(CoreError::RunAbandoned);
            }
            // Nobody is finishing it: this reader's instance does, then reads on.
            let redriven = redrive::redrive_run(&self.inner, &self.partition, &self.run_id, None);
            if let Err(error) = redriven.await {
                tracing::warn!(%error, run_id = %self.run_id, "re-driving the followed run failed");
            }
            self.wait = false;
            return Ok(Vec::new());
        }
        self.wait = true;
        Ok(Vec::new())
    }
}

/// After a re-drive, whether its events so far repeat those of the attempt it replaced
/// (timestamps aside): the client, which has some of those, can only be sent the rest
/// if they do. An agent that does not replay what it did (no journal) ends the reader
/// with `RUN_ABANDONED`, as before re-drives; the run's record still has its end.
fn check_continues(
    replaced_by: &mut Option<Vec<Event>>,
    events: &[Event],
) -> Result<(), CoreError> {
    let Some(replaced) = replaced_by.as_ref() else {
        return Ok(());
    };
    let unstamped = |e: &Event| {
        let mut e = e.clone();
        e.base_mut().timestamp = None;
        e
    };
    let same = replaced
        .iter()
        .zip(events)
        .all(|(a, b)| unstamped(a) == unstamped(b));
    if !same {
        return Err(CoreError::RunAbandoned);
    }
    if events.len() >= replaced.len() {
        *replaced_by = None;
    }
    Ok(())
}
