//! The conformance suite every [`handoff_core::Store`] implementation must pass.
//!
//! The in-memory store ([`handoff_core::store::memory::MemoryStore`]) is the reference: every
//! check here describes its behaviour, and a backend that passes all of them can stand in for it.
//!
//! # Using it
//!
//! In a test file of the backend's crate, expand one `#[test]` per check:
//!
//! ```no_run
//! // tests/conformance.rs of a store crate
//! use handoff_core::store::memory::MemoryStore;
//!
//! // Plain `#[test]`s, each driven by `futures::executor::block_on`
//! // (for stores that need no particular runtime):
//! handoff_store_conformance::store_conformance_tests!(MemoryStore::new());
//!
//! // Or `async` tests under the given attribute (for stores that need, say, tokio):
//! // handoff_store_conformance::store_conformance_tests!(#[tokio::test], make_store().await);
//! # fn main() {}
//! ```
//!
//! The expression is evaluated once per check and must produce a value implementing `Store`;
//! it runs inside an `async` block, so it may `.await`. A store that needs something kept alive
//! next to it (a temporary directory, a container) can be wrapped in [`Guarded`].
//!
//! Or call [`run_all`] with a factory, or any single check with a store.
//!
//! # What the checks assume
//!
//! - Each check works in its own, randomly named partitions (`conformance/<check>/<random>/…`),
//!   so a factory may hand out a shared store (a real DynamoDB table, say) instead of an empty
//!   one, and checks may run in parallel.
//! - Time is injected: every `now_ms` the suite passes is near 2100-01-01, far in the future, so
//!   a backend whose real clock physically deletes expired items (DynamoDB TTL) never touches the
//!   suite's items while it runs.
//! - Concurrency is expressed as many futures polled together by
//!   [`join_all`], each yielding to the others between reading and
//!   writing. That works under any executor and creates real interleavings even for a store whose
//!   futures complete immediately; a store that does its work elsewhere (a thread, a server) gets
//!   all requests in flight at once. Nothing waits on a timer.
//! - Batches never name one key twice (the trait leaves that to the caller).
//! - Every check panics, with a message naming the step, on the first deviation.
//!
//! [`race`] adds an engine-level check a store crate drives with its own concurrency: many
//! identical resumes racing through [`handoff_core::Engine`], exactly one side effect.
//! [`threads`] and [`audit`] are engine-level checks too: a thread's life and erasure, and
//! one thread's audit trail listed from its own chain.
//!
//! [`join_all`]: futures::future::join_all

pub mod audit;
pub mod race;
pub mod threads;

mod batches;
mod concurrency;
mod expiry;
mod listings;
mod patterns;
mod reads;
mod support;
mod writes;

use async_trait::async_trait;
use handoff_core::store::{IndexHit, Item, Store, StoreError, Write};

/// How many concurrent callers the racing checks use.
pub const CONCURRENCY: usize = 16;

/// The suite's "now": 2100-01-01T00:00:00Z in Unix milliseconds.
pub const BASE_MS: u64 = 4_102_444_800_000;

/// The largest integer every backend's number type holds exactly (2^53 - 1), used as a
/// far-future expiry that must round-trip.
pub const FAR_FUTURE_MS: u64 = (1 << 53) - 1;

/// Runs every check, each against a fresh store from `make`.
///
/// `make` may return a fresh empty store or the same shared store each time: every check
/// uses partitions of its own.
pub async fn run_all<S, F>(make: F)
where
    F: Fn() -> S,
    S: Store + 'static,
{
    create_if_absent_is_exclusive(&make()).await;
    compare_and_set_rejects_stale_writers(&make()).await;
    batch_is_all_or_nothing(&make()).await;
    check_fences_without_writing(&make()).await;
    expired_lease_can_be_taken_over(&make()).await;
    delete_removes_items(&make()).await;
    get_keeps_order_and_reports_missing(&make()).await;
    multi_key_get_is_consistent(&make()).await;
    expiry_with_injected_clock(&make()).await;
    large_values_round_trip(&make()).await;
    list_by_prefix_is_sorted_and_bounded(&make()).await;
    partitions_are_isolated(&make()).await;
    concurrent_compare_and_set_loses_no_update(&make()).await;
    effect_executes_exactly_once(&make()).await;
    concurrent_identical_resumes_start_one_run(&make()).await;
    index_lists_across_partitions(&make()).await;
    index_ranks_are_exact_up_to_the_maximum(&make()).await;
    threads::thread_is_erased_whole(std::sync::Arc::new(make())).await;
    audit::audit_lists_one_thread(std::sync::Arc::new(make())).await;
}

/// The name of every check, in [`run_all`] order.
pub const CHECK_NAMES: [&str; 19] = [
    "create_if_absent_is_exclusive",
    "compare_and_set_rejects_stale_writers",
    "batch_is_all_or_nothing",
    "check_fences_without_writing",
    "expired_lease_can_be_taken_over",
    "delete_removes_items",
    "get_keeps_order_and_reports_missing",
    "multi_key_get_is_consistent",
    "expiry_with_injected_clock",
    "large_values_round_trip",
    "list_by_prefix_is_sorted_and_bounded",
    "partitions_are_isolated",
    "concurrent_compare_and_set_loses_no_update",
    "effect_executes_exactly_once",
    "concurrent_identical_resumes_start_one_run",
    "index_lists_across_partitions",
    "index_ranks_are_exact_up_to_the_maximum",
    "thread_is_erased_whole",
    "audit_lists_one_thread",
];

/// Runs the check called `name` (one of [`CHECK_NAMES`]) against `store`; `false` for an
/// unknown name. For hosts that cannot run `cargo test` themselves, e.g. a Worker in workerd
/// exposing each check behind a test-only route.
pub async fn run_named<S: Store + Clone + 'static>(name: &str, store: &S) -> bool {
    match name {
        "create_if_absent_is_exclusive" => create_if_absent_is_exclusive(store).await,
        "compare_and_set_rejects_stale_writers" => {
            compare_and_set_rejects_stale_writers(store).await
        }
        "batch_is_all_or_nothing" => batch_is_all_or_nothing(store).await,
        "check_fences_without_writing" => check_fences_without_writing(store).await,
        "expired_lease_can_be_taken_over" => expired_lease_can_be_taken_over(store).await,
        "delete_removes_items" => delete_removes_items(store).await,
        "get_keeps_order_and_reports_missing" => get_keeps_order_and_reports_missing(store).await,
        "multi_key_get_is_consistent" => multi_key_get_is_consistent(store).await,
        "expiry_with_injected_clock" => expiry_with_injected_clock(store).await,
        "large_values_round_trip" => large_values_round_trip(store).await,
        "list_by_prefix_is_sorted_and_bounded" => list_by_prefix_is_sorted_and_bounded(store).await,
        "partitions_are_isolated" => partitions_are_isolated(store).await,
        "concurrent_compare_and_set_loses_no_update" => {
            concurrent_compare_and_set_loses_no_update(store).await
        }
        "effect_executes_exactly_once" => effect_executes_exactly_once(store).await,
        "concurrent_identical_resumes_start_one_run" => {
            concurrent_identical_resumes_start_one_run(store).await
        }
        "index_lists_across_partitions" => index_lists_across_partitions(store).await,
        "index_ranks_are_exact_up_to_the_maximum" => {
            index_ranks_are_exact_up_to_the_maximum(store).await
        }
        "thread_is_erased_whole" => {
            threads::thread_is_erased_whole(std::sync::Arc::new(store.clone())).await
        }
        "audit_lists_one_thread" => {
            audit::audit_lists_one_thread(std::sync::Arc::new(store.clone())).await
        }
        _ => return false,
    }
    true
}

/// Expands to one test per check against the store built by an expression.
///
/// - `store_conformance_tests!(expr)`: plain `#[test]` functions, each driving its check with
///   `futures::executor::block_on`.
/// - `store_conformance_tests!(#[attr], expr)`: `async fn` tests under `#[attr]`, e.g.
///   `#[tokio::test]` or `#[tokio::test(flavor = "multi_thread")]`.
///
/// `expr` is evaluated inside each test's `async` body (so it may `.await`) and must yield a
/// value implementing [`Store`](handoff_core::Store). The tests are named after the checks.
#[macro_export]
macro_rules! store_conformance_tests {
    ($($args:tt)+) => {
        $crate::__conformance_tests! {
            { $($args)+ }
            create_if_absent_is_exclusive
            compare_and_set_rejects_stale_writers
            batch_is_all_or_nothing
            check_fences_without_writing
            expired_lease_can_be_taken_over
            delete_removes_items
            get_keeps_order_and_reports_missing
            multi_key_get_is_consistent
            expiry_with_injected_clock
            large_values_round_trip
            list_by_prefix_is_sorted_and_bounded
            partitions_are_isolated
            concurrent_compare_and_set_loses_no_update
            effect_executes_exactly_once
            concurrent_identical_resumes_start_one_run
            index_lists_across_partitions
            index_ranks_are_exact_up_to_the_maximum
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_tests {
    ({ #[$attr:meta], $make:expr $(,)? } $($check:ident)*) => {
        $(
            #[$attr]
            async fn $check() {
                let store = $make;
                $crate::$check(&store).await;
            }
        )*
        #[$attr]
        async fn thread_is_erased_whole() {
            let store = $make;
            $crate::threads::thread_is_erased_whole(::std::sync::Arc::new(store)).await;
        }
        #[$attr]
        async fn audit_lists_one_thread() {
            let store = $make;
            $crate::audit::audit_lists_one_thread(::std::sync::Arc::new(store)).await;
        }
    };
    ({ $make:expr $(,)? } $($check:ident)*) => {
        $(
            #[test]
            fn $check() {
                $crate::__private::block_on(async {
                    let store = $make;
                    $crate::$check(&store).await;
                });
            }
        )*
        #[test]
        fn thread_is_erased_whole() {
            $crate::__private::block_on(async {
                let store = $make;
                $crate::threads::thread_is_erased_whole(::std::sync::Arc::new(store)).await;
            });
        }
        #[test]
        fn audit_lists_one_thread() {
            $crate::__private::block_on(async {
                let store = $make;
                $crate::audit::audit_lists_one_thread(::std::sync::Arc::new(store)).await;
            });
        }
    };
}

#[doc(hidden)]
pub mod __private {
    pub use futures::executor::block_on;
}

/// A store kept together with something that must outlive it (a temporary directory, a
/// container handle). Delegates every call to the store; drops the store first, then the guard.
#[derive(Debug)]
pub struct Guarded<S, G> {
    store: S,
    guard: G,
}

impl<S, G> Guarded<S, G> {
    /// Pairs `store` with `guard`.
    pub fn new(store: S, guard: G) -> Self {
        Self { store, guard }
    }
    /// The wrapped store.
    pub fn store(&self) -> &S {
        &self.store
    }
    /// The guard.
    pub fn guard(&self) -> &G {
        &self.guard
    }
}

#[async_trait]
impl<S: Store, G: Send + Sync + 'static> Store for Guarded<S, G> {
    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        self.store.get(partition, keys, now_ms).await
    }
    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        self.store.commit(partition, writes, now_ms).await
    }
    async fn list(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        self.store.list(partition, prefix, now_ms).await
    }
    async fn list_index(
        &self,
        scope: &str,
        after: Option<&IndexHit>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<IndexHit>, StoreError> {
        self.store.list_index(scope, after, limit, now_ms).await
    }
    fn system_name(&self) -> &'static str {
        self.store.system_name()
    }
}

// ---------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------

pub use batches::{batch_is_all_or_nothing, check_fences_without_writing};
pub use concurrency::{
    concurrent_compare_and_set_loses_no_update, create_if_absent_is_exclusive,
    multi_key_get_is_consistent,
};
pub use expiry::expiry_with_injected_clock;
pub use listings::{index_lists_across_partitions, index_ranks_are_exact_up_to_the_maximum};
pub use patterns::{
    concurrent_identical_resumes_start_one_run, effect_executes_exactly_once,
    expired_lease_can_be_taken_over,
};
pub use reads::{
    get_keeps_order_and_reports_missing, large_values_round_trip,
    list_by_prefix_is_sorted_and_bounded, partitions_are_isolated,
};
pub use writes::{compare_and_set_rejects_stale_writers, delete_removes_items};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// `len` bytes of xorshift noise (every byte value occurs, NULs included; incompressible),
/// for backend tests of their own large-value handling.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}
