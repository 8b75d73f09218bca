//! Racing callers: exclusive creation, consistent multi-key reads, no lost update.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use futures::future::join_all;
use handoff_core::store::{Condition, Store, StoreError, Write};
use serde_json::{Value, json};

use crate::support::{Namespace, create, expect_item, failed_at, get_one, list, ok, yield_now};
use crate::{BASE_MS, CONCURRENCY};

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

/// No lost update: [`CONCURRENCY`] callers each add themselves to a JSON counter with a
/// read / `Version(v)` put / retry-on-conflict loop. The final counter is exactly
/// [`CONCURRENCY`], every caller appears once, and the version counts every successful put.
pub async fn concurrent_compare_and_set_loses_no_update<S: Store>(store: &S) {
    let ns = Namespace::new("concurrent_compare_and_set_loses_no_update");
    let p = ns.partition("thread");
    let now = BASE_MS;
    let initial = json!({ "counter": 0, "by": [] });
    create(store, &p, "thread", initial.to_string().into_bytes(), now).await;
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
