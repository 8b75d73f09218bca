//! Side effects that execute at most once per key, across instances, retries and replays.

use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tracing::Instrument;

use super::RunContext;
use super::audit::AuditAppend;
use super::fence::EffectState;
use crate::error::AgentError;
use crate::error::CoreError;
use crate::records::{self, EffectRecord, THREAD_KEY, effect_key};
use crate::store::{Condition, StoreError, Write};

/// What a failed effect's error says about the call: by default that it may have
/// executed (in doubt). Implement it for an error type that knows better, or wrap a
/// definite failure in [`NotExecuted`].
pub trait EffectFailure: std::fmt::Display {
    /// `true` when the downstream call was certainly not made (refused before sending,
    /// a validation error), so nothing is in doubt.
    fn not_executed(&self) -> bool {
        false
    }
}

impl EffectFailure for String {}
impl EffectFailure for &str {}
impl EffectFailure for AgentError {}
impl EffectFailure for CoreError {}

/// An effect error that means the call was never made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotExecuted<E>(pub E);

impl<E: std::fmt::Display> std::fmt::Display for NotExecuted<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<E: std::fmt::Display> EffectFailure for NotExecuted<E> {
    fn not_executed(&self) -> bool {
        true
    }
}

impl RunContext {
    /// Runs `call` at most once for `key` on this thread and records its result;
    /// any later call with the same key (a replayed resume, a retry on another
    /// instance) gets the recorded result without executing.
    ///
    /// `call` receives the idempotency key to hand to the downstream service
    /// (`{threadId}/{key}`, or `{tenant}:{threadId}/{key}` outside the default tenant; see
    /// [`crate::principal::idempotency_key`]). The one window no store can close — the process dies
    /// after the downstream call and before the record — is covered by that key:
    /// the retry calls again with the same key, so a downstream that honours
    /// idempotency keys still executes once.
    ///
    /// A failed call is **in doubt** unless its error says the call was never made
    /// ([`EffectFailure::not_executed`], e.g. [`NotExecuted`]): a timeout after the
    /// request was sent may have moved the money. An effect in doubt keeps its record, so
    /// the run's answer stays pinned (`ANSWER_IN_DOUBT` for any other answer) and the same
    /// answer re-drives the call under the same idempotency key. A call that was not made
    /// records nothing and can be retried or answered differently.
    ///
    /// Under an answer, each attempt is on the thread's audit trail (its key, idempotency
    /// key and the answer driving it) from the commit that marks it started, before `call`
    /// runs; a replay is recorded when the run finishes.
    ///
    /// Traced as a `handoff.effect` span (`handoff.effect.key`, `handoff.effect.replayed`,
    /// `handoff.effect.outcome`: `executed`, `replayed`, `not_executed`, `in_doubt`).
    pub async fn effect<T, E, F, Fut>(&mut self, key: &str, call: F) -> Result<T, AgentError>
    where
        T: Serialize + DeserializeOwned + Send,
        E: EffectFailure,
        F: FnOnce(String) -> Fut + Send,
        Fut: Future<Output = Result<T, E>> + Send,
    {
        let span = tracing::info_span!(
            target: "handoff::effect",
            "handoff.effect",
            handoff.effect.key = key,
            handoff.effect.replayed = false,
            handoff.effect.outcome = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        let result = self.effect_once(key, call).instrument(span.clone()).await;
        if result.is_err() && !span.is_disabled() {
            span.record("error.type", "effect_failed");
        }
        result
    }

    async fn effect_once<T, E, F, Fut>(&mut self, key: &str, call: F) -> Result<T, AgentError>
    where
        T: Serialize + DeserializeOwned + Send,
        E: EffectFailure,
        F: FnOnce(String) -> Fut + Send,
        Fut: Future<Output = Result<T, E>> + Send,
    {
        let item_key = effect_key(key);
        let idempotency_key = self.idempotency_key(key);
        let started = self.start_effect(key, &item_key, &idempotency_key).await?;
        let (started_version, attempts, fence) = match started {
            Started::Now {
                version,
                attempts,
                fence,
            } => (version, attempts, fence),
            Started::Before(value) => {
                return serde_json::from_value(value).map_err(AgentError::from);
            }
        };

        let outcome = call(idempotency_key).await;
        let now = self.now_ms();
        match outcome {
            Ok(value) => {
                let json = serde_json::to_value(&value).map_err(AgentError::from)?;
                let done = EffectRecord {
                    done: true,
                    fence,
                    attempts: attempts + 1,
                    result: Some(json.clone()),
                };
                // The attempt is on the audit trail already (see `write_started`).
                let write = Write::put(
                    &item_key,
                    Condition::Version(started_version),
                    records::encode(&done),
                    Some(now + self.effect_ttl_ms),
                );
                self.fenced_commit(vec![write]).await?;
                self.effects.set(key, EffectState::Done(json));
                settled("executed");
                Ok(value)
            }
            Err(e) if e.not_executed() => {
                let write = Write::delete(&item_key, Condition::Version(started_version));
                self.fenced_commit(vec![write]).await?;
                self.effects.forget(key);
                settled("not_executed");
                Err(AgentError(format!("effect {key} failed: {e}")))
            }
            // Its "started" record stays: the run's answer stays pinned to this key.
            Err(e) => {
                settled("in_doubt");
                tracing::warn!(
                    key,
                    "effect failed and may have executed; it stays in doubt"
                );
                Err(AgentError(format!(
                    "effect {key} failed and may have executed: {e}"
                )))
            }
        }
    }

    /// Records that effect `key` is starting, or finds that it already ran.
    ///
    /// Most effects run for the first time, so the "started" record is first written under
    /// `Absent` without reading the key: one store call, not two (a DynamoDB round trip per
    /// effect). Only when a record is already there (a replayed resume, a call left in doubt)
    /// is it read, and the attempt goes on from what it says.
    async fn start_effect(
        &mut self,
        key: &str,
        item_key: &str,
        idempotency_key: &str,
    ) -> Result<Started, AgentError> {
        let known = self.effects.state(key).cloned();
        let audit = self.attempt_audit(key, idempotency_key, 1).await?;
        match self
            .write_started(key, item_key, Condition::Absent, 0, audit)
            .await
        {
            // Nothing was written: the run knows what it knew before.
            Err(StoreError::ConditionFailed { index: 1 }) => match known {
                Some(state) => self.effects.set(key, state),
                None => self.effects.forget(key),
            },
            outcome => return self.started(outcome, 1, 0),
        }
        let now = self.now_ms();
        let existing = match self.store.get(&self.partition, &[item_key], now).await {
            Ok(mut items) => items.pop().flatten(),
            Err(e) => return Err(self.fail(CoreError::Store(e))),
        };
        let (condition, attempts) = match &existing {
            Some(item) => {
                let record: EffectRecord = records::decode(item).map_err(|e| self.fail(e))?;
                if record.done {
                    settled("replayed");
                    tracing::Span::current().record("handoff.effect.replayed", true);
                    if self.audits_effects() {
                        self.note_replayed_effect(key);
                    }
                    let value = record.result.unwrap_or(Value::Null);
                    self.effects.set(key, EffectState::Done(value.clone()));
                    return Ok(Started::Before(value));
                }
                // Started by a run whose lease is gone: in doubt, call again with the same key.
                tracing::warn!(
                    key,
                    previous_fence = record.fence,
                    "effect in doubt; retrying with the same idempotency key"
                );
                (Condition::Version(item.version), record.attempts)
            }
            // Expired (or deleted) since the first write found it.
            None => (Condition::Absent, 0),
        };
        let version = match condition {
            Condition::Version(v) => v + 1,
            _ => 1,
        };
        let audit = self
            .attempt_audit(key, idempotency_key, attempts + 1)
            .await?;
        let outcome = self
            .write_started(key, item_key, condition, attempts, audit)
            .await;
        self.started(outcome, version, attempts)
    }

    /// Under an answer, the audit entry of attempt `attempt` at effect `key`, chained after
    /// the head the claim read (no store call): `write_started` commits it.
    async fn attempt_audit(
        &mut self,
        key: &str,
        idempotency_key: &str,
        attempt: u32,
    ) -> Result<Option<AuditAppend>, AgentError> {
        if !self.audits_effects() {
            return Ok(None);
        }
        let now = self.now_ms();
        let entry = self.effect_attempt_entry(key, idempotency_key.to_owned(), attempt, now);
        match self.audit_append(vec![entry]).await {
            Ok(append) => Ok(Some(append)),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Writes the "started" record (attempt `attempts + 1`) under `condition`, fenced by
    /// the run's lease, with the attempt's audit entry; the answer is the store's, with the
    /// lease check at index 0 and the record at index 1.
    ///
    /// The entry rides this commit, not the one recording the result: a call stopped
    /// mid-flight, past its deadline or failing after sending never gets that far, and the
    /// thread may be deleted afterwards (the effect record with it). One commit holds both,
    /// so no call runs without its entry and no entry names an attempt that was not started.
    async fn write_started(
        &mut self,
        key: &str,
        item_key: &str,
        condition: Condition,
        attempts: u32,
        audit: Option<AuditAppend>,
    ) -> Result<u64, StoreError> {
        let ttl = Some(self.now_ms() + self.effect_ttl_ms);
        let mut audit = audit;
        let audit_writes = audit
            .as_mut()
            .map(|append| std::mem::take(&mut append.writes))
            .unwrap_or_default();
        // From here until its outcome is recorded the effect counts as possibly executed:
        // a commit dropped mid-flight (deadline) may still land.
        self.effects.set(key, EffectState::InDoubt);
        let committed = self
            .commit_under_fence(|fence| {
                let started = EffectRecord {
                    done: false,
                    fence,
                    attempts: attempts + 1,
                    result: None,
                };
                let mut writes = vec![Write::put(
                    item_key,
                    condition,
                    records::encode(&started),
                    ttl,
                )];
                writes.extend(audit_writes);
                writes
            })
            .await;
        if let (Ok(_), Some(append)) = (&committed, audit) {
            self.audit_committed(append);
        }
        committed
    }

    fn started(
        &mut self,
        outcome: Result<u64, StoreError>,
        version: u64,
        attempts: u32,
    ) -> Result<Started, AgentError> {
        match outcome {
            Ok(fence) => Ok(Started::Now {
                version,
                attempts,
                fence,
            }),
            Err(e) => Err(self.commit_failed(e)),
        }
    }

    /// The key a downstream sees for effect `key` (see
    /// [`crate::principal::idempotency_key`]: injective across tenants and threads).
    fn idempotency_key(&self, key: &str) -> String {
        crate::principal::idempotency_key(&self.principal.tenant, &self.input.thread_id, key)
    }

    /// Commits writes together with a check that this run still holds the thread.
    async fn fenced_commit(&mut self, writes: Vec<Write>) -> Result<(), AgentError> {
        let committed = self.commit_under_fence(|_| writes).await;
        committed.map(drop).map_err(|e| self.commit_failed(e))
    }

    /// Commits `writes(fence)` after a check (at batch index 0) that the thread is still at
    /// the run's fence, held locked so a lease renewal waits, and answers with that fence.
    async fn commit_under_fence(
        &self,
        writes: impl FnOnce(u64) -> Vec<Write>,
    ) -> Result<u64, StoreError> {
        let fence = self.fence.lock().await;
        let mut batch = vec![Write::check(THREAD_KEY, Condition::Version(*fence))];
        batch.extend(writes(*fence));
        let committed = self
            .store
            .commit(&self.partition, batch, self.now_ms())
            .await;
        committed.map(|()| *fence)
    }

    /// What a failed fenced commit means for the run.
    fn commit_failed(&mut self, error: StoreError) -> AgentError {
        match error {
            StoreError::ConditionFailed { index: 0 } => self.fail(CoreError::LeaseLost),
            e @ StoreError::ConditionFailed { .. } => {
                // Someone else wrote this effect: only a run holding the lease can, so ours is gone.
                tracing::warn!(error = %e, "effect record changed under a live lease");
                self.fail(CoreError::LeaseLost)
            }
            e => self.fail(CoreError::Store(e)),
        }
    }

    /// Remembers an engine-level failure so the run ends with its code, not the agent's.
    pub(super) fn fail(&mut self, error: CoreError) -> AgentError {
        let message = error.to_string();
        self.fatal.get_or_insert(error);
        AgentError(message)
    }
}

/// How [`RunContext::start_effect`] left an effect.
enum Started {
    /// This attempt's "started" record is stored at `version`, written under `fence`.
    Now {
        version: u64,
        attempts: u32,
        fence: u64,
    },
    /// It completed before: its recorded result.
    Before(Value),
}

/// Records how the current effect span ended.
fn settled(outcome: &'static str) {
    tracing::Span::current().record("handoff.effect.outcome", outcome);
}
