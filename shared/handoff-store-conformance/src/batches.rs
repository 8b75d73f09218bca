//! Multi-write batches: all-or-nothing commits, and `Check` writes that fence without writing.

use handoff_core::store::{Condition, Store, Write};

use crate::BASE_MS;
use crate::support::{Namespace, expect_item, failed_at, get_one, list, ok};

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
