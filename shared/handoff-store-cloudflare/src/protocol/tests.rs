use super::*;
use serde_json::json;

fn inline(bytes: &[u8]) -> StoredValue {
    StoredValue::Inline(bytes.to_vec())
}

fn row(key: &str, version: u64, expires_at_ms: Option<u64>) -> Option<Row> {
    Some(Row {
        key: key.to_owned(),
        version,
        value: inline(b"old"),
        expires_at_ms,
        index: None,
    })
}

fn put(key: &str, condition: WireCondition) -> WireWrite {
    WireWrite {
        key: key.to_owned(),
        condition,
        put: Some(WirePut {
            value: inline(b"new"),
            expires_at_ms: None,
            index: None,
        }),
        delete: false,
    }
}

fn check(key: &str, condition: WireCondition) -> WireWrite {
    WireWrite {
        key: key.to_owned(),
        condition,
        put: None,
        delete: false,
    }
}

#[test]
fn requests_are_camel_case_with_base64_values_and_no_nulls() {
    let request = StoreRequest::Commit {
        partition: None,
        writes: vec![
            put("thread", WireCondition::Version(3)),
            check("lease", WireCondition::Absent),
        ],
        now_ms: 7,
    };
    let wire = serde_json::to_value(&request).unwrap();
    assert_eq!(
        wire,
        json!({"op": "commit", "nowMs": 7, "writes": [
            {"key": "thread", "condition": {"version": 3}, "put": {"value": {"inline": "bmV3"}}},
            {"key": "lease", "condition": "absent"}
        ]})
    );
    let back: StoreRequest = serde_json::from_value(wire).unwrap();
    assert_eq!(back, request);
}

#[test]
fn blob_references_round_trip() {
    let value = StoredValue::Blob(BlobRef {
        kv_key: "blob/ab/none".to_owned(),
        sha256: "ab".to_owned(),
        len: 70_000,
    });
    let wire = serde_json::to_value(&value).unwrap();
    assert_eq!(
        wire,
        json!({"blob": {"kvKey": "blob/ab/none", "sha256": "ab", "len": 70000}})
    );
    assert_eq!(serde_json::from_value::<StoredValue>(wire).unwrap(), value);
}

#[test]
fn the_first_failing_condition_is_reported_and_nothing_planned() {
    let writes = vec![
        put("a", WireCondition::Always),
        put("b", WireCondition::Version(2)),
        put("c", WireCondition::Absent),
    ];
    let current = [None, row("b", 1, None), row("c", 1, None)];
    assert_eq!(plan_commit(writes, &current, 0), Err(1));
}

#[test]
fn expired_rows_count_as_absent_and_restart_at_version_one() {
    let writes = vec![put("lease", WireCondition::Absent)];
    let current = [row("lease", 9, Some(100))];
    assert_eq!(
        plan_commit(writes.clone(), &current, 99),
        Err(0),
        "still live at 99"
    );
    let planned = plan_commit(writes, &current, 100).unwrap();
    assert!(
        matches!(&planned[..], [Mutation::Upsert(r)] if r.version == 1 && r.value == inline(b"new"))
    );
}

#[test]
fn a_version_condition_on_an_expired_row_fails() {
    let current = [row("thread", 4, Some(10))];
    assert_eq!(
        plan_commit(vec![put("thread", WireCondition::Version(4))], &current, 10),
        Err(0)
    );
}

#[test]
fn puts_increment_checks_write_nothing_and_deletes_remove() {
    let mut delete = check("gone", WireCondition::Version(1));
    delete.delete = true;
    let writes = vec![
        put("thread", WireCondition::Version(4)),
        check("fence", WireCondition::Version(2)),
        delete,
        put("fresh", WireCondition::Always),
    ];
    let current = [
        row("thread", 4, None),
        row("fence", 2, None),
        row("gone", 1, None),
        None,
    ];
    let planned = plan_commit(writes, &current, 0).unwrap();
    assert_eq!(planned.len(), 3);
    assert!(matches!(&planned[0], Mutation::Upsert(r) if r.key == "thread" && r.version == 5));
    assert_eq!(planned[1], Mutation::Delete("gone".to_owned()));
    assert!(matches!(&planned[2], Mutation::Upsert(r) if r.key == "fresh" && r.version == 1));
}

fn blob(kv_key: &str) -> StoredValue {
    StoredValue::Blob(BlobRef {
        kv_key: kv_key.to_owned(),
        sha256: "00".to_owned(),
        len: 40_000,
    })
}

fn stored(key: &str, value: StoredValue, expires_at_ms: Option<u64>) -> Option<Row> {
    Some(Row {
        key: key.to_owned(),
        version: 1,
        value,
        expires_at_ms,
        index: None,
    })
}

fn put_value(key: &str, condition: WireCondition, value: StoredValue) -> WireWrite {
    WireWrite {
        key: key.to_owned(),
        condition,
        put: Some(WirePut {
            value,
            expires_at_ms: None,
            index: None,
        }),
        delete: false,
    }
}

#[test]
fn release_requests_carry_only_the_keys() {
    let request = StoreRequest::Release {
        keys: vec!["blob/p/ab/cd".to_owned()],
    };
    let wire = serde_json::to_value(&request).unwrap();
    assert_eq!(wire, json!({"op": "release", "keys": ["blob/p/ab/cd"]}));
    assert_eq!(
        serde_json::from_value::<StoreRequest>(wire).unwrap(),
        request
    );
}

#[test]
fn replaced_deleted_and_expired_rows_retire_their_blobs() {
    let mut delete = check("deleted", WireCondition::Always);
    delete.delete = true;
    let writes = vec![
        put_value("replaced", WireCondition::Version(1), blob("blob/p/s/new")),
        delete,
        put_value("expired", WireCondition::Absent, inline(b"small now")),
        put_value("fresh", WireCondition::Absent, blob("blob/p/s/fresh")),
        check("checked", WireCondition::Version(1)),
    ];
    let current = [
        stored("replaced", blob("blob/p/s/old"), None),
        stored("deleted", blob("blob/p/s/gone"), None),
        stored("expired", blob("blob/p/s/stale"), Some(5)),
        None,
        stored("checked", blob("blob/p/s/untouched"), None),
    ];
    let mutations = plan_commit(writes, &current, 10).unwrap();
    let changes = blob_changes(&current, &mutations);
    assert_eq!(
        changes.retired,
        ["blob/p/s/gone", "blob/p/s/old", "blob/p/s/stale"],
        "a checked row keeps its blob"
    );
    assert_eq!(changes.adopted, ["blob/p/s/fresh", "blob/p/s/new"]);
}

#[test]
fn a_blob_the_batch_still_references_is_not_retired() {
    // The same reference rewritten (a replayed commit): still in use.
    let writes = vec![put_value("k", WireCondition::Always, blob("blob/p/s/same"))];
    let current = [stored("k", blob("blob/p/s/same"), None)];
    let mutations = plan_commit(writes, &current, 0).unwrap();
    let changes = blob_changes(&current, &mutations);
    assert!(changes.retired.is_empty());
    assert_eq!(changes.adopted, ["blob/p/s/same"]);
}

#[test]
fn content_addressed_blobs_from_before_are_never_collected() {
    // `blob/{sha256}/{expiry}` keys may be shared by rows of other partitions.
    let legacy = "blob/9f86d081884c7d65/none";
    let writes = vec![put_value("k", WireCondition::Always, blob(legacy))];
    let current = [stored("k", blob(legacy), None)];
    assert!(batch_blobs(&writes).is_empty());
    let mut delete = check("k", WireCondition::Always);
    delete.delete = true;
    let mutations = plan_commit(vec![delete], &current, 0).unwrap();
    assert_eq!(blob_changes(&current, &mutations), BlobChanges::default());
    assert!(!is_collectable(legacy) && is_collectable("blob/p/s/id"));
}

#[test]
fn a_refused_batch_releases_the_blobs_its_puts_reference() {
    let writes = vec![
        put_value("a", WireCondition::Version(3), blob("blob/p/s/a")),
        put_value("b", WireCondition::Absent, inline(b"small")),
        put_value("c", WireCondition::Absent, blob("blob/p/s/c")),
        check("d", WireCondition::Absent),
    ];
    assert_eq!(batch_blobs(&writes), ["blob/p/s/a", "blob/p/s/c"]);
}
