//! Private helpers the checks share: partition namespaces, yielding, and assertions.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use handoff_core::store::{Condition, Item, Store, StoreError, Write};

/// A unique partition namespace for one run of one check.
pub(crate) struct Namespace(String);

impl Namespace {
    pub(crate) fn new(check: &str) -> Self {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(SEQ.fetch_add(1, Ordering::Relaxed));
        // Processes sharing one backend (a DynamoDB table) must not collide; wasm
        // hosts have no process id (and a fresh isolate per test instance).
        #[cfg(not(target_family = "wasm"))]
        hasher.write_u32(std::process::id());
        Self(format!("conformance/{check}/{:016x}", hasher.finish()))
    }

    pub(crate) fn partition(&self, name: &str) -> String {
        format!("{}/{name}", self.0)
    }
}

/// Lets every other future polled by the same `join_all` run before continuing.
pub(crate) fn yield_now() -> YieldNow {
    YieldNow(false)
}

pub(crate) struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

#[track_caller]
pub(crate) fn ok<T>(result: Result<T, StoreError>, what: impl std::fmt::Display) -> T {
    result.unwrap_or_else(|e| panic!("{what}: unexpected store error {e:?}"))
}

#[track_caller]
pub(crate) fn failed_at(result: Result<(), StoreError>, index: usize, what: &str) {
    assert_eq!(
        result,
        Err(StoreError::ConditionFailed { index }),
        "{what} must fail its condition at batch index {index}"
    );
}

pub(crate) async fn get_one<S: Store>(
    store: &S,
    partition: &str,
    key: &str,
    now_ms: u64,
) -> Option<Item> {
    let mut items = ok(
        store.get(partition, &[key], now_ms).await,
        format!("get {key:?}"),
    );
    assert_eq!(
        items.len(),
        1,
        "get of one key must return one entry, got {}",
        items.len()
    );
    let item = items.pop().flatten();
    if let Some(item) = &item {
        assert_eq!(item.key, key, "get returned an item with the wrong key");
    }
    item
}

/// Creates `key` (under `Absent`, no expiry) as a check's starting point.
pub(crate) async fn create<S: Store>(
    store: &S,
    partition: &str,
    key: &str,
    value: Vec<u8>,
    now_ms: u64,
) {
    let write = Write::put(key, Condition::Absent, value, None);
    ok(
        store.commit(partition, vec![write], now_ms).await,
        format!("create {key:?}"),
    );
}

pub(crate) async fn list<S: Store>(
    store: &S,
    partition: &str,
    prefix: &str,
    now_ms: u64,
) -> Vec<String> {
    ok(
        store.list(partition, prefix, now_ms).await,
        format!("list {prefix:?}"),
    )
}

#[track_caller]
pub(crate) fn expect_item(
    item: Option<&Item>,
    version: u64,
    value: &[u8],
    expires_at_ms: Option<u64>,
    what: &str,
) {
    let item = item.unwrap_or_else(|| panic!("{what}: the item must be present"));
    assert_eq!(item.version, version, "{what}: version");
    assert_bytes(&item.value, value, what);
    assert_eq!(item.expires_at_ms, expires_at_ms, "{what}: expires_at_ms");
}

#[track_caller]
pub(crate) fn assert_bytes(actual: &[u8], expected: &[u8], what: &str) {
    if actual != expected {
        let at = actual
            .iter()
            .zip(expected)
            .position(|(a, b)| a != b)
            .unwrap_or(actual.len().min(expected.len()));
        if expected.len() <= 64 && actual.len() <= 64 {
            panic!(
                "{what}: value is {:?}, expected {:?}",
                String::from_utf8_lossy(actual),
                String::from_utf8_lossy(expected)
            );
        }
        panic!(
            "{what}: value differs: read {} bytes, wrote {}, first difference at offset {at}",
            actual.len(),
            expected.len()
        );
    }
}
