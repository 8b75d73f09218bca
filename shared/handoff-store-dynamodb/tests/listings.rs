//! `DynamoStore`'s listings (`list_index`) on a real `moto_server`: the listing attributes on
//! heads, the order, expiry, and a table without the index.

mod support;

use aws_sdk_dynamodb::types::AttributeValue;
use handoff_core::{Condition, IndexEntry, IndexHit, Store, StoreError, Write};
use handoff_store_conformance::noise;
use handoff_store_dynamodb::{DynamoOptions, DynamoStore};
use support::{NOW, calls, counts, fresh_store, fresh_store_with, moto, raw_items, table_name};

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
