//! Reads, lists and partitions: multi-key `get`, large values, `list` by prefix, isolation.

use handoff_core::store::{Condition, Item, Store, Write};

use crate::support::{Namespace, assert_bytes, expect_item, failed_at, get_one, list, ok};
use crate::{BASE_MS, noise};

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
