//! A store wrapper that opens one span per call, `handoff.store {operation}`, with
//! OpenTelemetry's database attributes: what a trace of a run shows of its store.
//!
//! The engine wraps every store it is given, so each host and store is traced the same
//! way. The spans are at `DEBUG` level on the `handoff::store` target: a host that exports
//! traces enables them for its exporter only, and with no subscriber interested a call
//! costs one cached interest check.
//!
//! | attribute | value |
//! |---|---|
//! | `db.system.name` | [`Store::system_name`]: `dynamodb`, `sqlite`, `memory`, `durable_object` |
//! | `db.operation.name` | `get`, `commit`, `list`, `scan`, `list_index` |
//! | `handoff.store.conditional` | on `commit`: whether any write carries a condition |
//! | `handoff.store.outcome` | `ok`, `condition_failed`, `unavailable`, `too_large`, `error` |
//! | `error.type` | the outcome, when it is not `ok` |

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use tracing::Instrument;
use tracing::field::Empty;

use super::{Condition, IndexHit, Item, Store, StoreError, Write};

/// A count of store calls shared with whoever reports it (a run's log line, the log line
/// of the request that started it). Cheap to clone; clones count together.
#[derive(Debug, Clone, Default)]
pub struct StoreCalls(Arc<AtomicU64>);

impl StoreCalls {
    /// Calls counted so far.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn add(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Traces the calls to `inner` (see the [module docs](self)).
pub struct TracedStore {
    inner: Arc<dyn Store>,
    calls: Option<StoreCalls>,
}

impl TracedStore {
    /// Traces `inner`.
    pub fn new(inner: Arc<dyn Store>) -> Self {
        TracedStore { inner, calls: None }
    }

    /// Traces `inner` and counts its calls into `calls` (the engine wraps each run's
    /// store so, for the run's log line).
    pub fn counting(inner: Arc<dyn Store>, calls: StoreCalls) -> Self {
        TracedStore {
            inner,
            calls: Some(calls),
        }
    }

    fn count(&self) {
        if let Some(calls) = &self.calls {
            calls.add();
        }
    }
}

impl std::fmt::Debug for TracedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TracedStore")
            .field("system", &self.inner.system_name())
            .finish_non_exhaustive()
    }
}

/// The span of one call; its fields are only evaluated when some subscriber wants it.
macro_rules! store_span {
    ($self:ident, $operation:literal, $conditional:expr) => {
        tracing::debug_span!(
            target: "handoff::store",
            "handoff.store",
            otel.name = concat!("handoff.store ", $operation),
            otel.kind = "client",
            db.system.name = $self.inner.system_name(),
            db.operation.name = $operation,
            handoff.store.conditional = $conditional,
            handoff.store.outcome = Empty,
            error.type = Empty,
        )
    };
}

fn settle<T>(span: &tracing::Span, result: &Result<T, StoreError>) {
    if span.is_disabled() {
        return;
    }
    let outcome = match result {
        Ok(_) => "ok",
        Err(StoreError::ConditionFailed { .. }) => "condition_failed",
        Err(StoreError::Unavailable(_)) => "unavailable",
        Err(StoreError::TooLarge(_)) => "too_large",
        Err(_) => "error",
    };
    span.record("handoff.store.outcome", outcome);
    if result.is_err() {
        span.record("error.type", outcome);
    }
}

async fn traced<T>(
    span: tracing::Span,
    call: impl Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    let result = call.instrument(span.clone()).await;
    settle(&span, &result);
    result
}

fn is_conditional(writes: &[Write]) -> bool {
    writes.iter().any(|w| w.condition != Condition::Always)
}

#[async_trait]
impl Store for TracedStore {
    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        self.count();
        let span = store_span!(self, "get", false);
        traced(span, self.inner.get(partition, keys, now_ms)).await
    }

    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        self.count();
        let span = store_span!(self, "commit", is_conditional(&writes));
        traced(span, self.inner.commit(partition, writes, now_ms)).await
    }

    async fn list(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        self.count();
        let span = store_span!(self, "list", false);
        traced(span, self.inner.list(partition, prefix, now_ms)).await
    }

    async fn scan(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<Item>, StoreError> {
        self.count();
        let span = store_span!(self, "scan", false);
        traced(span, self.inner.scan(partition, prefix, now_ms)).await
    }

    async fn list_index(
        &self,
        scope: &str,
        after: Option<&IndexHit>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<IndexHit>, StoreError> {
        self.count();
        let span = store_span!(self, "list_index", false);
        traced(span, self.inner.list_index(scope, after, limit, now_ms)).await
    }

    fn system_name(&self) -> &'static str {
        self.inner.system_name()
    }
}
