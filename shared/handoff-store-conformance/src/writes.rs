//! Single-key conditional writes: compare-and-set on versions, and deletes.

use handoff_core::store::{Condition, Store, Write};

use crate::BASE_MS;
use crate::support::{Namespace, expect_item, failed_at, get_one, list, ok};

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
