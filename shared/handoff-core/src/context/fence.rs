//! The run's hold on its thread and what its side effects did, shared between the
//! agent's fenced writes, the lease heartbeat and the engine's finish.

use futures::lock::{Mutex, MutexGuard};
use serde_json::Value;

/// The thread version this run's lease holds. Every fenced commit conditions on it;
/// a lease renewal bumps it. Held locked across a commit so a renewal and an effect
/// write never race each other into a false `LEASE_LOST`.
#[derive(Debug)]
pub(crate) struct Fence(Mutex<u64>);

impl Fence {
    pub(crate) fn new(version: u64) -> Self {
        Fence(Mutex::new(version))
    }
    /// Waits for the fence (a commit in flight elsewhere finishes first).
    pub(crate) async fn lock(&self) -> MutexGuard<'_, u64> {
        self.0.lock().await
    }
    /// Whether a commit holds the fence right now.
    pub(crate) fn is_busy(&self) -> bool {
        self.0.try_lock().is_none()
    }
}

/// What one `ctx.effect` call of this run got to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum EffectState {
    /// The downstream may have been called and no result is recorded.
    InDoubt,
    /// The result is recorded (by this run or an earlier attempt).
    Done(Value),
}

/// The effects of one run, in call order.
#[derive(Debug, Default, Clone)]
pub(crate) struct EffectLedger(Vec<(String, EffectState)>);

impl EffectLedger {
    pub(crate) fn set(&mut self, key: &str, state: EffectState) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some((_, slot)) => *slot = state,
            None => self.0.push((key.to_owned(), state)),
        }
    }
    /// What the run knows of `key` so far.
    pub(crate) fn state(&self, key: &str) -> Option<&EffectState> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, s)| s)
    }
    /// The call failed and its record was removed: it did not happen.
    pub(crate) fn forget(&mut self, key: &str) {
        self.0.retain(|(k, _)| k != key);
    }
    pub(crate) fn any_in_doubt(&self) -> bool {
        self.0.iter().any(|(_, s)| *s == EffectState::InDoubt)
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Keys and results of the effects that are known to have executed.
    pub(crate) fn done(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().filter_map(|(k, s)| match s {
            EffectState::Done(v) => Some((k.as_str(), v)),
            EffectState::InDoubt => None,
        })
    }
}
