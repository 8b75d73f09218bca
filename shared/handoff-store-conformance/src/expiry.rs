//! Expiry under the suite's injected clock.

use handoff_core::store::{Condition, Store, Write};

use crate::support::{Namespace, expect_item, failed_at, get_one, list, ok};
use crate::{BASE_MS, FAR_FUTURE_MS};

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
