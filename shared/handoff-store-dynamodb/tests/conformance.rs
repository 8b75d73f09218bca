//! `DynamoStore` against a real `moto_server`: the whole conformance suite, round-trip counts,
//! batch reads and a cancelled transaction's failing index. How items are kept (chunks,
//! compression, expiry) is in `items.rs`, listings in `listings.rs`, faults in `faults.rs`,
//! the table itself in `table.rs`.
//!
//! One server per test binary (started on first use, on a free port), one fresh table per test.

mod support;

use handoff_core::{Condition, Store, StoreError, Write};
use handoff_store_conformance::{noise, store_conformance_tests};
use handoff_store_dynamodb::DynamoStore;
use support::{NOW, calls, chunk_count, counts, fresh_store, moto};

store_conformance_tests!(#[tokio::test], fresh_store().await);

#[tokio::test]
async fn round_trip_counts() {
    let store = fresh_store().await;
    let p = "counts";
    let put = |k: &str, c: Condition| Write::put(k, c, b"{}".to_vec(), None);

    let (r, n) = calls(
        &store,
        store.commit(p, vec![put("a", Condition::Absent)], NOW),
    )
    .await;
    r.unwrap();
    assert_eq!(n, counts(&[("PutItem", 1)]), "a one-write commit");

    let (r, n) = calls(&store, store.get(p, &["a"], NOW)).await;
    assert_eq!(r.unwrap()[0].as_ref().map(|i| i.version), Some(1));
    assert_eq!(n, counts(&[("GetItem", 1)]), "a one-key get");

    let (r, n) = calls(
        &store,
        store.commit(
            p,
            vec![put("a", Condition::Version(1)), put("b", Condition::Absent)],
            NOW,
        ),
    )
    .await;
    r.unwrap();
    assert_eq!(
        n,
        counts(&[("TransactWriteItems", 1)]),
        "a two-write commit"
    );

    let (r, n) = calls(&store, store.get(p, &["a", "b", "missing", "a"], NOW)).await;
    let items = r.unwrap();
    assert_eq!(
        items
            .iter()
            .map(|i| i.as_ref().map(|i| i.version))
            .collect::<Vec<_>>(),
        [Some(2), Some(1), None, Some(2)]
    );
    assert_eq!(n, counts(&[("TransactGetItems", 1)]), "a multi-key get");

    let (r, n) = calls(&store, store.get(p, &[], NOW)).await;
    assert!(r.unwrap().is_empty());
    assert_eq!(n, counts(&[]), "a get of no keys");

    let (r, n) = calls(&store, store.list(p, "", NOW)).await;
    assert_eq!(r.unwrap(), ["a", "b"]);
    assert_eq!(n, counts(&[("Query", 1)]), "a list");

    let (r, n) = calls(
        &store,
        store.commit(p, vec![Write::check("a", Condition::Version(2))], NOW),
    )
    .await;
    r.unwrap();
    assert_eq!(n, counts(&[("GetItem", 1)]), "a one-check commit");

    let (r, n) = calls(
        &store,
        store.commit(p, vec![Write::check("a", Condition::Always)], NOW),
    )
    .await;
    r.unwrap();
    assert_eq!(n, counts(&[]), "a commit of Check(Always) only");
    let (r, n) = calls(&store, store.commit(p, vec![], NOW)).await;
    r.unwrap();
    assert_eq!(n, counts(&[]), "an empty commit");

    // Unconditional puts: this store has seen `a` live, so it updates in one call.
    let (r, n) = calls(
        &store,
        store.commit(p, vec![put("a", Condition::Always)], NOW),
    )
    .await;
    r.unwrap();
    assert_eq!(
        n,
        counts(&[("UpdateItem", 1)]),
        "Always over a key known live"
    );
    // ... and it has seen `missing` absent, so it creates in one call.
    let (r, n) = calls(
        &store,
        store.commit(p, vec![put("missing", Condition::Always)], NOW),
    )
    .await;
    r.unwrap();
    assert_eq!(
        n,
        counts(&[("PutItem", 1)]),
        "Always over a key known absent"
    );
    // A key it knows nothing about is updated, which creates it when absent: one call.
    let (r, n) = calls(
        &store,
        store.commit(p, vec![put("never-seen", Condition::Always)], NOW),
    )
    .await;
    r.unwrap();
    assert_eq!(
        n,
        counts(&[("UpdateItem", 1)]),
        "Always over an unknown absent key"
    );
    assert_eq!(
        store
            .get(p, &["a", "never-seen"], NOW)
            .await
            .unwrap()
            .iter()
            .map(|i| i.as_ref().map(|i| i.version))
            .collect::<Vec<_>>(),
        [Some(3), Some(1)]
    );

    let (r, n) = calls(
        &store,
        store.commit(p, vec![Write::delete("b", Condition::Version(1))], NOW),
    )
    .await;
    r.unwrap();
    assert_eq!(
        n,
        counts(&[("TransactWriteItems", 1)]),
        "a versioned delete"
    );
    let (r, n) = calls(
        &store,
        store.commit(p, vec![Write::delete("b", Condition::Always)], NOW),
    )
    .await;
    r.unwrap();
    assert_eq!(n, counts(&[("DeleteItem", 1)]), "an unconditional delete");

    // A failed condition is still one call.
    let (r, n) = calls(
        &store,
        store.commit(p, vec![put("a", Condition::Absent)], NOW),
    )
    .await;
    assert_eq!(r, Err(StoreError::ConditionFailed { index: 0 }));
    assert_eq!(n, counts(&[("PutItem", 1)]), "a failed one-write commit");

    // Chunked: a 5 MiB incompressible value is 15 chunks, one BatchWriteItem + the put, and
    // one GetItem + one BatchGetItem to read.
    let big = noise(5 << 20, 7);
    let (r, n) = calls(
        &store,
        store.commit(
            p,
            vec![Write::put("big", Condition::Absent, big.clone(), None)],
            NOW,
        ),
    )
    .await;
    r.unwrap();
    assert_eq!(
        n,
        counts(&[("BatchWriteItem", 1), ("PutItem", 1)]),
        "a chunked put"
    );
    let (r, n) = calls(&store, store.get(p, &["big"], NOW)).await;
    assert_eq!(r.unwrap()[0].as_ref().map(|i| i.value == big), Some(true));
    assert_eq!(
        n,
        counts(&[("BatchGetItem", 1), ("GetItem", 1)]),
        "a chunked get"
    );
    // Replacing it (this store knows the old chunks) also deletes them: one more BatchWriteItem.
    let (r, n) = calls(
        &store,
        store.commit(
            p,
            vec![Write::put(
                "big",
                Condition::Version(1),
                b"small".to_vec(),
                None,
            )],
            NOW,
        ),
    )
    .await;
    r.unwrap();
    assert_eq!(
        n,
        counts(&[("BatchWriteItem", 1), ("PutItem", 1)]),
        "replacing a chunked value"
    );
    assert_eq!(
        chunk_count(&store, p).await,
        0,
        "the replaced value's chunks are gone"
    );
}

#[tokio::test]
async fn wide_gets_use_batch_reads_and_stay_consistent() {
    let store = fresh_store().await;
    let p = "wide";
    let keys: Vec<String> = (0..150).map(|i| format!("k#{i:03}")).collect();
    for group in keys.chunks(50) {
        let writes = group
            .iter()
            .map(|k| Write::put(k.as_str(), Condition::Absent, k.as_bytes().to_vec(), None))
            .collect();
        store.commit(p, writes, NOW).await.unwrap();
    }
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();

    // Over 100 keys: a double collect, 2 × ⌈150/100⌉ BatchGetItem.
    let (r, n) = calls(&store, store.get(p, &refs, NOW)).await;
    let items = r.unwrap();
    assert!(
        items
            .iter()
            .zip(&keys)
            .all(|(i, k)| i.as_ref().is_some_and(|i| i.value == k.as_bytes()))
    );
    assert_eq!(n, counts(&[("BatchGetItem", 4)]));

    // 30 keys: TransactGetItems, which moto 5.2 limits to 25 items (DynamoDB: 100), so moto
    // rejects it and the store falls back to a double collect.
    let (r, n) = calls(&store, store.get(p, &refs[..30], NOW)).await;
    assert!(r.unwrap().iter().all(Option::is_some));
    assert!(
        n == counts(&[("BatchGetItem", 2), ("TransactGetItems", 1)])
            || n == counts(&[("TransactGetItems", 1)]),
        "{n:?}"
    );

    // 25 keys: one TransactGetItems.
    let (r, n) = calls(&store, store.get(p, &refs[..25], NOW)).await;
    assert!(r.unwrap().iter().all(Option::is_some));
    assert_eq!(n, counts(&[("TransactGetItems", 1)]));
}

#[tokio::test]
async fn cancelled_transaction_reports_the_first_failing_index() {
    let store = fresh_store().await;
    let p = "cancel";
    store
        .commit(
            p,
            vec![
                Write::put("lease", Condition::Absent, b"A".to_vec(), None),
                Write::put("data", Condition::Absent, b"1".to_vec(), None),
                Write::put("third", Condition::Absent, b"3".to_vec(), None),
                // Expired from NOW on, and still there (as before TTL deletes it).
                Write::put("new", Condition::Absent, b"old".to_vec(), Some(NOW)),
            ],
            NOW - 1,
        )
        .await
        .unwrap();
    // Index 0 (an unconditional put on a key unknown to this store, which guesses it live or
    // absent, wrongly: a wrong guess must not count as a failure), 1 holds, 2 fails, 3 fails.
    let fresh = DynamoStore::new(moto().client(), store.table_name());
    let batch = vec![
        Write::put("new", Condition::Always, b"x".to_vec(), None),
        Write::check("lease", Condition::Version(1)),
        Write::delete("data", Condition::Version(9)),
        Write::put("third", Condition::Absent, b"B".to_vec(), None),
    ];
    assert_eq!(
        fresh.commit(p, batch, NOW).await,
        Err(StoreError::ConditionFailed { index: 2 })
    );
    let items = store.get(p, &["new", "lease", "data"], NOW).await.unwrap();
    assert_eq!(items[0], None, "nothing of the failed batch is written");
    assert_eq!(
        items[1].as_ref().map(|i| i.value.clone()),
        Some(b"A".to_vec())
    );
    assert_eq!(items[2].as_ref().map(|i| i.version), Some(1));

    // The same batch with the failing writes fixed commits, the guess flipped once.
    let batch = vec![
        Write::put("new", Condition::Always, b"x".to_vec(), None),
        Write::check("lease", Condition::Version(1)),
        Write::delete("data", Condition::Version(1)),
        Write::put("other", Condition::Absent, b"B".to_vec(), None),
    ];
    let (r, n) = calls(&fresh, fresh.commit(p, batch, NOW)).await;
    r.unwrap();
    assert_eq!(
        n,
        counts(&[("TransactWriteItems", 2)]),
        "one wrong guess, then the commit"
    );
    let items = store.get(p, &["new", "data", "other"], NOW).await.unwrap();
    assert_eq!(items[0].as_ref().map(|i| i.version), Some(1));
    assert_eq!(items[1], None);
    assert_eq!(items[2].as_ref().map(|i| i.version), Some(1));
}
