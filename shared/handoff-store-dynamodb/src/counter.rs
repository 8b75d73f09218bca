//! Counting DynamoDB round trips.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::orchestrator::Metadata;

/// Counts HTTP requests sent to DynamoDB, per operation name (`GetItem`,
/// `TransactWriteItems`, …).
///
/// An SDK interceptor counting in `read_before_transmit`, so it sees every attempt: an SDK
/// retry after a throttle or a dropped connection counts as another round trip. Every
/// [`DynamoStore`](crate::DynamoStore) installs one on its client
/// ([`DynamoStore::call_counter`](crate::DynamoStore::call_counter)); clones share the counts,
/// and one can be put on any other client with `Config::builder().interceptor(counter.clone())`.
///
/// ```
/// use handoff_store_dynamodb::CallCounter;
///
/// let counter = CallCounter::new();
/// let before = counter.snapshot();
/// // ... calls through a client carrying `counter.clone()` as an interceptor ...
/// assert_eq!(counter.since(&before).values().sum::<u64>(), 0);
/// assert_eq!(counter.total(), 0);
/// ```
#[derive(Debug, Clone, Default)]
pub struct CallCounter {
    counts: Arc<Mutex<BTreeMap<String, u64>>>,
}

impl CallCounter {
    /// A counter at zero.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, u64>> {
        // Counting never leaves the map half-updated; a panic elsewhere does not poison it.
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Requests sent so far, per operation.
    pub fn snapshot(&self) -> BTreeMap<String, u64> {
        self.lock().clone()
    }

    /// Requests sent since `earlier` (a [`snapshot`](Self::snapshot)), per operation; operations
    /// without new requests are left out.
    pub fn since(&self, earlier: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
        self.lock()
            .iter()
            .filter_map(|(op, n)| {
                let delta = n - earlier.get(op).copied().unwrap_or(0);
                (delta > 0).then(|| (op.clone(), delta))
            })
            .collect()
    }

    /// Requests sent so far for one operation.
    pub fn count(&self, operation: &str) -> u64 {
        self.lock().get(operation).copied().unwrap_or(0)
    }

    /// Requests sent so far, all operations together.
    pub fn total(&self) -> u64 {
        self.lock().values().sum()
    }

    /// Sets every count back to zero.
    pub fn reset(&self) {
        self.lock().clear();
    }

    fn record(&self, operation: &str) {
        *self.lock().entry(operation.to_owned()).or_default() += 1;
    }
}

impl Intercept for CallCounter {
    fn name(&self) -> &'static str {
        "HandoffCallCounter"
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let operation = cfg.load::<Metadata>().map_or("unknown", Metadata::name);
        self.record(operation);
        Ok(())
    }
}
