//! `DynamoStore` against a real `moto_server`: the whole conformance suite, round-trip counts,
//! chunking, expiry without physical deletion, and faults.
//!
//! One server per test binary (started on first use, on a free port), one fresh table per test.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::types::AttributeValue;
use handoff_core::{Condition, IndexEntry, IndexHit, Store, StoreError, Write};
use handoff_store_conformance::{BASE_MS, noise, store_conformance_tests};
use handoff_store_dynamodb::{DynamoOptions, DynamoStore};
use support::{
    Faults, Moto, client_with, error_body, fresh_store, fresh_store_with, moto, table_name,
};

store_conformance_tests!(#[tokio::test], fresh_store().await);

const NOW: u64 = BASE_MS;

fn unavailable<T>(result: &Result<T, StoreError>) -> bool {
    matches!(result, Err(StoreError::Unavailable(_)))
}

/// Requests the store sent while `f` ran, per operation.
async fn calls<F: Future>(store: &DynamoStore, f: F) -> (F::Output, BTreeMap<String, u64>) {
    let before = store.call_counter().snapshot();
    let out = f.await;
    (out, store.call_counter().since(&before))
}

fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}

/// Every item of the table's partition `pk`, internal ones included, by raw sort key.
async fn raw_items(
    store: &DynamoStore,
    pk: &str,
) -> BTreeMap<String, std::collections::HashMap<String, AttributeValue>> {
    let mut out = BTreeMap::new();
    let mut start = None;
    loop {
        let page = store
            .client()
            .query()
            .table_name(store.table_name())
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", AttributeValue::S(pk.to_owned()))
            .consistent_read(true)
            .set_exclusive_start_key(start.take())
            .send()
            .await
            .expect("raw query");
        for item in page.items.unwrap_or_default() {
            let Some(AttributeValue::S(sk)) = item.get("sk") else {
                panic!("item without sk")
            };
            out.insert(sk.clone(), item);
        }
        match page.last_evaluated_key {
            Some(last) if !last.is_empty() => start = Some(last),
            _ => return out,
        }
    }
}

async fn chunk_count(store: &DynamoStore, pk: &str) -> usize {
    raw_items(store, pk)
        .await
        .keys()
        .filter(|sk| sk.starts_with("~c#"))
        .count()
}

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

#[tokio::test]
async fn chunked_values_round_trip_replace_and_delete() {
    let store = fresh_store().await;
    let p = "chunks";
    let one = noise(1 << 20, 1);
    let five = noise(5 << 20, 2);
    store
        .commit(
            p,
            vec![
                Write::put("run#1", Condition::Absent, one.clone(), None),
                Write::put("run#5", Condition::Absent, five.clone(), None),
                Write::put("small", Condition::Absent, b"s".to_vec(), None),
            ],
            NOW,
        )
        .await
        .unwrap();
    assert_eq!(
        chunk_count(&store, p).await,
        3 + 15,
        "1 MiB = 3 chunks, 5 MiB = 15"
    );
    let items = store
        .get(p, &["run#5", "small", "run#1"], NOW)
        .await
        .unwrap();
    assert!(
        items[0]
            .as_ref()
            .is_some_and(|i| i.value == five && i.version == 1)
    );
    assert!(items[2].as_ref().is_some_and(|i| i.value == one));
    assert_eq!(
        store.list(p, "", NOW).await.unwrap(),
        ["run#1", "run#5", "small"],
        "chunks are never listed"
    );
    assert_eq!(store.list(p, "~", NOW).await.unwrap(), Vec::<String>::new());
    assert_eq!(
        store.list(p, "~c", NOW).await.unwrap(),
        Vec::<String>::new()
    );

    // Replace chunked by chunked: the old chunks go, the new ones stay.
    let five_b = noise(5 << 20, 3);
    store
        .commit(
            p,
            vec![Write::put(
                "run#5",
                Condition::Version(1),
                five_b.clone(),
                None,
            )],
            NOW,
        )
        .await
        .unwrap();
    assert_eq!(chunk_count(&store, p).await, 3 + 15);
    let item = store
        .get(p, &["run#5"], NOW)
        .await
        .unwrap()
        .remove(0)
        .unwrap();
    assert_eq!((item.version, item.value == five_b), (2, true));

    // A store that never saw the value replaces it: correct, but the old chunks stay behind.
    let other = DynamoStore::new(moto().client(), store.table_name());
    other
        .commit(
            p,
            vec![Write::put(
                "run#1",
                Condition::Version(1),
                b"now small".to_vec(),
                None,
            )],
            NOW,
        )
        .await
        .unwrap();
    assert_eq!(
        store.get(p, &["run#1"], NOW).await.unwrap()[0]
            .as_ref()
            .map(|i| i.value.clone()),
        Some(b"now small".to_vec())
    );
    assert_eq!(
        chunk_count(&store, p).await,
        3 + 15,
        "unknown old chunks are left as garbage"
    );

    // Delete: the chunks go with the value.
    store
        .commit(p, vec![Write::delete("run#5", Condition::Version(2))], NOW)
        .await
        .unwrap();
    assert_eq!(store.get(p, &["run#5"], NOW).await.unwrap(), vec![None]);
    assert_eq!(chunk_count(&store, p).await, 3);

    // A failed chunked put leaves no chunks.
    assert_eq!(
        store
            .commit(
                p,
                vec![Write::put(
                    "small",
                    Condition::Absent,
                    noise(2 << 20, 4),
                    None
                )],
                NOW
            )
            .await,
        Err(StoreError::ConditionFailed { index: 0 })
    );
    assert_eq!(chunk_count(&store, p).await, 3);

    // Chunks of an expiring value carry its TTL.
    store
        .commit(
            p,
            vec![Write::put(
                "temp",
                Condition::Absent,
                noise(1 << 20, 5),
                Some(NOW + 1_500),
            )],
            NOW,
        )
        .await
        .unwrap();
    let raw = raw_items(&store, p).await;
    let ttls: Vec<&AttributeValue> = raw
        .iter()
        .filter(|(sk, item)| sk.starts_with("~c#") && item.contains_key("ttl"))
        .map(|(_, item)| &item["ttl"])
        .collect();
    assert_eq!(ttls.len(), 3);
    assert!(
        ttls.iter()
            .all(|t| **t == AttributeValue::N(((NOW + 1_500).div_ceil(1000)).to_string()))
    );
    assert_eq!(raw["temp"]["ttl"], *ttls[0]);
}

#[tokio::test]
async fn compressible_values_are_stored_compressed() {
    let store = fresh_store().await;
    let p = "zip";
    let json = serde_like_json(3 << 20);
    store
        .commit(
            p,
            vec![Write::put("log", Condition::Absent, json.clone(), None)],
            NOW,
        )
        .await
        .unwrap();
    let raw = raw_items(&store, p).await;
    assert_eq!(
        raw["log"].get("z"),
        Some(&AttributeValue::N(json.len().to_string()))
    );
    let stored: usize = raw
        .values()
        .filter_map(|i| match i.get("b").or(i.get("d")) {
            Some(AttributeValue::B(b)) => Some(b.as_ref().len()),
            _ => None,
        })
        .sum();
    assert!(
        stored < json.len() / 5,
        "3 MiB of JSON stored in {stored} bytes"
    );
    assert_eq!(
        store.get(p, &["log"], NOW).await.unwrap()[0]
            .as_ref()
            .map(|i| i.value == json),
        Some(true)
    );

    // Without compression the same value is chunked.
    let plain = fresh_store_with(DynamoOptions::default().with_compression(None)).await;
    plain
        .commit(
            p,
            vec![Write::put("log", Condition::Absent, json.clone(), None)],
            NOW,
        )
        .await
        .unwrap();
    assert_eq!(chunk_count(&plain, p).await, 9);
    assert_eq!(
        plain.get(p, &["log"], NOW).await.unwrap()[0]
            .as_ref()
            .map(|i| i.value == json),
        Some(true)
    );
}

/// JSON-ish text of about `len` bytes.
fn serde_like_json(len: usize) -> Vec<u8> {
    let mut out = b"[".to_vec();
    let mut i = 0u64;
    while out.len() < len {
        out.extend_from_slice(
            format!(
                r#"{{"type":"TEXT_MESSAGE_CONTENT","messageId":"m{}","delta":"token {}"}},"#,
                i / 50,
                i % 997
            )
            .as_bytes(),
        );
        i += 1;
    }
    out.push(b']');
    out
}

#[tokio::test]
async fn a_batch_over_the_transaction_size_limit_moves_values_to_chunks() {
    let store = fresh_store().await;
    let p = "budget";
    // 14 incompressible values of 290 KiB: each fits inline, together 4 MB.
    let values: Vec<Vec<u8>> = (0..14).map(|i| noise(290 * 1024, 100 + i)).collect();
    let writes = values
        .iter()
        .enumerate()
        .map(|(i, v)| Write::put(format!("v{i:02}"), Condition::Absent, v.clone(), None))
        .collect();
    store.commit(p, writes, NOW).await.unwrap();
    assert!(
        chunk_count(&store, p).await > 0,
        "some values went to chunks"
    );
    let keys: Vec<String> = (0..14).map(|i| format!("v{i:02}")).collect();
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    let items = store.get(p, &refs, NOW).await.unwrap();
    for (item, value) in items.iter().zip(&values) {
        assert!(item.as_ref().is_some_and(|i| &i.value == value));
    }
}

#[tokio::test]
async fn expired_items_read_absent_though_moto_keeps_them() {
    let store = fresh_store().await;
    let p = "expiry";
    store
        .commit(
            p,
            vec![
                Write::put(
                    "lease",
                    Condition::Absent,
                    b"me".to_vec(),
                    Some(NOW + 1_000),
                ),
                Write::put(
                    "big",
                    Condition::Absent,
                    noise(1 << 20, 9),
                    Some(NOW + 1_000),
                ),
            ],
            NOW,
        )
        .await
        .unwrap();
    let later = NOW + 1_000;
    assert_eq!(store.get(p, &["lease"], later).await.unwrap(), vec![None]);
    assert_eq!(
        store.get(p, &["lease", "big"], later).await.unwrap(),
        vec![None, None]
    );
    assert_eq!(
        store.list(p, "", later).await.unwrap(),
        Vec::<String>::new()
    );
    // Physically still there, with the TTL attribute DynamoDB would delete it by.
    let raw = raw_items(&store, p).await;
    assert_eq!(raw["lease"]["exp"], AttributeValue::N(later.to_string()));
    assert_eq!(
        raw["lease"]["ttl"],
        AttributeValue::N(later.div_ceil(1000).to_string())
    );
    // ... and replaced as if absent.
    store
        .commit(
            p,
            vec![Write::put(
                "lease",
                Condition::Absent,
                b"you".to_vec(),
                None,
            )],
            later,
        )
        .await
        .unwrap();
    let item = store
        .get(p, &["lease"], later)
        .await
        .unwrap()
        .remove(0)
        .unwrap();
    assert_eq!(
        (item.version, item.value, item.expires_at_ms),
        (1, b"you".to_vec(), None)
    );
    assert!(
        !raw_items(&store, p).await["lease"].contains_key("ttl"),
        "a put without expiry clears ttl"
    );
}

#[tokio::test]
async fn awkward_keys_and_partitions_round_trip() {
    let store = fresh_store().await;
    let keys = ["", "}", "}x", "~", "~c#0#0", "é", "\u{7f}", " space", "a"];
    for p in ["", "~p", "é"] {
        for k in keys {
            store
                .commit(
                    p,
                    vec![Write::put(
                        k,
                        Condition::Absent,
                        k.as_bytes().to_vec(),
                        None,
                    )],
                    NOW,
                )
                .await
                .unwrap_or_else(|e| panic!("put {k:?} in {p:?}: {e}"));
        }
        let items = store.get(p, &keys, NOW).await.unwrap();
        for (k, item) in keys.iter().zip(&items) {
            let item = item.as_ref().unwrap_or_else(|| panic!("{k:?} in {p:?}"));
            assert_eq!(
                (item.key.as_str(), item.value.as_slice()),
                (*k, k.as_bytes())
            );
        }
        let mut sorted: Vec<String> = keys.iter().map(|k| (*k).to_owned()).collect();
        sorted.sort();
        assert_eq!(
            store.list(p, "", NOW).await.unwrap(),
            sorted,
            "list of {p:?}"
        );
        assert_eq!(store.list(p, "}", NOW).await.unwrap(), ["}", "}x"]);
        assert_eq!(store.list(p, "~", NOW).await.unwrap(), ["~", "~c#0#0"]);
    }
    let long = "k".repeat(1100);
    assert!(matches!(
        store
            .commit(
                "p",
                vec![Write::put(long.as_str(), Condition::Absent, vec![], None)],
                NOW
            )
            .await,
        Err(StoreError::TooLarge(_))
    ));
    assert_eq!(
        store.get("p", &[long.as_str()], NOW).await.unwrap(),
        vec![None]
    );
}

fn entry(scope: &str, rank: u64) -> IndexEntry {
    IndexEntry {
        scope: scope.to_owned(),
        rank,
    }
}

/// Every hit of `scope`, `page` at a time.
async fn all_hits(store: &DynamoStore, scope: &str, page: usize, now: u64) -> Vec<IndexHit> {
    let mut hits: Vec<IndexHit> = Vec::new();
    loop {
        let next = store
            .list_index(scope, hits.last(), page, now)
            .await
            .unwrap();
        assert!(next.len() <= page);
        if next.is_empty() {
            return hits;
        }
        hits.extend(next);
    }
}

/// The listing attributes live on the head only (never on chunks); the `UpdateItem` path of
/// an unconditional put sets or removes them; a page of live hits is one `Query`.
#[tokio::test]
async fn listing_attributes_sit_on_heads_and_follow_every_put() {
    let store = fresh_store_with(DynamoOptions::default().with_inline_max_bytes(1024)).await;
    let p = "listed";
    let big = noise(5_000, 3);
    let put = |value: Vec<u8>| Write::put("head", Condition::Always, value, None);
    store
        .commit(p, vec![put(big.clone()).indexed(entry("s", 7))], NOW)
        .await
        .unwrap();
    let raw = raw_items(&store, p).await;
    let head = &raw["head"];
    assert_eq!(head["ls"], AttributeValue::S("s".to_owned()));
    let AttributeValue::S(lo) = &head["lo"] else {
        panic!("lo is a string")
    };
    assert_eq!(
        lo.as_str(),
        format!("{:020}{p}\u{1}\u{1}head", u64::MAX - 7)
    );
    let chunks: Vec<_> = raw.iter().filter(|(sk, _)| sk.starts_with("~c#")).collect();
    assert!(!chunks.is_empty(), "the value is chunked");
    assert!(
        chunks
            .iter()
            .all(|(_, item)| !item.contains_key("ls") && !item.contains_key("lo")),
        "chunks are never listed"
    );

    // Live now (this process wrote it): the next unconditional puts go through UpdateItem.
    let (r, n) = calls(
        &store,
        store.commit(p, vec![put(b"small".to_vec()).indexed(entry("s", 8))], NOW),
    )
    .await;
    r.unwrap();
    assert_eq!(n.get("UpdateItem"), Some(&1), "{n:?}");
    let (hits, n) = calls(&store, store.list_index("s", None, 10, NOW)).await;
    assert_eq!(
        hits.unwrap(),
        [IndexHit {
            rank: 8,
            partition: p.to_owned(),
            key: "head".to_owned()
        }]
    );
    assert_eq!(n, counts(&[("Query", 1)]), "one page, one Query");

    let (r, n) = calls(
        &store,
        store.commit(p, vec![put(b"unlisted".to_vec())], NOW),
    )
    .await;
    r.unwrap();
    assert_eq!(n.get("UpdateItem"), Some(&1), "{n:?}");
    let head = &raw_items(&store, p).await["head"];
    assert!(
        !head.contains_key("ls") && !head.contains_key("lo"),
        "{head:?}"
    );
    assert!(
        store
            .list_index("s", None, 10, NOW)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .list_index("s", None, 0, NOW)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Ties sort by partition, then key, exactly as Rust orders strings, whatever characters they
/// hold; pages of one skip expired items and keep querying until they find a live one.
#[tokio::test]
async fn listings_order_awkward_names_and_skip_expired_items() {
    let store = fresh_store().await;
    let names = ["", "\u{1}", "\u{2}", "a", "a\u{1}", "ab", "}", "~", "é"];
    let mut expected = Vec::new();
    for (i, p) in names.iter().enumerate() {
        for k in ["", "\u{1}", "k", "é"] {
            // Every third item expires at NOW + 1.
            let expires = (i % 3 == 0).then_some(NOW + 1);
            let write = Write::put(k, Condition::Absent, vec![1], expires).indexed(entry("", 5));
            store
                .commit(p, vec![write], NOW)
                .await
                .unwrap_or_else(|e| panic!("put {k:?} in {p:?}: {e}"));
            expected.push((i % 3 == 0, (*p).to_owned(), k.to_owned()));
        }
    }
    // Outranks every other, and expired.
    store
        .commit(
            "top",
            vec![Write::put("k", Condition::Absent, vec![], Some(NOW + 1)).indexed(entry("", 6))],
            NOW,
        )
        .await
        .unwrap();
    expected.sort_by(|a, b| (&a.1, &a.2).cmp(&(&b.1, &b.2)));
    let names_of = |hits: &[IndexHit]| -> Vec<(String, String)> {
        hits.iter()
            .map(|h| (h.partition.clone(), h.key.clone()))
            .collect()
    };
    let live: Vec<(String, String)> = expected
        .iter()
        .filter(|(expiring, ..)| !expiring)
        .map(|(_, p, k)| (p.clone(), k.clone()))
        .collect();
    let mut everything = vec![("top".to_owned(), "k".to_owned())];
    everything.extend(expected.iter().map(|(_, p, k)| (p.clone(), k.clone())));
    assert_eq!(names_of(&all_hits(&store, "", 100, NOW).await), everything);
    assert_eq!(names_of(&all_hits(&store, "", 3, NOW).await), everything);
    assert_eq!(names_of(&all_hits(&store, "", 1, NOW + 1).await), live);
    assert_eq!(names_of(&all_hits(&store, "", 7, NOW + 1).await), live);
    assert!(
        store
            .list_index("other", None, 10, NOW)
            .await
            .unwrap()
            .is_empty()
    );
    // After a hit that is no longer listed (or never was), the page still starts after it.
    let ghost = IndexHit {
        rank: 5,
        partition: "a\u{1}".to_owned(),
        key: "zzz".to_owned(),
    };
    let after = |hit: &IndexHit| -> Vec<(String, String)> {
        live.iter()
            .filter(|(p, k)| (p.as_str(), k.as_str()) > (hit.partition.as_str(), hit.key.as_str()))
            .cloned()
            .collect()
    };
    let after_ghost = store
        .list_index("", Some(&ghost), 100, NOW + 1)
        .await
        .unwrap();
    assert_eq!(names_of(&after_ghost), after(&ghost));
    assert!(after(&ghost).iter().any(|(p, k)| p == "a\u{1}" && k == "é"));
    // A hit too long to have been listed starts at the longest prefix the index takes.
    let long = IndexHit {
        rank: 5,
        partition: "a".repeat(2000),
        key: String::new(),
    };
    let after_long = store
        .list_index("", Some(&long), 100, NOW + 1)
        .await
        .unwrap();
    assert_eq!(names_of(&after_long), after(&long));
    assert!(!after(&long).is_empty() && after(&long).len() < live.len());
}

#[tokio::test]
async fn an_item_too_long_to_list_is_too_large() {
    let store = fresh_store().await;
    let p = "p".repeat(1000);
    let write = Write::put("k".repeat(10), Condition::Absent, vec![], None);
    let r = store
        .commit(&p, vec![write.clone().indexed(entry("s", 1))], NOW)
        .await;
    assert!(matches!(r, Err(StoreError::TooLarge(_))), "{r:?}");
    store.commit(&p, vec![write], NOW).await.unwrap();
    let r = store
        .commit(
            "p",
            vec![
                Write::put("k", Condition::Absent, vec![], None)
                    .indexed(entry(&"s".repeat(3000), 1)),
            ],
            NOW,
        )
        .await;
    assert!(matches!(r, Err(StoreError::TooLarge(_))), "{r:?}");
}

/// A table made before listings: `list_index` says which index is missing (writes work), and
/// `create_table` adds the index, which then lists what was written before.
#[tokio::test]
async fn a_table_without_the_listing_index() {
    let client = moto().client();
    let table = table_name("noindex");
    let attribute = |name: &str| {
        aws_sdk_dynamodb::types::AttributeDefinition::builder()
            .attribute_name(name)
            .attribute_type(aws_sdk_dynamodb::types::ScalarAttributeType::S)
            .build()
            .unwrap()
    };
    let key = |name: &str, key_type| {
        aws_sdk_dynamodb::types::KeySchemaElement::builder()
            .attribute_name(name)
            .key_type(key_type)
            .build()
            .unwrap()
    };
    client
        .create_table()
        .table_name(&table)
        .attribute_definitions(attribute("pk"))
        .attribute_definitions(attribute("sk"))
        .key_schema(key("pk", aws_sdk_dynamodb::types::KeyType::Hash))
        .key_schema(key("sk", aws_sdk_dynamodb::types::KeyType::Range))
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
    let store = DynamoStore::new(client.clone(), &table);
    let write = Write::put("head", Condition::Absent, vec![1], None).indexed(entry("s", 1));
    store.commit("p", vec![write], NOW).await.unwrap();
    match store.list_index("s", None, 10, NOW).await {
        Err(StoreError::Backend(message)) => {
            assert!(message.contains("`listing`"), "{message}");
        }
        other => panic!("expected a Backend error naming the index, got {other:?}"),
    }
    DynamoStore::create_table(&client, &table).await.unwrap();
    assert_eq!(
        store.list_index("s", None, 10, NOW).await.unwrap(),
        [IndexHit {
            rank: 1,
            partition: "p".to_owned(),
            key: "head".to_owned()
        }]
    );
}

/// A write whose response is lost after DynamoDB applied it is retried by the SDK with the same
/// request; its condition then fails against its own write. Single-item puts recognise their
/// write id in the returned item and report success (moto ignores transaction idempotency
/// tokens, so only the single-item paths can be shown here).
#[tokio::test]
async fn a_retried_put_that_already_applied_succeeds() {
    let faults = Faults::default();
    let lose = Arc::clone(&faults.lose);
    let client = moto().client_faulty(
        RetryConfig::standard(),
        TimeoutConfig::disabled(),
        faults.clone(),
    );
    let table = table_name("retry");
    DynamoStore::create_table(&client, &table).await.unwrap();
    let store = DynamoStore::new(client, table);
    let p = "retry";
    for (n, write) in [
        Write::put("k", Condition::Absent, b"1".to_vec(), None),
        Write::put("k", Condition::Version(1), b"2".to_vec(), None),
        Write::put("k", Condition::Always, b"3".to_vec(), None),
        Write::put("big", Condition::Absent, noise(1 << 20, 3), None),
    ]
    .into_iter()
    .enumerate()
    {
        let before = store.call_counter().snapshot();
        lose.store(1, Ordering::SeqCst);
        let kind = format!("{:?}", write.condition);
        assert_eq!(
            store.commit(p, vec![write], NOW).await,
            Ok(()),
            "write {n} ({kind})"
        );
        assert_eq!(
            lose.load(Ordering::SeqCst),
            0,
            "write {n}: a response was lost"
        );
        assert!(
            store.call_counter().since(&before).values().sum::<u64>() >= 2,
            "write {n} was retried"
        );
    }
    let items = store.get(p, &["k", "big"], NOW).await.unwrap();
    let k = items[0].as_ref().unwrap();
    assert_eq!(
        (k.version, k.value.as_slice()),
        (3, b"3".as_slice()),
        "each put applied exactly once"
    );
    assert_eq!(
        items[1].as_ref().map(|i| i.value == noise(1 << 20, 3)),
        Some(true)
    );
}

/// Throttling, conflicts, server and validation errors, injected as DynamoDB responses.
#[tokio::test]
async fn injected_service_errors_map_to_store_errors() {
    let faults = Faults::default();
    let client = moto().client_faulty(
        RetryConfig::standard()
            .with_max_attempts(2)
            .with_initial_backoff(Duration::from_millis(1)),
        TimeoutConfig::disabled(),
        faults.clone(),
    );
    let table = table_name("faults");
    DynamoStore::create_table(&client, &table).await.unwrap();
    let store = DynamoStore::new(client, table);
    let p = "faults";
    let inject = |responses: &[(u16, String)]| faults.inject(responses.iter().cloned());
    // The idempotency tokens of the transactions sent since `from` (an index into the
    // recorded requests).
    let tokens = |from: usize| -> Vec<String> {
        faults.requests.lock().unwrap()[from..]
            .iter()
            .filter_map(|body| serde_json::from_str::<serde_json::Value>(body).ok())
            .filter_map(|body| body["ClientRequestToken"].as_str().map(str::to_owned))
            .collect()
    };
    let sent = || faults.requests.lock().unwrap().len();
    let conflict = (
        400,
        error_body(
            "TransactionConflictException",
            "Transaction is ongoing for the item",
        ),
    );
    let cancelled = |reasons: &str| {
        (
            400,
            format!(
                r#"{{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException","message":"cancelled","CancellationReasons":{reasons}}}"#
            ),
        )
    };
    let throttled = (
        400,
        error_body("ProvisionedThroughputExceededException", "slow down"),
    );
    let server = (500, error_body("InternalServerError", "oops"));

    // A single put colliding with a transaction in flight: tried again, then applied.
    inject(&[conflict.clone(), conflict]);
    let (r, n) = calls(
        &store,
        store.commit(
            p,
            vec![Write::put("a", Condition::Absent, b"1".to_vec(), None)],
            NOW,
        ),
    )
    .await;
    assert_eq!(r, Ok(()));
    assert_eq!(n, counts(&[("PutItem", 3)]));

    // A transaction cancelled by a conflict (so not applied): tried again, under a new
    // idempotency token.
    inject(&[cancelled(
        r#"[{"Code":"None"},{"Code":"TransactionConflict"}]"#,
    )]);
    let batch = vec![
        Write::put("a", Condition::Version(1), b"2".to_vec(), None),
        Write::put("b", Condition::Absent, b"1".to_vec(), None),
    ];
    let from = sent();
    let (r, n) = calls(&store, store.commit(p, batch, NOW)).await;
    assert_eq!(r, Ok(()));
    assert_eq!(n, counts(&[("TransactWriteItems", 2)]));
    let t = tokens(from);
    assert!(t.len() == 2 && t[0] != t[1], "{t:?}");

    // A transaction still in progress under its token (it may yet apply): tried again under
    // the same token, which DynamoDB answers with that attempt's outcome.
    inject(&[(
        400,
        error_body("TransactionInProgressException", "in progress"),
    )]);
    let batch = vec![
        Write::put("x", Condition::Absent, b"1".to_vec(), None),
        Write::put("y", Condition::Absent, b"1".to_vec(), None),
    ];
    let from = sent();
    assert_eq!(store.commit(p, batch, NOW).await, Ok(()));
    let t = tokens(from);
    assert!(t.len() >= 2 && t.iter().all(|x| *x == t[0]), "{t:?}");
    let cleanup = vec![
        Write::delete("x", Condition::Always),
        Write::delete("y", Condition::Always),
    ];
    store.commit(p, cleanup, NOW).await.unwrap();

    // A cancellation naming a condition and a conflict: the condition decides.
    inject(&[cancelled(
        r#"[{"Code":"TransactionConflict"},{"Code":"ConditionalCheckFailed"}]"#,
    )]);
    let batch = vec![
        Write::put("a", Condition::Version(2), b"3".to_vec(), None),
        Write::put("b", Condition::Version(1), b"2".to_vec(), None),
    ];
    assert_eq!(
        store.commit(p, batch, NOW).await,
        Err(StoreError::ConditionFailed { index: 1 })
    );

    // A multi-key read cancelled by a conflict: tried again.
    inject(&[cancelled(
        r#"[{"Code":"TransactionConflict"},{"Code":"None"}]"#,
    )]);
    let (r, n) = calls(&store, store.get(p, &["a", "b"], NOW)).await;
    assert_eq!(
        r.unwrap()
            .iter()
            .map(|i| i.as_ref().map(|i| i.version))
            .collect::<Vec<_>>(),
        [Some(2), Some(1)]
    );
    assert_eq!(n, counts(&[("TransactGetItems", 2)]));

    // Throttling and server errors outlasting the SDK's retries.
    inject(&[throttled.clone(), throttled]);
    let r = store
        .commit(
            p,
            vec![Write::put("c", Condition::Absent, vec![], None)],
            NOW,
        )
        .await;
    assert!(unavailable(&r), "{r:?}");
    inject(&[server.clone(), server]);
    let r = store.get(p, &["a"], NOW).await;
    assert!(unavailable(&r), "{r:?}");
    inject(&vec![
        cancelled(
            r#"[{"Code":"ThrottlingError"},{"Code":"None"}]"#
        );
        9
    ]);
    let r = store
        .commit(
            p,
            vec![
                Write::put("c", Condition::Absent, vec![], None),
                Write::put("d", Condition::Absent, vec![], None),
            ],
            NOW,
        )
        .await;
    assert!(unavailable(&r), "{r:?}");

    // Validation errors are the store's or the caller's fault: not retried.
    inject(&[(
        400,
        error_body("ValidationException", "Invalid ConditionExpression"),
    )]);
    let r = store
        .commit(
            p,
            vec![Write::put("c", Condition::Absent, vec![], None)],
            NOW,
        )
        .await;
    assert!(matches!(r, Err(StoreError::Backend(_))), "{r:?}");
    inject(&[(
        400,
        error_body(
            "ValidationException",
            "Item size has exceeded the maximum allowed size",
        ),
    )]);
    let r = store
        .commit(
            p,
            vec![Write::put("c", Condition::Absent, vec![], None)],
            NOW,
        )
        .await;
    assert!(matches!(r, Err(StoreError::TooLarge(_))), "{r:?}");
    inject(&[cancelled(
        r#"[{"Code":"ValidationError","Message":"bad"},{"Code":"None"}]"#,
    )]);
    let r = store
        .commit(
            p,
            vec![
                Write::put("c", Condition::Absent, vec![], None),
                Write::put("d", Condition::Absent, vec![], None),
            ],
            NOW,
        )
        .await;
    assert!(matches!(r, Err(StoreError::Backend(_))), "{r:?}");
    assert!(
        faults.canned.lock().unwrap().is_empty(),
        "every injected response was used"
    );

    // None of the failed commits wrote anything.
    assert_eq!(store.list(p, "", NOW).await.unwrap(), ["a", "b"]);
}

#[tokio::test]
async fn a_closed_port_is_unavailable() {
    let port = support::free_port();
    let client = client_with(
        &format!("http://127.0.0.1:{port}"),
        RetryConfig::standard()
            .with_max_attempts(2)
            .with_initial_backoff(Duration::from_millis(10)),
        TimeoutConfig::builder()
            .operation_timeout(Duration::from_secs(5))
            .build(),
    );
    let store = DynamoStore::new(client, "nowhere");
    let r = store.get("p", &["a"], NOW).await;
    assert!(unavailable(&r), "{r:?}");
    let r = store.get("p", &["a", "b"], NOW).await;
    assert!(unavailable(&r), "{r:?}");
    let r = store
        .commit(
            "p",
            vec![Write::put("a", Condition::Absent, vec![1], None)],
            NOW,
        )
        .await;
    assert!(unavailable(&r), "{r:?}");
    let r = store
        .commit(
            "p",
            vec![Write::put("a", Condition::Absent, noise(1 << 20, 1), None)],
            NOW,
        )
        .await;
    assert!(unavailable(&r), "{r:?}");
    let r = store.list("p", "", NOW).await;
    assert!(unavailable(&r), "{r:?}");
    assert_eq!(
        store.call_counter().total(),
        10,
        "two attempts per call: {:?}",
        store.call_counter().snapshot()
    );
}

#[tokio::test]
async fn a_stopped_server_is_unavailable() {
    let moto = Moto::start();
    let client = moto.client_with(
        RetryConfig::standard()
            .with_max_attempts(2)
            .with_initial_backoff(Duration::from_millis(10)),
        TimeoutConfig::builder()
            .operation_timeout(Duration::from_secs(5))
            .build(),
    );
    let table = table_name("stop");
    DynamoStore::create_table(&client, &table).await.unwrap();
    let store = DynamoStore::new(client, table);
    store
        .commit(
            "p",
            vec![Write::put("a", Condition::Absent, vec![1], None)],
            NOW,
        )
        .await
        .unwrap();
    drop(moto);
    let r = store.get("p", &["a"], NOW).await;
    assert!(matches!(r, Err(StoreError::Unavailable(_))), "{r:?}");
    let r = store
        .commit(
            "p",
            vec![Write::put("a", Condition::Version(1), vec![2], None)],
            NOW,
        )
        .await;
    assert!(matches!(r, Err(StoreError::Unavailable(_))), "{r:?}");
}

#[tokio::test]
async fn a_missing_table_is_a_backend_error() {
    let store = DynamoStore::new(moto().client(), "no-such-table");
    let r = store.get("p", &["a"], NOW).await;
    assert!(matches!(r, Err(StoreError::Backend(_))), "{r:?}");
    let r = store
        .commit(
            "p",
            vec![Write::put("a", Condition::Absent, vec![1], None)],
            NOW,
        )
        .await;
    assert!(matches!(r, Err(StoreError::Backend(_))), "{r:?}");
}

#[tokio::test]
async fn create_table_is_idempotent_and_enables_ttl() {
    let client = moto().client();
    let table = table_name("create");
    DynamoStore::create_table(&client, &table).await.unwrap();
    DynamoStore::create_table(&client, &table).await.unwrap();
    let ttl = client
        .describe_time_to_live()
        .table_name(&table)
        .send()
        .await
        .unwrap()
        .time_to_live_description
        .unwrap();
    assert_eq!(ttl.attribute_name.as_deref(), Some("ttl"));
    let description = client
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap()
        .table
        .unwrap();
    let keys: Vec<(String, String)> = description
        .key_schema()
        .iter()
        .map(|k| {
            (
                k.attribute_name().to_owned(),
                k.key_type().as_str().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("pk".to_owned(), "HASH".to_owned()),
            ("sk".to_owned(), "RANGE".to_owned())
        ]
    );
    let [index] = description.global_secondary_indexes() else {
        panic!("one global secondary index: {description:?}")
    };
    assert_eq!(index.index_name(), Some("listing"));
    let keys: Vec<(&str, &str)> = index
        .key_schema()
        .iter()
        .map(|k| (k.attribute_name(), k.key_type().as_str()))
        .collect();
    assert_eq!(keys, [("ls", "HASH"), ("lo", "RANGE")]);
    let projection = index.projection().unwrap();
    assert_eq!(
        projection.projection_type().map(|p| p.as_str()),
        Some("INCLUDE")
    );
    assert_eq!(projection.non_key_attributes(), ["exp"]);
}

/// The JSON in `infra/` describes the table `create_table` makes.
#[test]
fn infra_table_definition_matches() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../infra/dynamodb-table.json"
    );
    let text = std::fs::read_to_string(path).expect("infra/dynamodb-table.json");
    let json: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(json["BillingMode"], "PAY_PER_REQUEST");
    assert_eq!(
        json["KeySchema"],
        serde_json::json!([{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}])
    );
    assert_eq!(
        json["AttributeDefinitions"],
        serde_json::json!([
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "ls", "AttributeType": "S"},
            {"AttributeName": "lo", "AttributeType": "S"}
        ])
    );
    assert_eq!(
        json["GlobalSecondaryIndexes"],
        serde_json::json!([{
            "IndexName": "listing",
            "KeySchema": [
                {"AttributeName": "ls", "KeyType": "HASH"},
                {"AttributeName": "lo", "KeyType": "RANGE"}
            ],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["exp"]}
        }])
    );
    // The SAM template declares the same table (checked as text: no YAML parser here).
    let template = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../infra/template.yaml"
    ))
    .expect("infra/template.yaml");
    for needle in [
        "AttributeName: ls",
        "AttributeName: lo",
        "IndexName: listing",
        "ProjectionType: INCLUDE",
        "NonKeyAttributes: [exp]",
    ] {
        assert!(template.contains(needle), "template.yaml lacks {needle:?}");
    }
}
