//! How `DynamoStore` keeps items on a real `moto_server`: large values in chunks, compressible
//! ones compressed, expired items read absent though moto keeps them, awkward keys.

mod support;

use aws_sdk_dynamodb::types::AttributeValue;
use handoff_core::{Condition, Store, StoreError, Write};
use handoff_store_conformance::noise;
use handoff_store_dynamodb::{DynamoOptions, DynamoStore};
use support::{NOW, chunk_count, fresh_store, fresh_store_with, moto, raw_items};

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
