//! Listings across partitions: [`Store::list_index`] over items written with an
//! [`IndexEntry`].

use handoff_core::store::{Condition, IndexEntry, IndexHit, MAX_INDEX_RANK, Store, Write};

use crate::BASE_MS;
use crate::support::{Namespace, failed_at, ok};

async fn listed<S: Store>(
    store: &S,
    scope: &str,
    after: Option<&IndexHit>,
    limit: usize,
    now: u64,
) -> Vec<IndexHit> {
    ok(
        store.list_index(scope, after, limit, now).await,
        format!("list_index after {after:?}"),
    )
}

fn partitions_of(hits: &[IndexHit]) -> Vec<&str> {
    hits.iter().map(|h| h.partition.as_str()).collect()
}

fn entry(scope: &str, rank: u64) -> IndexEntry {
    IndexEntry {
        scope: scope.to_owned(),
        rank,
    }
}

/// Items put with an index entry are listed in their scope, highest rank first (ties by
/// partition), page by page after the last hit; a later put moves an item (it is never
/// listed twice), a put without an entry, a delete or an expiry takes it out, a refused
/// batch changes no listing, and other scopes and unindexed items never show.
pub async fn index_lists_across_partitions<S: Store>(store: &S) {
    let ns = Namespace::new("index_lists_across_partitions");
    let scope = ns.partition("scope");
    let other_scope = ns.partition("other-scope");
    let now = BASE_MS;
    let p: Vec<String> = (0..6).map(|i| ns.partition(&format!("t{i}"))).collect();
    for (i, rank) in [5u64, 3, 9, 3, 1].into_iter().enumerate() {
        let write =
            Write::put("head", Condition::Absent, vec![i as u8], None).indexed(entry(&scope, rank));
        ok(store.commit(&p[i], vec![write], now).await, "indexed put");
    }
    let elsewhere =
        Write::put("head", Condition::Absent, b"x".to_vec(), None).indexed(entry(&other_scope, 7));
    let unindexed = Write::put("other", Condition::Absent, b"y".to_vec(), None);
    ok(
        store.commit(&p[5], vec![elsewhere, unindexed], now).await,
        "put in another scope",
    );

    let all = listed(store, &scope, None, 10, now).await;
    let expected_order = [&p[2], &p[0], &p[1], &p[3], &p[4]];
    assert_eq!(
        partitions_of(&all),
        expected_order,
        "highest rank first, ties by partition"
    );
    assert_eq!(
        all.iter().map(|h| h.rank).collect::<Vec<_>>(),
        [9, 5, 3, 3, 1],
        "ranks as written"
    );
    assert!(all.iter().all(|h| h.key == "head"), "hits name their keys");

    let mut paged = Vec::new();
    let mut after: Option<IndexHit> = None;
    for _ in 0..5 {
        let page = listed(store, &scope, after.as_ref(), 2, now).await;
        assert!(page.len() <= 2, "a page holds at most `limit` hits");
        let Some(last) = page.last().cloned() else {
            break;
        };
        paged.extend(page);
        after = Some(last);
    }
    assert_eq!(
        partitions_of(&paged),
        expected_order,
        "pages continue after their last hit, without gaps or repeats"
    );

    let moved = Write::put("head", Condition::Version(1), vec![9], None).indexed(entry(&scope, 10));
    ok(store.commit(&p[4], vec![moved], now).await, "re-rank");
    let unlisted = Write::put("head", Condition::Version(1), vec![8], None);
    ok(store.commit(&p[0], vec![unlisted], now).await, "unlist");
    ok(
        store
            .commit(&p[1], vec![Write::delete("head", Condition::Always)], now)
            .await,
        "delete",
    );
    let refused = vec![
        Write::put("head", Condition::Version(1), vec![7], None).indexed(entry(&scope, 99)),
        Write::check("missing", Condition::Version(1)),
    ];
    failed_at(store.commit(&p[3], refused, now).await, 1, "refused batch");
    let expiring = Write::put("head", Condition::Version(1), vec![6], Some(now + 10))
        .indexed(entry(&scope, 4));
    ok(
        store.commit(&p[2], vec![expiring], now).await,
        "expiring put",
    );

    let before_expiry = listed(store, &scope, None, 10, now).await;
    assert_eq!(
        partitions_of(&before_expiry),
        [&p[4], &p[2], &p[3]],
        "a re-ranked item moves (listed once), unlisted and deleted ones leave, a refused batch changes nothing"
    );
    assert_eq!(
        before_expiry.iter().map(|h| h.rank).collect::<Vec<_>>(),
        [10, 4, 3]
    );
    let after_expiry = listed(store, &scope, None, 10, now + 10).await;
    assert_eq!(
        partitions_of(&after_expiry),
        [&p[4], &p[3]],
        "an expired item is not listed"
    );
    let other = listed(store, &other_scope, None, 10, now).await;
    assert_eq!(partitions_of(&other), [&p[5]], "scopes are separate");
    let none = listed(store, &ns.partition("empty-scope"), None, 10, now).await;
    assert!(none.is_empty(), "an unknown scope lists nothing");
}

/// Ranks up to [`MAX_INDEX_RANK`] come back exact and in order (the outbox ranks its
/// items `MAX_INDEX_RANK - due_ms`; a JavaScript number or a double holds no more).
pub async fn index_ranks_are_exact_up_to_the_maximum<S: Store>(store: &S) {
    let ns = Namespace::new("index_ranks_are_exact_up_to_the_maximum");
    let scope = ns.partition("scope");
    let top = MAX_INDEX_RANK;
    let ranks = [
        top - BASE_MS,
        top - BASE_MS - 1,
        top,
        top - 1,
        (1u64 << 52) + 1,
    ];
    for (i, rank) in ranks.into_iter().enumerate() {
        let write =
            Write::put("head", Condition::Absent, vec![i as u8], None).indexed(entry(&scope, rank));
        let partition = ns.partition(&format!("t{i}"));
        ok(
            store.commit(&partition, vec![write], BASE_MS).await,
            "indexed put, large rank",
        );
    }
    let all = listed(store, &scope, None, 10, BASE_MS).await;
    let mut expected = ranks.to_vec();
    expected.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(
        all.iter().map(|h| h.rank).collect::<Vec<_>>(),
        expected,
        "large ranks listed exactly, highest first"
    );
    let after = listed(store, &scope, all.first(), 10, BASE_MS).await;
    assert_eq!(after.len(), ranks.len() - 1, "paging after the top rank");
}
