//! `DynamoStore` under faults on a real `moto_server`: retried puts, injected service errors,
//! a closed port, a stopped server, a missing table.

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
use handoff_core::{Condition, Store, StoreError, Write};
use handoff_store_conformance::noise;
use handoff_store_dynamodb::DynamoStore;
use support::{
    Faults, Moto, NOW, calls, client_with, counts, error_body, moto, table_name, unavailable,
};

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
