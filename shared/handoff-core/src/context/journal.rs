//! A run's journal of steps: work that is safe to repeat but costly (a model's answer),
//! recorded with the events it emitted so that a re-drive of the run (its instance died
//! before its end; see the engine's `redrive`) replays it instead of doing it again.
//!
//! A step costs one store write: a first execution of a run never reads the journal
//! (nothing can be in it), a re-drive reads it step by step until the first step that
//! was not recorded, and from there on records again.
//!
//! ```no_run
//! # use handoff_core::{RunContext, AgentError};
//! # async fn call_model(ctx: &mut RunContext) -> String { String::new() }
//! # async fn step(ctx: &mut RunContext) -> Result<String, AgentError> {
//! if let Some(recorded) = ctx.replay_step().await? {
//!     return Ok(serde_json::from_value(recorded)?); // its events were emitted again
//! }
//! let mark = ctx.step_mark();
//! let answer = call_model(ctx).await; // emits events as it streams
//! ctx.record_step(mark, &answer).await?;
//! # Ok(answer) }
//! ```

use agui_protocol::Event;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::RunContext;
use crate::error::AgentError;
use crate::records;
use crate::store::{Condition, StoreError, Write};

/// Where a run's journal stands.
#[derive(Debug, Default)]
pub(crate) struct JournalCursor {
    /// This execution re-drives the run and has not yet met an unrecorded step.
    pub(crate) replaying: bool,
    /// The next step's number.
    next: u32,
}

impl JournalCursor {
    pub(crate) fn new(replaying: bool) -> Self {
        JournalCursor { replaying, next: 0 }
    }
}

/// Where the events of a step begin ([`RunContext::step_mark`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepMark(usize);

#[derive(Serialize, Deserialize)]
struct StepRecord {
    value: Value,
    #[serde(default)]
    events: Vec<Event>,
}

/// Key of step `n` of run `run_id`'s journal.
fn step_key(run_id: &str, n: u32) -> String {
    format!("journal#{run_id}#{n:05}")
}

impl RunContext {
    /// On a re-drive of this run, the value recorded for its next step, whose events are
    /// emitted again (stamped now); `None` when the step is to be done (and recorded with
    /// [`RunContext::record_step`]). Steps are numbered in the order the run takes them.
    pub async fn replay_step(&mut self) -> Result<Option<Value>, AgentError> {
        if !self.journal.replaying {
            return Ok(None);
        }
        let key = step_key(self.run_id().as_str(), self.journal.next);
        let now = self.now_ms();
        let item = match self.store.get_one(&self.partition, &key, now).await {
            Ok(item) => item,
            Err(error) => return Err(self.fail(error.into())),
        };
        let Some(item) = item else {
            self.journal.replaying = false;
            return Ok(None);
        };
        let step: StepRecord = match records::decode(&item) {
            Ok(step) => step,
            Err(error) => return Err(self.fail(error)),
        };
        self.journal.next += 1;
        for mut event in step.events {
            event.base_mut().timestamp = None;
            self.emit(event);
        }
        tracing::debug!(run_id = %self.run_id(), step = self.journal.next - 1, "journaled step replayed");
        Ok(Some(step.value))
    }

    /// Where the events of a step about to be done begin.
    pub fn step_mark(&self) -> StepMark {
        StepMark(self.log().len())
    }

    /// Records a step done since `mark`: `value` and the events emitted since, in one write.
    /// A step another execution of the run recorded first is kept as it was.
    pub async fn record_step(
        &mut self,
        mark: StepMark,
        value: &impl Serialize,
    ) -> Result<(), AgentError> {
        let events: Vec<Event> = self.log()[mark.0..]
            .iter()
            .map(|e| Event::clone(e))
            .collect();
        let step = StepRecord {
            value: serde_json::to_value(value).map_err(AgentError::from)?,
            events,
        };
        let key = step_key(self.run_id().as_str(), self.journal.next);
        self.journal.next += 1;
        let now = self.now_ms();
        let expires = Some(now + self.effect_ttl_ms);
        let write = Write::put(key, Condition::Absent, records::encode(&step), expires);
        match self.store.commit(&self.partition, vec![write], now).await {
            Ok(()) | Err(StoreError::ConditionFailed { .. }) => Ok(()),
            Err(error) => {
                // Unrecorded, a re-drive does the step again: costly, never wrong.
                tracing::warn!(%error, run_id = %self.run_id(), "journaling a step failed");
                Ok(())
            }
        }
    }
}
