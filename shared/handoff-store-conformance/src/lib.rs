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

pub mod race;

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use async_trait::async_trait;
use futures::future::join_all;
use handoff_core::store::{Condition, Item, Store, StoreError, Write};
use serde_json::{Value, json};

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
}

/// The name of every check, in [`run_all`] order.
pub const CHECK_NAMES: [&str; 15] = [
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
];

/// Runs the check called `name` (one of [`CHECK_NAMES`]) against `store`; `false` for an
/// unknown name. For hosts that cannot run `cargo test` themselves, e.g. a Worker in workerd
/// exposing each check behind a test-only route.
pub async fn run_named<S: Store>(name: &str, store: &S) -> bool {
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
}

// ---------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------

/// Create-if-absent is exclusive: [`CONCURRENCY`] callers race `Condition::Absent` on one key,
/// each in a batch whose first write (a per-caller marker, also `Absent`) holds. Exactly one
/// commits; every other gets `ConditionFailed { index: 1 }` and its marker is not written.
/// Repeated over three keys.
pub async fn create_if_absent_is_exclusive<S: Store>(store: &S) {
    let ns = Namespace::new("create_if_absent_is_exclusive");
    let p = ns.partition("thread");
    for round in 0..3 {
        let key = format!("run#contended-{round}");
        let marker_prefix = format!("attempt#{round}#");
        let outcomes = join_all((0..CONCURRENCY).map(|i| {
            let (p, key, marker_prefix) = (&p, &key, &marker_prefix);
            async move {
                yield_now().await;
                let writes = vec![
                    Write::put(
                        format!("{marker_prefix}{i:02}"),
                        Condition::Absent,
                        vec![1],
                        None,
                    ),
                    Write::put(
                        key.as_str(),
                        Condition::Absent,
                        format!("created by {i}").into_bytes(),
                        None,
                    ),
                ];
                (i, store.commit(p, writes, BASE_MS).await)
            }
        }))
        .await;

        let winners: Vec<usize> = outcomes
            .iter()
            .filter(|(_, r)| r.is_ok())
            .map(|(i, _)| *i)
            .collect();
        assert_eq!(
            winners.len(),
            1,
            "round {round}: exactly one of {CONCURRENCY} Absent creations must win, winners: {winners:?}"
        );
        let winner = winners[0];
        for (i, outcome) in &outcomes {
            if *i != winner {
                assert_eq!(
                    outcome,
                    &Err(StoreError::ConditionFailed { index: 1 }),
                    "round {round}: caller {i} lost the race and must see the failure at batch index 1"
                );
            }
        }
        let item = get_one(store, &p, &key, BASE_MS).await;
        expect_item(
            item.as_ref(),
            1,
            format!("created by {winner}").as_bytes(),
            None,
            "the created item",
        );
        assert_eq!(
            list(store, &p, &marker_prefix, BASE_MS).await,
            vec![format!("{marker_prefix}{winner:02}")],
            "round {round}: only the winner's batch may have written its marker"
        );
        failed_at(
            store
                .commit(
                    &p,
                    vec![Write::put(key.as_str(), Condition::Absent, vec![], None)],
                    BASE_MS,
                )
                .await,
            0,
            "a later Absent creation of an existing key",
        );
    }
}

/// Compare-and-set on version: versions start at 1 and grow by exactly one per put over a live
/// item (under `Version(v)` the new version is `v + 1`, under `Always` the live version + 1); a writer holding a stale or a future version is rejected and changes nothing;
/// `Version` on a missing key and `Absent` on a present key fail; expiry is stored and replaced.
pub async fn compare_and_set_rejects_stale_writers<S: Store>(store: &S) {
    let ns = Namespace::new("compare_and_set_rejects_stale_writers");
    let p = ns.partition("thread");
    let now = BASE_MS;
    let k = "thread";
    let expiry = Some(BASE_MS + 60_000);

    ok(
        store
            .commit(
                &p,
                vec![Write::put(k, Condition::Absent, b"v1".to_vec(), expiry)],
                now,
            )
            .await,
        "create",
    );
    expect_item(
        get_one(store, &p, k, now).await.as_ref(),
        1,
        b"v1",
        expiry,
        "after create",
    );

    ok(
        store
            .commit(
                &p,
                vec![Write::put(k, Condition::Version(1), b"v2".to_vec(), None)],
                now,
            )
            .await,
        "put at version 1",
    );
    expect_item(
        get_one(store, &p, k, now).await.as_ref(),
        2,
        b"v2",
        None,
        "after the first compare-and-set",
    );

    failed_at(
        store
            .commit(
                &p,
                vec![Write::put(
                    k,
                    Condition::Version(1),
                    b"stale".to_vec(),
                    None,
                )],
                now,
            )
            .await,
        0,
        "a stale writer (version 1 after the item moved to 2)",
    );
    failed_at(
        store
            .commit(
                &p,
                vec![Write::put(
                    k,
                    Condition::Version(3),
                    b"future".to_vec(),
                    None,
                )],
                now,
            )
            .await,
        0,
        "a writer claiming a version the item never had",
    );
    failed_at(
        store
            .commit(
                &p,
                vec![Write::put(k, Condition::Absent, b"again".to_vec(), None)],
                now,
            )
            .await,
        0,
        "an Absent creation over a live item",
    );
    expect_item(
        get_one(store, &p, k, now).await.as_ref(),
        2,
        b"v2",
        None,
        "after rejected writers",
    );

    ok(
        store
            .commit(
                &p,
                vec![Write::put(k, Condition::Always, b"v3".to_vec(), None)],
                now,
            )
            .await,
        "unconditional put",
    );
    expect_item(
        get_one(store, &p, k, now).await.as_ref(),
        3,
        b"v3",
        None,
        "an unconditional put also counts a version",
    );

    ok(
        store
            .commit(
                &p,
                vec![Write::put(k, Condition::Version(3), b"v4".to_vec(), expiry)],
                now,
            )
            .await,
        "put at version 3",
    );
    expect_item(
        get_one(store, &p, k, now).await.as_ref(),
        4,
        b"v4",
        expiry,
        "after the second compare-and-set",
    );

    failed_at(
        store
            .commit(
                &p,
                vec![Write::put(
                    "missing",
                    Condition::Version(1),
                    b"x".to_vec(),
                    None,
                )],
                now,
            )
            .await,
        0,
        "Version(1) on a key that was never written",
    );
    assert_eq!(
        get_one(store, &p, "missing", now).await,
        None,
        "a rejected put must not create the item"
    );
}

/// A batch is all-or-nothing: one failing condition among three writes (at index 0, 1 or 2)
/// writes none of them, puts and deletes alike, and the error names the *first* failing index.
/// A batch whose conditions all hold applies every write.
pub async fn batch_is_all_or_nothing<S: Store>(store: &S) {
    let ns = Namespace::new("batch_is_all_or_nothing");
    let p = ns.partition("thread");
    let now = BASE_MS;
    ok(
        store
            .commit(
                &p,
                vec![
                    Write::put("b", Condition::Absent, b"b1".to_vec(), None),
                    Write::put("d", Condition::Absent, b"d1".to_vec(), None),
                ],
                now,
            )
            .await,
        "setup",
    );

    let unchanged = async |what: &str| {
        let items = ok(store.get(&p, &["a", "b", "c", "d"], now).await, what);
        assert_eq!(
            items.len(),
            4,
            "{what}: get returned {} results for 4 keys",
            items.len()
        );
        assert_eq!(items[0], None, "{what}: `a` must not have been written");
        expect_item(items[1].as_ref(), 1, b"b1", None, what);
        assert_eq!(items[2], None, "{what}: `c` must not have been written");
        expect_item(items[3].as_ref(), 1, b"d1", None, what);
    };

    failed_at(
        store
            .commit(
                &p,
                vec![
                    Write::put("a", Condition::Absent, b"a1".to_vec(), None),
                    Write::put("b", Condition::Version(7), b"b2".to_vec(), None),
                    Write::delete("d", Condition::Always),
                ],
                now,
            )
            .await,
        1,
        "a batch failing in the middle",
    );
    unchanged("after a batch failing in the middle").await;

    failed_at(
        store
            .commit(
                &p,
                vec![
                    Write::put("a", Condition::Absent, b"a1".to_vec(), None),
                    Write::delete("d", Condition::Version(1)),
                    Write::put("c", Condition::Version(1), b"c1".to_vec(), None),
                ],
                now,
            )
            .await,
        2,
        "a batch failing on its last write",
    );
    unchanged("after a batch failing on its last write").await;

    failed_at(
        store
            .commit(
                &p,
                vec![
                    Write::put("c", Condition::Always, b"c1".to_vec(), None),
                    Write::put("b", Condition::Absent, b"b2".to_vec(), None),
                    Write::put("a", Condition::Version(1), b"a1".to_vec(), None),
                ],
                now,
            )
            .await,
        1,
        "a batch failing on two writes (the first failing index is reported)",
    );
    unchanged("after a batch failing twice").await;

    failed_at(
        store
            .commit(
                &p,
                vec![
                    Write::put("b", Condition::Version(2), b"b2".to_vec(), None),
                    Write::put("a", Condition::Absent, b"a1".to_vec(), None),
                    Write::put("c", Condition::Absent, b"c1".to_vec(), None),
                ],
                now,
            )
            .await,
        0,
        "a batch failing on its first write",
    );
    unchanged("after a batch failing on its first write").await;

    ok(
        store
            .commit(
                &p,
                vec![
                    Write::put("a", Condition::Absent, b"a1".to_vec(), None),
                    Write::put("b", Condition::Version(1), b"b2".to_vec(), None),
                    Write::delete("d", Condition::Version(1)),
                ],
                now,
            )
            .await,
        "a batch whose conditions all hold",
    );
    let items = ok(
        store.get(&p, &["a", "b", "c", "d"], now).await,
        "read after the successful batch",
    );
    expect_item(
        items[0].as_ref(),
        1,
        b"a1",
        None,
        "`a` after the successful batch",
    );
    expect_item(
        items[1].as_ref(),
        2,
        b"b2",
        None,
        "`b` after the successful batch",
    );
    assert_eq!(items[2], None, "`c` was never written");
    assert_eq!(items[3], None, "`d` was deleted by the successful batch");
}

/// `Check` fences without writing: a holding check lets the rest of the batch commit but leaves
/// the checked item (value and version) untouched and never creates a missing one; a failing check
/// anywhere in the batch, before or after puts, blocks it.
pub async fn check_fences_without_writing<S: Store>(store: &S) {
    let ns = Namespace::new("check_fences_without_writing");
    let p = ns.partition("thread");
    let now = BASE_MS;
    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "lease",
                    Condition::Absent,
                    b"holder A".to_vec(),
                    None,
                )],
                now,
            )
            .await,
        "take the lease",
    );

    ok(
        store
            .commit(
                &p,
                vec![
                    Write::check("lease", Condition::Version(1)),
                    Write::put("data", Condition::Always, b"by A".to_vec(), None),
                ],
                now,
            )
            .await,
        "a write fenced by a holding check",
    );
    expect_item(
        get_one(store, &p, "lease", now).await.as_ref(),
        1,
        b"holder A",
        None,
        "a checked item is not written",
    );
    expect_item(
        get_one(store, &p, "data", now).await.as_ref(),
        1,
        b"by A",
        None,
        "the fenced write",
    );

    failed_at(
        store
            .commit(&p, vec![Write::check("lease", Condition::Absent)], now)
            .await,
        0,
        "Check(Absent) on a live item",
    );
    ok(
        store
            .commit(&p, vec![Write::check("ghost", Condition::Absent)], now)
            .await,
        "Check(Absent) on a missing item",
    );
    ok(
        store
            .commit(&p, vec![Write::check("ghost", Condition::Always)], now)
            .await,
        "Check(Always) on a missing item",
    );
    assert_eq!(
        get_one(store, &p, "ghost", now).await,
        None,
        "a Check must not create the item"
    );
    assert_eq!(
        list(store, &p, "", now).await,
        vec!["data".to_owned(), "lease".to_owned()],
        "a Check must not create the item"
    );

    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "lease",
                    Condition::Version(1),
                    b"holder B".to_vec(),
                    None,
                )],
                now,
            )
            .await,
        "move the lease",
    );
    failed_at(
        store
            .commit(
                &p,
                vec![
                    Write::check("lease", Condition::Version(1)),
                    Write::put("data", Condition::Always, b"late A".to_vec(), None),
                ],
                now,
            )
            .await,
        0,
        "a write fenced by a stale check",
    );
    failed_at(
        store
            .commit(
                &p,
                vec![
                    Write::put("data", Condition::Always, b"late A".to_vec(), None),
                    Write::check("lease", Condition::Version(1)),
                ],
                now,
            )
            .await,
        1,
        "a write followed by a stale check",
    );
    expect_item(
        get_one(store, &p, "data", now).await.as_ref(),
        1,
        b"by A",
        None,
        "writes fenced by a failed check",
    );
    ok(
        store
            .commit(
                &p,
                vec![
                    Write::put("data", Condition::Always, b"by B".to_vec(), None),
                    Write::check("lease", Condition::Version(2)),
                ],
                now,
            )
            .await,
        "a write fenced by the current holder",
    );
    expect_item(
        get_one(store, &p, "data", now).await.as_ref(),
        2,
        b"by B",
        None,
        "the current holder's write",
    );
    expect_item(
        get_one(store, &p, "lease", now).await.as_ref(),
        2,
        b"holder B",
        None,
        "the lease after checks",
    );
}

/// An expired lease can be taken over and the old holder's fenced commit then fails, in the
/// shape the design uses: the lease lives inside a long-lived thread record (no store expiry)
/// whose version is the fence. The old holder's fenced commits fail once the new holder moved the
/// version, whatever clock the old holder uses; the new holder's succeed.
pub async fn expired_lease_can_be_taken_over<S: Store>(store: &S) {
    let ns = Namespace::new("expired_lease_can_be_taken_over");
    let p = ns.partition("thread");
    let t0 = BASE_MS;
    let thread = |holder: Option<&str>, expires_at: u64| {
        json!({ "lease": holder.map(|h| json!({ "holder": h, "expires_at": expires_at })) })
            .to_string()
            .into_bytes()
    };
    let fenced = |fence: u64, key: &str, by: &str| {
        vec![
            Write::check("thread", Condition::Version(fence)),
            Write::put(key, Condition::Absent, by.as_bytes().to_vec(), None),
        ]
    };

    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "thread",
                    Condition::Absent,
                    thread(None, 0),
                    None,
                )],
                t0,
            )
            .await,
        "create the thread",
    );
    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "thread",
                    Condition::Version(1),
                    thread(Some("A"), t0 + 1_000),
                    None,
                )],
                t0,
            )
            .await,
        "A takes the lease",
    );
    let a_fence = 2;
    ok(
        store
            .commit(&p, fenced(a_fence, "step#1", "A"), t0 + 500)
            .await,
        "A's fenced commit while it holds the lease",
    );

    // B reads the thread, finds A's lease expired by its own clock and takes it over.
    let seen = get_one(store, &p, "thread", t0 + 1_000)
        .await
        .unwrap_or_else(|| panic!("the thread vanished"));
    assert_eq!(
        seen.version, a_fence,
        "the thread after A's fenced commit (a Check does not move the version)"
    );
    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "thread",
                    Condition::Version(seen.version),
                    thread(Some("B"), t0 + 2_000),
                    None,
                )],
                t0 + 1_000,
            )
            .await,
        "B takes over the expired lease",
    );
    let b_fence = a_fence + 1;
    expect_item(
        get_one(store, &p, "thread", t0 + 1_000).await.as_ref(),
        b_fence,
        &thread(Some("B"), t0 + 2_000),
        None,
        "the thread after the takeover",
    );

    failed_at(
        store
            .commit(&p, fenced(a_fence, "result", "A"), t0 + 1_001)
            .await,
        0,
        "the old holder's fenced commit",
    );
    failed_at(
        store
            .commit(&p, fenced(a_fence, "result", "A"), t0 + 500)
            .await,
        0,
        "the old holder's fenced commit with its own, older clock",
    );
    failed_at(
        store
            .commit(
                &p,
                vec![Write::put(
                    "thread",
                    Condition::Version(a_fence),
                    thread(None, 0),
                    None,
                )],
                t0 + 1_001,
            )
            .await,
        0,
        "the old holder finishing the thread",
    );
    ok(
        store
            .commit(&p, fenced(b_fence, "result", "B"), t0 + 1_500)
            .await,
        "the new holder's fenced commit",
    );
    expect_item(
        get_one(store, &p, "result", t0 + 1_500).await.as_ref(),
        1,
        b"B",
        None,
        "the committed result",
    );
    expect_item(
        get_one(store, &p, "thread", t0 + 1_500).await.as_ref(),
        b_fence,
        &thread(Some("B"), t0 + 2_000),
        None,
        "the thread at the end",
    );
}

/// `Delete` removes the item (get and list stop showing it), honours its condition, is a no-op on
/// a missing item under `Always`/`Absent`, and a later create starts again at version 1.
pub async fn delete_removes_items<S: Store>(store: &S) {
    let ns = Namespace::new("delete_removes_items");
    let p = ns.partition("thread");
    let now = BASE_MS;
    ok(
        store
            .commit(
                &p,
                vec![Write::put("k", Condition::Absent, b"1".to_vec(), None)],
                now,
            )
            .await,
        "create",
    );
    ok(
        store
            .commit(
                &p,
                vec![Write::put("k", Condition::Version(1), b"2".to_vec(), None)],
                now,
            )
            .await,
        "update",
    );
    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "keep",
                    Condition::Absent,
                    b"kept".to_vec(),
                    None,
                )],
                now,
            )
            .await,
        "create a neighbour",
    );

    failed_at(
        store
            .commit(&p, vec![Write::delete("k", Condition::Version(1))], now)
            .await,
        0,
        "a delete at a stale version",
    );
    failed_at(
        store
            .commit(&p, vec![Write::delete("k", Condition::Absent)], now)
            .await,
        0,
        "Delete(Absent) of a live item",
    );
    expect_item(
        get_one(store, &p, "k", now).await.as_ref(),
        2,
        b"2",
        None,
        "after rejected deletes",
    );

    ok(
        store
            .commit(&p, vec![Write::delete("k", Condition::Version(2))], now)
            .await,
        "delete at the current version",
    );
    assert_eq!(
        get_one(store, &p, "k", now).await,
        None,
        "a deleted item must read as absent"
    );
    assert_eq!(
        list(store, &p, "", now).await,
        vec!["keep".to_owned()],
        "a deleted item must not be listed"
    );
    expect_item(
        get_one(store, &p, "keep", now).await.as_ref(),
        1,
        b"kept",
        None,
        "a neighbour of the deleted item",
    );

    ok(
        store
            .commit(&p, vec![Write::delete("missing", Condition::Always)], now)
            .await,
        "Delete(Always) of a missing item",
    );
    ok(
        store
            .commit(&p, vec![Write::delete("missing", Condition::Absent)], now)
            .await,
        "Delete(Absent) of a missing item",
    );
    failed_at(
        store
            .commit(
                &p,
                vec![Write::delete("missing", Condition::Version(1))],
                now,
            )
            .await,
        0,
        "Delete(Version) of a missing item",
    );

    ok(
        store
            .commit(
                &p,
                vec![Write::put("k", Condition::Absent, b"again".to_vec(), None)],
                now,
            )
            .await,
        "re-create after delete",
    );
    expect_item(
        get_one(store, &p, "k", now).await.as_ref(),
        1,
        b"again",
        None,
        "a re-created item starts at version 1",
    );
    ok(
        store
            .commit(&p, vec![Write::delete("k", Condition::Always)], now)
            .await,
        "Delete(Always) of a live item",
    );
    assert_eq!(
        get_one(store, &p, "k", now).await,
        None,
        "after Delete(Always)"
    );
}

/// A multi-key `get` returns one entry per requested key, in the requested order (duplicates
/// included), with `None` for missing keys and missing partitions; each item carries its key.
pub async fn get_keeps_order_and_reports_missing<S: Store>(store: &S) {
    let ns = Namespace::new("get_keeps_order_and_reports_missing");
    let p = ns.partition("thread");
    let now = BASE_MS;
    for k in ["b", "a", "c"] {
        ok(
            store
                .commit(
                    &p,
                    vec![Write::put(
                        k,
                        Condition::Absent,
                        format!("value of {k}").into_bytes(),
                        None,
                    )],
                    now,
                )
                .await,
            "setup",
        );
    }
    let keys = ["c", "missing", "a", "c", "b", "zz"];
    let items = ok(store.get(&p, &keys, now).await, "multi-key get");
    assert_eq!(
        items.len(),
        keys.len(),
        "get must return one entry per requested key"
    );
    for (key, item) in keys.iter().zip(&items) {
        match *key {
            "missing" | "zz" => assert_eq!(
                item, &None,
                "missing key {key:?} must read as None in its position"
            ),
            _ => {
                let item = item
                    .as_ref()
                    .unwrap_or_else(|| panic!("key {key:?} must be present in its position"));
                assert_eq!(
                    item.key, *key,
                    "the item in this position must be the requested key"
                );
                assert_eq!(
                    item.value,
                    format!("value of {key}").into_bytes(),
                    "value of {key:?}"
                );
                assert_eq!(item.version, 1, "version of {key:?}");
            }
        }
    }
    assert_eq!(
        ok(store.get(&p, &[], now).await, "get of no keys"),
        Vec::<Option<Item>>::new(),
        "get of no keys"
    );
    let other = ns.partition("never-written");
    assert_eq!(
        ok(
            store.get(&other, &["a", "b"], now).await,
            "get from a missing partition"
        ),
        vec![None, None],
        "a missing partition"
    );
}

/// A multi-key `get` reads one consistent snapshot: while a writer repeatedly commits two keys
/// together, concurrent readers of both keys always see the same commit for both.
pub async fn multi_key_get_is_consistent<S: Store>(store: &S) {
    const ROUNDS: u64 = 40;
    let ns = Namespace::new("multi_key_get_is_consistent");
    let p = ns.partition("thread");
    let now = BASE_MS;
    ok(
        store
            .commit(
                &p,
                vec![
                    Write::put("pair#a", Condition::Absent, b"0".to_vec(), None),
                    Write::put("pair#b", Condition::Absent, b"0".to_vec(), None),
                ],
                now,
            )
            .await,
        "setup",
    );
    let done = AtomicBool::new(false);
    let writer = async {
        for n in 1..=ROUNDS {
            yield_now().await;
            let value = n.to_string().into_bytes();
            ok(
                store
                    .commit(
                        &p,
                        vec![
                            Write::put("pair#a", Condition::Version(n), value.clone(), None),
                            Write::put("pair#b", Condition::Version(n), value, None),
                        ],
                        now,
                    )
                    .await,
                format!("writer round {n}"),
            );
        }
        done.store(true, Ordering::SeqCst);
    };
    let readers = join_all((0..4).map(|_| async {
        while !done.load(Ordering::SeqCst) {
            let items = ok(store.get(&p, &["pair#a", "pair#b"], now).await, "reader");
            let [Some(a), Some(b)] = &items[..] else {
                panic!("both keys must be present, got {items:?}");
            };
            assert_eq!(
                (a.version, &a.value),
                (b.version, &b.value),
                "one get of two keys mixed two commits (a at version {}, b at version {})",
                a.version,
                b.version
            );
            yield_now().await;
        }
    }));
    futures::future::join(writer, readers).await;
    let items = ok(
        store.get(&p, &["pair#a", "pair#b"], now).await,
        "final read",
    );
    expect_item(
        items[0].as_ref(),
        ROUNDS + 1,
        ROUNDS.to_string().as_bytes(),
        None,
        "pair#a at the end",
    );
    expect_item(
        items[1].as_ref(),
        ROUNDS + 1,
        ROUNDS.to_string().as_bytes(),
        None,
        "pair#b at the end",
    );
}

/// Expiry with an injected clock. An item reads as present strictly before its `expires_at_ms`
/// and as absent from that millisecond on (get, list, conditions); an expired item satisfies
/// `Absent` and no longer satisfies `Version`. A put over an expired item replaces it as if it
/// never existed: under `Absent` or `Always` the new item has version 1 (versions are predictable
/// from the condition), so a writer holding a version above 1 from before the expiry never
/// matches, and one holding version 1 would: fence on records that do not expire. An item written
/// already expired is absent; a far-future expiry round-trips exactly.
pub async fn expiry_with_injected_clock<S: Store>(store: &S) {
    let ns = Namespace::new("expiry_with_injected_clock");
    let p = ns.partition("thread");
    let t = BASE_MS;
    let expiry = Some(t + 1_000);
    ok(
        store
            .commit(
                &p,
                vec![
                    Write::put("lease", Condition::Absent, b"first".to_vec(), expiry),
                    Write::put("other", Condition::Absent, b"stays".to_vec(), None),
                ],
                t,
            )
            .await,
        "setup",
    );
    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "lease",
                    Condition::Version(1),
                    b"second".to_vec(),
                    expiry,
                )],
                t,
            )
            .await,
        "update before expiry",
    );

    expect_item(
        get_one(store, &p, "lease", t + 999).await.as_ref(),
        2,
        b"second",
        expiry,
        "one millisecond before expiry",
    );
    assert_eq!(
        list(store, &p, "", t + 999).await,
        vec!["lease".to_owned(), "other".to_owned()],
        "list before expiry"
    );
    assert_eq!(
        get_one(store, &p, "lease", t + 1_000).await,
        None,
        "an item must read as absent at its expires_at_ms"
    );
    assert_eq!(
        get_one(store, &p, "lease", t + 86_400_000).await,
        None,
        "an item must read as absent long after expiry"
    );
    assert_eq!(
        list(store, &p, "", t + 1_000).await,
        vec!["other".to_owned()],
        "list must skip expired items"
    );
    let both = ok(
        store.get(&p, &["lease", "other"], t + 1_000).await,
        "multi-key get after expiry",
    );
    assert_eq!(both[0], None, "an expired item in a multi-key get");
    expect_item(
        both[1].as_ref(),
        1,
        b"stays",
        None,
        "a non-expiring item in a multi-key get",
    );

    failed_at(
        store
            .commit(
                &p,
                vec![Write::put(
                    "lease",
                    Condition::Version(2),
                    b"x".to_vec(),
                    None,
                )],
                t + 1_000,
            )
            .await,
        0,
        "Version on an expired item",
    );
    failed_at(
        store
            .commit(
                &p,
                vec![Write::delete("lease", Condition::Version(2))],
                t + 1_000,
            )
            .await,
        0,
        "Delete(Version) of an expired item",
    );
    failed_at(
        store
            .commit(
                &p,
                vec![Write::check("lease", Condition::Version(2))],
                t + 1_000,
            )
            .await,
        0,
        "Check(Version) on an expired item",
    );
    ok(
        store
            .commit(
                &p,
                vec![Write::check("lease", Condition::Absent)],
                t + 1_000,
            )
            .await,
        "Check(Absent) on an expired item",
    );

    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "lease",
                    Condition::Absent,
                    b"third".to_vec(),
                    None,
                )],
                t + 1_000,
            )
            .await,
        "Absent put over an expired item",
    );
    expect_item(
        get_one(store, &p, "lease", t + 1_000).await.as_ref(),
        1,
        b"third",
        None,
        "a put over an expired item replaces it as if it never existed",
    );
    failed_at(
        store
            .commit(
                &p,
                vec![Write::put(
                    "lease",
                    Condition::Version(2),
                    b"stale".to_vec(),
                    None,
                )],
                t,
            )
            .await,
        0,
        "a writer holding the version read before the expiry (with its own old clock)",
    );
    expect_item(
        get_one(store, &p, "lease", t).await.as_ref(),
        1,
        b"third",
        None,
        "after the stale writer",
    );

    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "temp",
                    Condition::Absent,
                    b"t1".to_vec(),
                    Some(t + 2_000),
                )],
                t,
            )
            .await,
        "create temp",
    );
    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "temp",
                    Condition::Always,
                    b"t2".to_vec(),
                    Some(t + 2_000),
                )],
                t,
            )
            .await,
        "Always over a live item",
    );
    expect_item(
        get_one(store, &p, "temp", t).await.as_ref(),
        2,
        b"t2",
        Some(t + 2_000),
        "Always over a live item counts on",
    );
    ok(
        store
            .commit(
                &p,
                vec![Write::put("temp", Condition::Always, b"t3".to_vec(), None)],
                t + 2_000,
            )
            .await,
        "Always over an expired item",
    );
    expect_item(
        get_one(store, &p, "temp", t + 2_000).await.as_ref(),
        1,
        b"t3",
        None,
        "Always over an expired item starts at version 1",
    );

    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "born-expired",
                    Condition::Absent,
                    b"x".to_vec(),
                    Some(t + 5),
                )],
                t + 10,
            )
            .await,
        "a put whose expiry has already passed",
    );
    assert_eq!(
        get_one(store, &p, "born-expired", t + 10).await,
        None,
        "an item written already expired reads as absent"
    );
    assert!(
        !list(store, &p, "", t + 10)
            .await
            .contains(&"born-expired".to_owned()),
        "an item written already expired is not listed"
    );

    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "far",
                    Condition::Absent,
                    b"far".to_vec(),
                    Some(FAR_FUTURE_MS),
                )],
                t,
            )
            .await,
        "far-future expiry",
    );
    expect_item(
        get_one(store, &p, "far", t).await.as_ref(),
        1,
        b"far",
        Some(FAR_FUTURE_MS),
        "a far-future expiry round-trips",
    );
}

/// Large values round-trip byte for byte: empty, one byte, 1 MiB and 5 MiB of noise (every
/// byte value, NULs included), alone and read together, and a 5 MiB value replaced by another.
pub async fn large_values_round_trip<S: Store>(store: &S) {
    let ns = Namespace::new("large_values_round_trip");
    let p = ns.partition("thread");
    let now = BASE_MS;
    let cases = [
        ("empty", 0, 1),
        ("one-byte", 1, 2),
        ("one-mib", 1 << 20, 3),
        ("five-mib", 5 << 20, 4),
    ];
    for (key, len, seed) in cases {
        let value = noise(len, seed);
        ok(
            store
                .commit(
                    &p,
                    vec![Write::put(key, Condition::Absent, value.clone(), None)],
                    now,
                )
                .await,
            format!("put {key}"),
        );
        let item = get_one(store, &p, key, now)
            .await
            .unwrap_or_else(|| panic!("{key} must read back"));
        assert_eq!(item.version, 1, "version of {key}");
        assert_bytes(&item.value, &value, key);
    }
    let items = ok(
        store.get(&p, &["five-mib", "empty", "one-mib"], now).await,
        "get of the large values together",
    );
    for ((key, len, seed), item) in [cases[3], cases[0], cases[2]].into_iter().zip(&items) {
        let item = item
            .as_ref()
            .unwrap_or_else(|| panic!("{key} must read back in a multi-key get"));
        assert_bytes(&item.value, &noise(len, seed), key);
    }
    let replacement = noise(5 << 20, 5);
    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "five-mib",
                    Condition::Version(1),
                    replacement.clone(),
                    None,
                )],
                now,
            )
            .await,
        "replace five-mib",
    );
    let item = get_one(store, &p, "five-mib", now)
        .await
        .unwrap_or_else(|| panic!("five-mib must read back after replacement"));
    assert_eq!(item.version, 2, "version of the replaced value");
    assert_bytes(&item.value, &replacement, "five-mib after replacement");
}

/// `list` returns the live keys of one partition that start with the prefix, sorted by their
/// UTF-8 bytes; the prefix is literal (no `LIKE` wildcards, case-sensitive); keys of other
/// partitions, including partitions whose names extend this one's, never appear.
pub async fn list_by_prefix_is_sorted_and_bounded<S: Store>(store: &S) {
    let ns = Namespace::new("list_by_prefix_is_sorted_and_bounded");
    let p = ns.partition("t1");
    let sibling = ns.partition("t10");
    let now = BASE_MS;
    let keys = [
        "run#2",
        "run#10",
        "run#1",
        "run#1#part#0",
        "run",
        "ru",
        "resume#x",
        "run_x",
        "runAB",
        "runab",
        "z",
        "é",
        "a",
        "10%x",
        "10ab",
        "Run#9",
    ];
    for k in keys {
        ok(
            store
                .commit(
                    &p,
                    vec![Write::put(
                        k,
                        Condition::Absent,
                        k.as_bytes().to_vec(),
                        None,
                    )],
                    now,
                )
                .await,
            "setup",
        );
    }
    for k in ["run#3", "run#4", "a"] {
        ok(
            store
                .commit(
                    &sibling,
                    vec![Write::put(k, Condition::Absent, vec![], None)],
                    now,
                )
                .await,
            "setup of the sibling partition",
        );
    }
    let expected = |prefix: &str| {
        let mut v: Vec<String> = keys
            .iter()
            .filter(|k| k.starts_with(prefix))
            .map(|k| (*k).to_owned())
            .collect();
        v.sort();
        v
    };
    for prefix in [
        "run#", "run", "run_", "runA", "10%", "é", "", "r", "nothing",
    ] {
        assert_eq!(
            list(store, &p, prefix, now).await,
            expected(prefix),
            "list with prefix {prefix:?}"
        );
    }
    assert_eq!(
        list(store, &p, "run#", now).await,
        ["run#1", "run#1#part#0", "run#10", "run#2"]
            .map(str::to_owned)
            .to_vec(),
        "list is sorted bytewise"
    );
    assert_eq!(
        list(store, &sibling, "", now).await,
        ["a", "run#3", "run#4"].map(str::to_owned).to_vec(),
        "list of the sibling partition"
    );
    assert_eq!(
        list(store, &ns.partition("t"), "", now).await,
        Vec::<String>::new(),
        "list of a partition that is a prefix of others"
    );
    assert_eq!(
        list(store, &ns.partition("never-written"), "", now).await,
        Vec::<String>::new(),
        "list of a missing partition"
    );
}

/// Partitions are isolated: the same key in two partitions (one named as a prefix of the other)
/// is two items with their own versions; conditions, deletes and failed batches in one never
/// see or touch the other.
pub async fn partitions_are_isolated<S: Store>(store: &S) {
    let ns = Namespace::new("partitions_are_isolated");
    let pa = ns.partition("t1");
    let pb = ns.partition("t10");
    let now = BASE_MS;
    ok(
        store
            .commit(
                &pa,
                vec![Write::put("k", Condition::Absent, b"a1".to_vec(), None)],
                now,
            )
            .await,
        "create in a",
    );
    ok(
        store
            .commit(
                &pb,
                vec![Write::put("k", Condition::Absent, b"b1".to_vec(), None)],
                now,
            )
            .await,
        "the same key is absent in b",
    );
    ok(
        store
            .commit(
                &pa,
                vec![Write::put("k", Condition::Version(1), b"a2".to_vec(), None)],
                now,
            )
            .await,
        "update in a",
    );
    expect_item(
        get_one(store, &pa, "k", now).await.as_ref(),
        2,
        b"a2",
        None,
        "k in a",
    );
    expect_item(
        get_one(store, &pb, "k", now).await.as_ref(),
        1,
        b"b1",
        None,
        "k in b after updating a",
    );
    failed_at(
        store
            .commit(&pb, vec![Write::check("k", Condition::Version(2))], now)
            .await,
        0,
        "b's condition must not see a's version",
    );
    failed_at(
        store
            .commit(
                &pa,
                vec![
                    Write::put("only-a", Condition::Absent, vec![], None),
                    Write::check("k", Condition::Version(1)),
                ],
                now,
            )
            .await,
        1,
        "a failed batch in a",
    );
    ok(
        store
            .commit(&pa, vec![Write::delete("k", Condition::Version(2))], now)
            .await,
        "delete in a",
    );
    expect_item(
        get_one(store, &pb, "k", now).await.as_ref(),
        1,
        b"b1",
        None,
        "k in b after deleting it in a",
    );
    assert_eq!(
        list(store, &pa, "", now).await,
        Vec::<String>::new(),
        "list of a"
    );
    assert_eq!(
        list(store, &pb, "", now).await,
        vec!["k".to_owned()],
        "list of b"
    );
}

/// No lost update: [`CONCURRENCY`] callers each add themselves to a JSON counter with a
/// read / `Version(v)` put / retry-on-conflict loop. The final counter is exactly
/// [`CONCURRENCY`], every caller appears once, and the version counts every successful put.
pub async fn concurrent_compare_and_set_loses_no_update<S: Store>(store: &S) {
    let ns = Namespace::new("concurrent_compare_and_set_loses_no_update");
    let p = ns.partition("thread");
    let now = BASE_MS;
    let initial = json!({ "counter": 0, "by": [] });
    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "thread",
                    Condition::Absent,
                    initial.to_string().into_bytes(),
                    None,
                )],
                now,
            )
            .await,
        "setup",
    );
    let conflicts = AtomicUsize::new(0);
    join_all((0..CONCURRENCY).map(|i| {
        let (p, conflicts) = (&p, &conflicts);
        async move {
            for _attempt in 0..CONCURRENCY * 100 {
                let item = get_one(store, p, "thread", now)
                    .await
                    .unwrap_or_else(|| panic!("caller {i}: the counter vanished"));
                let mut value: Value = serde_json::from_slice(&item.value)
                    .unwrap_or_else(|e| panic!("caller {i}: stored JSON is corrupt: {e}"));
                let counter = value["counter"]
                    .as_u64()
                    .unwrap_or_else(|| panic!("caller {i}: no counter in {value}"));
                value["counter"] = json!(counter + 1);
                value["by"]
                    .as_array_mut()
                    .unwrap_or_else(|| panic!("caller {i}: no `by` in stored JSON"))
                    .push(json!(i));
                yield_now().await;
                let write = Write::put(
                    "thread",
                    Condition::Version(item.version),
                    value.to_string().into_bytes(),
                    None,
                );
                match store.commit(p, vec![write], now).await {
                    Ok(()) => return,
                    Err(StoreError::ConditionFailed { index: 0 }) => {
                        conflicts.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => panic!("caller {i}: unexpected store error {e:?}"),
                }
            }
            panic!(
                "caller {i}: no successful compare-and-set in {} attempts",
                CONCURRENCY * 100
            );
        }
    }))
    .await;
    let item = get_one(store, &p, "thread", now)
        .await
        .unwrap_or_else(|| panic!("the counter vanished"));
    let value: Value = serde_json::from_slice(&item.value)
        .unwrap_or_else(|e| panic!("stored JSON is corrupt: {e}"));
    assert_eq!(
        value["counter"],
        json!(CONCURRENCY),
        "lost update: final value {value}"
    );
    let mut by: Vec<u64> = value["by"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    by.sort_unstable();
    assert_eq!(
        by,
        (0..CONCURRENCY as u64).collect::<Vec<_>>(),
        "every caller must appear exactly once"
    );
    assert_eq!(
        item.version,
        CONCURRENCY as u64 + 1,
        "one version per successful put"
    );
}

/// An effect executes exactly once per key: for each of three keys, [`CONCURRENCY`] callers race
/// to create `effect#k` with `Absent`; only a caller whose creation committed runs the "side
/// effect" (an external counter) and then records the result with `Version(1)`. Every counter
/// ends at 1 and every loser finds the winner's record.
pub async fn effect_executes_exactly_once<S: Store>(store: &S) {
    const KEYS: usize = 3;
    let ns = Namespace::new("effect_executes_exactly_once");
    let p = ns.partition("thread");
    let now = BASE_MS;
    let executed: Vec<AtomicUsize> = (0..KEYS).map(|_| AtomicUsize::new(0)).collect();
    let outcomes = join_all((0..KEYS * CONCURRENCY).map(|n| {
        let (k, i) = (n % KEYS, n / KEYS);
        let (p, executed) = (&p, &executed);
        async move {
            let key = format!("effect#{k}");
            yield_now().await;
            let started = json!({ "status": "started", "by": i })
                .to_string()
                .into_bytes();
            match store
                .commit(
                    p,
                    vec![Write::put(key.as_str(), Condition::Absent, started, None)],
                    now,
                )
                .await
            {
                Ok(()) => {
                    executed[k].fetch_add(1, Ordering::SeqCst);
                    yield_now().await;
                    let done =
                        json!({ "status": "done", "by": i, "result": format!("charged by {i}") })
                            .to_string()
                            .into_bytes();
                    let recorded = store
                        .commit(
                            p,
                            vec![Write::put(key.as_str(), Condition::Version(1), done, None)],
                            now,
                        )
                        .await;
                    Some((k, i, recorded))
                }
                Err(StoreError::ConditionFailed { index: 0 }) => {
                    let item = get_one(store, p, &key, now)
                        .await
                        .unwrap_or_else(|| panic!("caller {i} lost {key} but finds no record"));
                    let value: Value = serde_json::from_slice(&item.value)
                        .unwrap_or_else(|e| panic!("corrupt effect record: {e}"));
                    assert_ne!(
                        value["by"],
                        json!(i),
                        "caller {i} lost the race for {key} but the record names it"
                    );
                    None
                }
                Err(e) => panic!("caller {i}: unexpected store error {e:?}"),
            }
        }
    }))
    .await;
    for (k, count) in executed.iter().enumerate() {
        assert_eq!(
            count.load(Ordering::SeqCst),
            1,
            "effect#{k} must execute exactly once"
        );
        let winners: Vec<usize> = outcomes
            .iter()
            .flatten()
            .filter(|(key, _, _)| *key == k)
            .map(|(_, i, _)| *i)
            .collect();
        assert_eq!(
            winners.len(),
            1,
            "effect#{k}: exactly one caller may create the record, got {winners:?}"
        );
        for (_, i, recorded) in outcomes.iter().flatten().filter(|(key, _, _)| *key == k) {
            assert_eq!(
                recorded,
                &Ok(()),
                "effect#{k}: caller {i} created the record and must be able to complete it at version 1"
            );
        }
        let item = get_one(store, &p, &format!("effect#{k}"), now)
            .await
            .unwrap_or_else(|| panic!("effect#{k} has no record"));
        let value: Value = serde_json::from_slice(&item.value)
            .unwrap_or_else(|e| panic!("corrupt effect record: {e}"));
        assert_eq!(item.version, 2, "effect#{k}: created once, completed once");
        assert_eq!(
            value,
            json!({ "status": "done", "by": winners[0], "result": format!("charged by {}", winners[0]) }),
            "effect#{k}'s record"
        );
    }
}

/// N concurrent identical resumes start one run: [`CONCURRENCY`] callers read an interrupted
/// thread and each try to start their own run with one batch (thread at the read version,
/// `resume#answer` absent, `run#<id>` absent). Exactly one batch commits; that run executes the
/// effect once; every other caller finds the resume record pointing at the winner's run, whose
/// record exists (it was created atomically with the resume record).
pub async fn concurrent_identical_resumes_start_one_run<S: Store>(store: &S) {
    let ns = Namespace::new("concurrent_identical_resumes_start_one_run");
    let p = ns.partition("thread");
    let now = BASE_MS;
    let interrupted = json!({ "status": "interrupted" }).to_string().into_bytes();
    ok(
        store
            .commit(
                &p,
                vec![Write::put("thread", Condition::Absent, interrupted, None)],
                now,
            )
            .await,
        "setup",
    );
    let executed = AtomicUsize::new(0);
    let outcomes = join_all((0..CONCURRENCY).map(|i| {
        let (p, executed) = (&p, &executed);
        async move {
            let run_id = format!("run-{i:02}");
            let snapshot = ok(store.get(p, &["thread", "resume#answer"], now).await, "read the thread");
            if let Some(resume) = &snapshot[1] {
                return (i, false, String::from_utf8_lossy(&resume.value).into_owned());
            }
            let thread = snapshot[0].as_ref().unwrap_or_else(|| panic!("caller {i}: the thread vanished"));
            yield_now().await;
            let running = json!({ "status": "running", "run": run_id }).to_string().into_bytes();
            let writes = vec![
                Write::put("thread", Condition::Version(thread.version), running, None),
                Write::put("resume#answer", Condition::Absent, run_id.clone().into_bytes(), None),
                Write::put(format!("run#{run_id}"), Condition::Absent, b"running".to_vec(), None),
            ];
            match store.commit(p, writes, now).await {
                Ok(()) => {
                    yield_now().await;
                    match store.commit(p, vec![Write::put("effect#charge", Condition::Absent, run_id.clone().into_bytes(), None)], now).await {
                        Ok(()) => {
                            executed.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(StoreError::ConditionFailed { index: 0 }) => {}
                        Err(e) => panic!("caller {i}: unexpected store error {e:?}"),
                    }
                    (i, true, run_id)
                }
                Err(StoreError::ConditionFailed { index }) => {
                    assert!(index <= 1, "caller {i}: the batch can only fail on the thread or the resume record, not at {index}");
                    let resume = get_one(store, p, "resume#answer", now).await.unwrap_or_else(|| panic!("caller {i}: lost the race but finds no resume record"));
                    (i, false, String::from_utf8_lossy(&resume.value).into_owned())
                }
                Err(e) => panic!("caller {i}: unexpected store error {e:?}"),
            }
        }
    }))
    .await;
    let winners: Vec<&String> = outcomes
        .iter()
        .filter(|(_, started, _)| *started)
        .map(|(_, _, run)| run)
        .collect();
    assert_eq!(
        winners.len(),
        1,
        "exactly one resume may start a run, started: {winners:?}"
    );
    let winner = winners[0].clone();
    for (i, _, run) in &outcomes {
        assert_eq!(run, &winner, "caller {i} must replay the winner's run");
    }
    assert_eq!(
        executed.load(Ordering::SeqCst),
        1,
        "the effect must execute once"
    );
    assert_eq!(
        list(store, &p, "run#", now).await,
        vec![format!("run#{winner}")],
        "exactly one run record"
    );
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// A unique partition namespace for one run of one check.
struct Namespace(String);

impl Namespace {
    fn new(check: &str) -> Self {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(SEQ.fetch_add(1, Ordering::Relaxed));
        // Processes sharing one backend (a DynamoDB table) must not collide; wasm
        // hosts have no process id (and a fresh isolate per test instance).
        #[cfg(not(target_family = "wasm"))]
        hasher.write_u32(std::process::id());
        Self(format!("conformance/{check}/{:016x}", hasher.finish()))
    }

    fn partition(&self, name: &str) -> String {
        format!("{}/{name}", self.0)
    }
}

/// Lets every other future polled by the same `join_all` run before continuing.
fn yield_now() -> YieldNow {
    YieldNow(false)
}

struct YieldNow(bool);

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
fn ok<T>(result: Result<T, StoreError>, what: impl std::fmt::Display) -> T {
    result.unwrap_or_else(|e| panic!("{what}: unexpected store error {e:?}"))
}

#[track_caller]
fn failed_at(result: Result<(), StoreError>, index: usize, what: &str) {
    assert_eq!(
        result,
        Err(StoreError::ConditionFailed { index }),
        "{what} must fail its condition at batch index {index}"
    );
}

async fn get_one<S: Store>(store: &S, partition: &str, key: &str, now_ms: u64) -> Option<Item> {
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

async fn list<S: Store>(store: &S, partition: &str, prefix: &str, now_ms: u64) -> Vec<String> {
    ok(
        store.list(partition, prefix, now_ms).await,
        format!("list {prefix:?}"),
    )
}

#[track_caller]
fn expect_item(
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
fn assert_bytes(actual: &[u8], expected: &[u8], what: &str) {
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
