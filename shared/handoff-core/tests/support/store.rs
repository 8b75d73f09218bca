//! FaultStore: a MemoryStore with injected failures and held commits, and what tests ask
//! of the writes it sees.

use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use async_trait::async_trait;
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Item, Store, StoreError, Write, WriteOp};
use serde_json::Value;

use super::*;

type Matcher = Box<dyn Fn(&str, &[Write]) -> bool + Send + Sync>;

enum Action {
    Fail(StoreError),
    Hold(Gate),
}

struct Rule {
    matcher: Matcher,
    action: Action,
    remaining: Option<usize>,
}

/// Wraps [`MemoryStore`]; commits matching a rule fail or wait for a gate.
#[derive(Default)]
pub struct FaultStore {
    inner: MemoryStore,
    rules: Mutex<Vec<Rule>>,
    commits: AtomicUsize,
    failed: AtomicUsize,
    conflicts: AtomicUsize,
    yielding: AtomicBool,
    keys_read: Mutex<Vec<String>>,
}

impl FaultStore {
    /// Every read and commit yields to the executor once first, so concurrent
    /// requests interleave between their reads and their writes.
    pub fn yield_on_io(&self) {
        self.yielding.store(true, Ordering::SeqCst);
    }
    async fn maybe_yield(&self) {
        if self.yielding.load(Ordering::SeqCst) {
            yield_now().await;
        }
    }
    pub fn new() -> Self {
        Self::default()
    }
    /// Every matching commit fails with `error` (nothing is written).
    pub fn fail_commits_where(
        &self,
        error: StoreError,
        matcher: impl Fn(&str, &[Write]) -> bool + Send + Sync + 'static,
    ) {
        lock(&self.rules).push(Rule {
            matcher: Box::new(matcher),
            action: Action::Fail(error),
            remaining: None,
        });
    }
    /// The next matching commit waits until the returned gate opens, then applies.
    pub fn hold_next_commit_where(
        &self,
        matcher: impl Fn(&str, &[Write]) -> bool + Send + Sync + 'static,
    ) -> Gate {
        let gate = Gate::new();
        lock(&self.rules).push(Rule {
            matcher: Box::new(matcher),
            action: Action::Hold(gate.clone()),
            remaining: Some(1),
        });
        gate
    }
    /// Removes every rule.
    pub fn heal(&self) {
        lock(&self.rules).clear();
    }
    /// Commits attempted so far.
    pub fn commits(&self) -> usize {
        self.commits.load(Ordering::SeqCst)
    }
    /// Commits refused because a condition did not hold (lost races).
    pub fn conflicts(&self) -> usize {
        self.conflicts.load(Ordering::SeqCst)
    }
    /// Every key read with `get` so far, in order.
    pub fn keys_read(&self) -> Vec<String> {
        lock(&self.keys_read).clone()
    }
    /// Commits failed by a rule so far.
    pub fn injected_failures(&self) -> usize {
        self.failed.load(Ordering::SeqCst)
    }

    fn action_for(&self, partition: &str, writes: &[Write]) -> Option<Result<Gate, StoreError>> {
        let mut rules = lock(&self.rules);
        let rule = rules
            .iter_mut()
            .find(|r| r.remaining != Some(0) && (r.matcher)(partition, writes))?;
        if let Some(n) = rule.remaining.as_mut() {
            *n -= 1;
        }
        Some(match &rule.action {
            Action::Fail(e) => Err(e.clone()),
            Action::Hold(gate) => Ok(gate.clone()),
        })
    }
}

#[async_trait]
impl Store for FaultStore {
    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        self.maybe_yield().await;
        lock(&self.keys_read).extend(keys.iter().map(|k| (*k).to_owned()));
        self.inner.get(partition, keys, now_ms).await
    }
    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        self.maybe_yield().await;
        self.commits.fetch_add(1, Ordering::SeqCst);
        match self.action_for(partition, &writes) {
            Some(Err(e)) => {
                self.failed.fetch_add(1, Ordering::SeqCst);
                return Err(e);
            }
            Some(Ok(gate)) => gate.wait().await,
            None => {}
        }
        let result = self.inner.commit(partition, writes, now_ms).await;
        if matches!(result, Err(StoreError::ConditionFailed { .. })) {
            self.conflicts.fetch_add(1, Ordering::SeqCst);
        }
        result
    }
    async fn list(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        self.inner.list(partition, prefix, now_ms).await
    }

    async fn list_index(
        &self,
        scope: &str,
        after: Option<&handoff_core::IndexHit>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<handoff_core::IndexHit>, StoreError> {
        self.inner.list_index(scope, after, limit, now_ms).await
    }
}

/// Returns `Pending` once (waking itself), then `Ready`: lets other tasks run.
pub fn yield_now() -> impl Future<Output = ()> + Send {
    let mut yielded = false;
    futures::future::poll_fn(move |cx: &mut Context<'_>| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
}

/// The `status` of the thread record a batch puts, if it puts one.
pub fn thread_put_status(writes: &[Write]) -> Option<String> {
    writes
        .iter()
        .find(|w| w.key == "thread")
        .and_then(|w| match &w.op {
            WriteOp::Put { value, .. } => serde_json::from_slice::<Value>(value)
                .ok()?
                .get("status")?
                .as_str()
                .map(str::to_owned),
            _ => None,
        })
}

/// Matches the commit that finishes a run with the thread left in `status`
/// (`"idle"` or `"interrupted"`): claims always write `"running"`.
pub fn finishing_commit(
    status: &'static str,
) -> impl Fn(&str, &[Write]) -> bool + Send + Sync + 'static {
    move |_, writes| thread_put_status(writes).as_deref() == Some(status)
}
