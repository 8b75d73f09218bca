use super::*;
use crate::protocol::{Listed, StoreRequest, StoredValue};
use serde_json::json;

fn row(key: &str, index: Option<(&str, u64)>, expires_at_ms: Option<u64>) -> Row {
    Row {
        key: key.to_owned(),
        version: 1,
        value: StoredValue::Inline(b"v".to_vec()),
        expires_at_ms,
        index: index.map(|(scope, rank)| Listed {
            scope: scope.to_owned(),
            rank,
        }),
    }
}

fn change(scope: &str, key: &str, rank: Option<u64>, expires_at_ms: Option<u64>) -> ListingChange {
    ListingChange {
        seq: 0,
        scope: scope.to_owned(),
        key: key.to_owned(),
        rank,
        expires_at_ms,
    }
}

#[test]
fn a_listed_put_lists_its_item_with_its_expiry() {
    let changes = listing_changes(
        &[None],
        &[Mutation::Upsert(row("head", Some(("s", 5)), Some(9)))],
    );
    assert_eq!(changes, [change("s", "head", Some(5), Some(9))]);
}

#[test]
fn unlisting_and_deleting_take_an_item_out_of_its_old_scope() {
    let current = [
        Some(row("a", Some(("s", 1)), None)),
        Some(row("b", Some(("s", 2)), None)),
        Some(row("c", Some(("old", 3)), None)),
    ];
    let mutations = [
        Mutation::Upsert(row("a", None, None)),
        Mutation::Delete("b".to_owned()),
        Mutation::Upsert(row("c", Some(("new", 4)), None)),
    ];
    assert_eq!(
        listing_changes(&current, &mutations),
        [
            change("s", "a", None, None),
            change("s", "b", None, None),
            change("old", "c", None, None),
            change("new", "c", Some(4), None),
        ]
    );
}

#[test]
fn unlisted_items_change_no_listing() {
    let current = [Some(row("a", None, None)), None];
    let mutations = [
        Mutation::Upsert(row("a", None, None)),
        Mutation::Delete("b".to_owned()),
    ];
    assert!(listing_changes(&current, &mutations).is_empty());
}

#[test]
fn listing_requests_are_camel_case_without_nulls() {
    let request = StoreRequest::Relist {
        partition: "t1".to_owned(),
        changes: vec![ListingChange {
            seq: 3,
            ..change("s", "head", None, None)
        }],
    };
    assert_eq!(
        serde_json::to_value(&request).unwrap(),
        json!({"op": "relist", "partition": "t1", "changes": [{"seq": 3, "scope": "s", "key": "head"}]})
    );
    let page = StoreRequest::ListIndex {
        after: None,
        limit: 2,
        now_ms: 7,
    };
    assert_eq!(
        serde_json::to_value(&page).unwrap(),
        json!({"op": "listIndex", "limit": 2, "nowMs": 7})
    );
}

#[test]
fn scope_objects_never_share_a_name_with_a_partition() {
    assert_eq!(scope_object_name("threads"), "\u{1e}listing\u{1e}threads");
}
