//! Where one run stands (`GET /threads/{threadId}/runs/{runId}`): derived from its record
//! (status and event log) and, while it runs, from the thread head's lease.
//!
//! The same view serves every run, streamed or background, and anything that maps runs to
//! another protocol's task states (A2A) reads it rather than the records.

use agui_protocol::interrupt::RunFinishedOutcome;
use agui_protocol::{Event, Interrupt, TokenUsage};
use serde::{Deserialize, Serialize};

use super::Engine;
use crate::codes::ErrorCode;
use crate::error::CoreError;
use crate::principal::Principal;
use crate::records::{self, RunRecord, RunStatus, THREAD_KEY, ThreadRecord};

/// The status of one run, as `GET /threads/{threadId}/runs/{runId}` answers it.
///
/// ```json
/// {"threadId": "t-1", "runId": "r-1", "status": "interrupted", "outcome": "interrupt",
///  "interrupts": [{"id": "int-1", "reason": "tool_call"}], "startedAt": 1764421200000,
///  "finishedAt": 1764421200420}
/// ```
///
/// Optional fields are omitted, never `null`; times are Unix milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStatusView {
    /// The thread.
    pub thread_id: String,
    /// The run.
    pub run_id: String,
    /// Where it stands.
    pub status: RunPhase,
    /// How it ended, for a run that ended with `RUN_FINISHED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<RunOutcomeKind>,
    /// The tokens it used, when its terminal event recorded them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Vec<TokenUsage>>,
    /// The questions it ended with (status `interrupted` only), as its `RUN_FINISHED` asked
    /// them; whether they are still pending is the thread's (`GET /threads/{threadId}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupts: Option<Vec<Interrupt>>,
    /// Why it failed (status `failed` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RunFailure>,
    /// When it was claimed.
    pub started_at: u64,
    /// When it ended (its terminal event's time), once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<u64>,
}

/// Where a run stands; each is sent as its lowercase name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunPhase {
    /// It holds its thread's lease and has not ended.
    Running,
    /// It ended `RUN_FINISHED{outcome: interrupt}`: it waits for answers, sent as a new run.
    Interrupted,
    /// It ended `RUN_FINISHED{outcome: success}`.
    Succeeded,
    /// It ended with `RUN_ERROR`, or its instance went away before it ended and its lease
    /// lapsed (`error.code` `RUN_ABANDONED`).
    Failed,
    /// It ended `RUN_FINISHED{outcome: cancelled}` (a stop request or a deadline).
    Cancelled,
}

impl RunPhase {
    /// Whether the run has ended (every phase but `running`).
    pub fn is_final(self) -> bool {
        self != RunPhase::Running
    }
}

/// The `type` of a run's `RUN_FINISHED.outcome`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunOutcomeKind {
    /// `success`.
    Success,
    /// `interrupt`.
    Interrupt,
    /// `cancelled`.
    Cancelled,
}

/// The `code` and `message` of a failed run's `RUN_ERROR` (redacted as it was streamed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunFailure {
    /// Its stable code (see [`crate::codes`]).
    pub code: String,
    /// Its message.
    pub message: String,
}

impl Engine {
    /// Where run `run_id` of the thread stands, for `principal` (who may read it as it may
    /// read the run's events, [`Engine::run_events`]): [`CoreError::RunNotFound`] if the
    /// thread has no such run, [`CoreError::ThreadNotFound`] if the principal's tenant has
    /// no such thread or the principal may not see it. One store read for a run that ended
    /// and was asked for by its requester; a running run's lease is read from the head.
    pub async fn run_status(
        &self,
        principal: &Principal,
        thread_id: &str,
        run_id: &str,
    ) -> Result<RunStatusView, CoreError> {
        let Some((partition, record)) = self.read_run(principal, thread_id, run_id).await? else {
            return Err(CoreError::RunNotFound);
        };
        let mut view = view_of(thread_id, run_id, &record);
        if view.status == RunPhase::Running {
            let now = self.inner.runtime.now_ms();
            // A run whose lease lapsed is still running if it is to be re-driven (its
            // instance died, or it was handed over): only one with nothing to re-drive from
            // is abandoned. Its record keeps its request; one claimed by an earlier version
            // kept it in an item of its own.
            let legacy = super::handover::legacy_key(run_id);
            let keys: &[&str] = match record.redrive {
                Some(_) => &[THREAD_KEY],
                None => &[THREAD_KEY, legacy.as_str()],
            };
            let items = self.inner.store.get(&partition, keys, now).await?;
            let kept = record.redrive.is_some() || items.get(1).is_some_and(Option::is_some);
            let head = items.into_iter().next().flatten();
            let head: Option<ThreadRecord> = head.as_ref().map(records::decode).transpose()?;
            let held = head
                .filter(|t| t.status == crate::records::ThreadStatus::Running)
                .and_then(|t| t.lease)
                .is_some_and(|l| l.run_id.as_str() == run_id && (l.expires_at_ms > now || kept));
            if !held {
                // It may have ended between the two reads: its record then says how.
                let run_key = records::run_key(run_id);
                let again = self.inner.store.get_one(&partition, &run_key, now).await?;
                let again: Option<RunRecord> = again.as_ref().map(records::decode).transpose()?;
                match again.filter(|r| r.status.is_final()) {
                    Some(ended) => view = view_of(thread_id, run_id, &ended),
                    None => {
                        view.status = RunPhase::Failed;
                        view.error = Some(failure(&CoreError::RunAbandoned));
                    }
                }
            }
        }
        Ok(view)
    }
}

fn failure(error: &CoreError) -> RunFailure {
    RunFailure {
        code: error.code().name.to_owned(),
        message: error.public_message(),
    }
}

/// The view a run's record gives (a record still `running` says nothing of its lease).
pub(crate) fn view_of(thread_id: &str, run_id: &str, record: &RunRecord) -> RunStatusView {
    let mut view = RunStatusView {
        thread_id: thread_id.to_owned(),
        run_id: run_id.to_owned(),
        status: RunPhase::Running,
        outcome: None,
        usage: None,
        interrupts: None,
        error: None,
        started_at: record.started_at_ms,
        finished_at: None,
    };
    if !record.status.is_final() {
        return view;
    }
    match record.events.last() {
        Some(Event::RunFinished(finished)) => {
            view.finished_at = finished.base.timestamp;
            view.usage.clone_from(&finished.usage);
            let (phase, kind) = match &finished.outcome {
                Some(RunFinishedOutcome::Interrupt { interrupts }) => {
                    view.interrupts = Some(interrupts.clone());
                    (RunPhase::Interrupted, RunOutcomeKind::Interrupt)
                }
                Some(RunFinishedOutcome::Cancelled) => {
                    (RunPhase::Cancelled, RunOutcomeKind::Cancelled)
                }
                // Absent means success on the wire.
                _ => (RunPhase::Succeeded, RunOutcomeKind::Success),
            };
            view.status = phase;
            view.outcome = Some(kind);
        }
        Some(Event::RunError(error)) => {
            view.finished_at = error.base.timestamp;
            view.usage.clone_from(&error.usage);
            view.status = RunPhase::Failed;
            view.error = Some(RunFailure {
                code: error
                    .code
                    .clone()
                    .unwrap_or_else(|| crate::codes::AGENT_ERROR.name.to_owned()),
                message: error.message.clone(),
            });
        }
        // A final record without its terminal event (not written by this engine): its
        // status alone says how it ended.
        _ => {
            view.status = match record.status {
                RunStatus::Succeeded => RunPhase::Succeeded,
                RunStatus::Interrupted => RunPhase::Interrupted,
                RunStatus::Cancelled => RunPhase::Cancelled,
                RunStatus::Errored | RunStatus::Running => RunPhase::Failed,
            };
        }
    }
    view
}

#[cfg(test)]
mod tests {
    use agui_protocol::event::{RunError, RunFinished, RunStarted};

    use super::*;

    fn record(status: RunStatus, last: Option<Event>) -> RunRecord {
        let mut events = vec![Event::from(RunStarted::new("t", "r")).with_timestamp(10)];
        events.extend(last);
        RunRecord {
            input_hash: String::new(),
            status,
            resume_key: None,
            started_at_ms: 10,
            events,
            snapshot_pages: None,
            requested_by: None,
            cuts: Vec::new(),
            redrive: None,
        }
    }

    fn finished(outcome: RunFinishedOutcome) -> Event {
        let mut event = RunFinished::new("t", "r");
        event.outcome = Some(outcome);
        event.usage = Some(vec![TokenUsage {
            total_tokens: Some(7),
            ..TokenUsage::default()
        }]);
        Event::from(event).with_timestamp(42)
    }

    #[test]
    fn each_ending_gives_its_phase_outcome_and_times() {
        let asked = Interrupt::new("int-1", "tool_call");
        let cases = [
            (
                RunStatus::Succeeded,
                finished(RunFinishedOutcome::success()),
                RunPhase::Succeeded,
                Some(RunOutcomeKind::Success),
            ),
            (
                RunStatus::Interrupted,
                finished(RunFinishedOutcome::Interrupt {
                    interrupts: vec![asked.clone()],
                }),
                RunPhase::Interrupted,
                Some(RunOutcomeKind::Interrupt),
            ),
            (
                RunStatus::Cancelled,
                finished(RunFinishedOutcome::Cancelled),
                RunPhase::Cancelled,
                Some(RunOutcomeKind::Cancelled),
            ),
        ];
        for (status, last, phase, outcome) in cases {
            let view = view_of("t", "r", &record(status, Some(last)));
            assert_eq!((view.status, view.outcome), (phase, outcome));
            assert_eq!((view.started_at, view.finished_at), (10, Some(42)));
            assert_eq!(view.usage.unwrap()[0].total_tokens, Some(7));
            let interrupts = view.interrupts.map(|i| i[0].id.to_string());
            let expected = (phase == RunPhase::Interrupted).then(|| "int-1".to_owned());
            assert_eq!(interrupts, expected);
        }
    }

    #[test]
    fn an_error_is_failed_with_its_code_and_a_running_record_has_no_end() {
        let mut error = RunError::new("storage is temporarily unavailable; retry");
        error.code = Some("STORE_UNAVAILABLE".to_owned());
        let last = Event::from(error).with_timestamp(50);
        let view = view_of("t", "r", &record(RunStatus::Errored, Some(last)));
        assert_eq!(view.status, RunPhase::Failed);
        assert_eq!(view.error.unwrap().code, "STORE_UNAVAILABLE");
        assert_eq!((view.outcome, view.finished_at), (None, Some(50)));

        let running = view_of("t", "r", &record(RunStatus::Running, None));
        let json = serde_json::to_value(&running).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"threadId": "t", "runId": "r", "status": "running", "startedAt": 10}),
            "optional fields are omitted"
        );
    }
}
