//! Deliveries: body and task checks, at-least-once, ordering, artifact merging,
//! wake records, v0.3 bodies, the ownership challenge, and storage failures.

mod common;

use std::sync::atomic::Ordering;

use common::*;
use handoff_a2a::a2a_types::{Part, TaskState};
use handoff_a2a::{Outcome, ReceiverConfig, ReceiverError};
use handoff_core::Store;
use handoff_core::codes::ErrorCode;
use serde_json::json;

#[tokio::test]
async fn a_status_update_is_persisted_in_the_thread_partition() {
    let h = Harness::new();
    let config = h.token_config().await;
    let ack = h
        .post(
            &config,
            &token_headers(),
            &fixture("v1/stream-status-update.json"),
        )
        .await
        .unwrap();
    assert_eq!(
        (ack.outcome, ack.state, ack.duplicate),
        (Outcome::Applied, TaskState::Working, false)
    );
    let items = h
        .store
        .inner
        .get(THREAD, &["a2a#task#task-7f3a"], h.now())
        .await
        .unwrap();
    assert!(
        items[0].is_some(),
        "snapshot lives in the thread's partition"
    );
    let snap = h.snapshot().await;
    assert_eq!(snap.task.context_id.as_deref(), Some("ctx-19c2"));
    assert_eq!(snap.config_id, config);
    assert_eq!(h.receiver.tasks(THREAD).await.unwrap(), vec![snap]);
}

#[tokio::test]
async fn oversized_bodies_are_413_before_anything_else() {
    let h = Harness::with_config(ReceiverConfig {
        body_limit: 1024,
        ..ReceiverConfig::default()
    });
    let config = h.token_config().await;
    let big = artifact_body("a", &"x".repeat(2000), false, true);
    for id in [config.as_str(), "unknown"] {
        let err = h.post(id, &token_headers(), &big).await.unwrap_err();
        assert_eq!(
            (err.http_status(), err.code().name),
            (413, "BODY_TOO_LARGE")
        );
    }
    assert!(h.receiver.task(THREAD, TASK).await.unwrap().is_none());
}

#[tokio::test]
async fn malformed_bodies_are_400_only_after_authentication() {
    let h = Harness::new();
    let config = h.token_config().await;
    for bad in [
        &b"not json"[..],
        b"[]",
        b"{}",
        br#"{"statusUpdate": {"taskId": "task-7f3a", "status": {"state": "TASK_STATE_DONE"}}}"#,
        br#"{"task": {"id": "task-7f3a"}, "statusUpdate": {}}"#,
        br#"{"artifactUpdate": {"taskId": "task-7f3a", "artifact": {"artifactId": "a", "parts": [{}]}}}"#,
    ] {
        let err = h.post(&config, &token_headers(), bad).await.unwrap_err();
        assert_eq!(err.http_status(), 400, "{}", String::from_utf8_lossy(bad));
        let err = h.post(&config, &headers(&[]), bad).await.unwrap_err();
        assert_eq!(err.http_status(), 401, "unauthenticated callers learn nothing about parsing");
    }
    let long_id =
        json!({"statusUpdate": {"taskId": "t".repeat(300), "status": {"state": "working"}}});
    let err = h
        .post(&config, &token_headers(), &body(&long_id))
        .await
        .unwrap_err();
    assert_eq!(err.http_status(), 400);
}

#[tokio::test]
async fn notifications_for_another_task_are_403() {
    let h = Harness::new();
    let config = h.token_config().await;
    let other = json!({"statusUpdate": {"taskId": "task-other", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}});
    let err = h
        .post(&config, &token_headers(), &body(&other))
        .await
        .unwrap_err();
    assert_eq!((err.http_status(), err.code().name), (403, "TASK_MISMATCH"));
    let taskless =
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}});
    let err = h
        .post(&config, &token_headers(), &body(&taskless))
        .await
        .unwrap_err();
    assert_eq!(err, ReceiverError::TaskMismatch);
    assert!(h.receiver.tasks(THREAD).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_subscription_without_a_task_is_bound_by_its_first_notification() {
    let h = Harness::new();
    let config = h.register(None, token_auth()).await.config_id;
    h.post(
        &config,
        &token_headers(),
        &status_body("TASK_STATE_SUBMITTED", None),
    )
    .await
    .unwrap();
    let record = h
        .receiver
        .subscription(&config, h.now())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.task_id.as_deref(), Some(TASK));
    let other = json!({"statusUpdate": {"taskId": "task-other", "status": {"state": "working"}}});
    let err = h
        .post(&config, &token_headers(), &body(&other))
        .await
        .unwrap_err();
    assert_eq!(err.http_status(), 403);
    h.receiver.bind_task(&config, TASK).await.unwrap();
    assert_eq!(
        h.receiver
            .bind_task(&config, "task-other")
            .await
            .unwrap_err()
            .code()
            .name,
        "SUBSCRIPTION_BOUND"
    );
}

#[tokio::test]
async fn a_duplicate_delivery_is_acknowledged_and_applied_once() {
    let h = Harness::new();
    let config = h.token_config().await;
    let first = artifact_body("a", "one", false, false);
    let chunk = artifact_body("a", " two", true, false);
    h.post(&config, &token_headers(), &first).await.unwrap();
    let ack = h.post(&config, &token_headers(), &chunk).await.unwrap();
    for _ in 0..3 {
        let again = h.post(&config, &token_headers(), &chunk).await.unwrap();
        assert_eq!(
            again,
            handoff_a2a::Ack {
                duplicate: true,
                ..ack.clone()
            }
        );
    }
    let snap = h.snapshot().await;
    let text: Vec<_> = snap.task.artifacts[0]
        .parts
        .iter()
        .filter_map(Part::as_text)
        .collect();
    assert_eq!(text, ["one", " two"], "the appended chunk is there once");
    assert_eq!(snap.applied, 2);
    // Another subscription delivering the same bytes is its own delivery.
    let second = h.token_config().await;
    let other = h.post(&second, &token_headers(), &chunk).await.unwrap();
    assert!(!other.duplicate);
    // Deduplication is remembered for dedupe_ttl_ms.
    h.clock.advance(h.receiver.config().dedupe_ttl_ms);
    assert!(
        !h.post(&config, &token_headers(), &chunk)
            .await
            .unwrap()
            .duplicate
    );
}

#[tokio::test]
async fn completed_then_a_late_working_is_ignored() {
    let h = Harness::new();
    let config = h.token_config().await;
    let completed = status_body("TASK_STATE_COMPLETED", Some("2026-11-29T13:05:00Z"));
    let working = status_body("TASK_STATE_WORKING", Some("2026-11-29T13:06:00Z"));
    let failed = status_body("failed", None);
    assert_eq!(
        h.post(&config, &token_headers(), &completed)
            .await
            .unwrap()
            .outcome,
        Outcome::Applied
    );
    for late in [&working, &failed] {
        let ack = h.post(&config, &token_headers(), late).await.unwrap();
        assert_eq!(
            (ack.outcome, ack.state),
            (Outcome::IgnoredTerminal, TaskState::Completed)
        );
    }
    let wakes = h.receiver.wakes(THREAD).await.unwrap();
    assert_eq!(wakes.len(), 1);
    assert_eq!((wakes[0].seq, wakes[0].state), (1, TaskState::Completed));
}

#[tokio::test]
async fn an_older_status_is_ignored() {
    let h = Harness::new();
    let config = h.token_config().await;
    let newer = status_body("TASK_STATE_INPUT_REQUIRED", Some("2026-11-29T13:02:00Z"));
    let older = status_body("TASK_STATE_WORKING", Some("2026-11-29T13:01:00.500Z"));
    h.post(&config, &token_headers(), &newer).await.unwrap();
    let ack = h.post(&config, &token_headers(), &older).await.unwrap();
    assert_eq!(
        (ack.outcome, ack.state),
        (Outcome::IgnoredStale, TaskState::InputRequired)
    );
    // Without timestamps, rank decides: submitted after working is stale.
    let ack = h
        .post(&config, &token_headers(), &status_body("submitted", None))
        .await
        .unwrap();
    assert_eq!(ack.outcome, Outcome::IgnoredStale);
}

#[tokio::test]
async fn artifacts_merge_by_id_with_append_and_last_chunk() {
    let h = Harness::new();
    let config = h.token_config().await;
    for b in [
        artifact_body("report", "Refund ", false, false),
        artifact_body("summary", "done", false, true),
        artifact_body("report", "approved", true, false),
        artifact_body("report", ".", true, true),
    ] {
        h.post(&config, &token_headers(), &b).await.unwrap();
    }
    let snap = h.snapshot().await;
    assert_eq!(
        snap.task.status.state,
        TaskState::Unspecified,
        "no status yet"
    );
    let report = &snap.task.artifacts[0];
    let text: String = report.parts.iter().filter_map(Part::as_text).collect();
    assert_eq!(
        (report.artifact_id.as_str(), text.as_str()),
        ("report", "Refund approved.")
    );
    assert!(snap.artifact_progress["report"].complete);
    assert!(snap.artifacts_complete());
    // A replacement (append: false) starts the artifact over.
    h.post(
        &config,
        &token_headers(),
        &artifact_body("report", "v2", false, false),
    )
    .await
    .unwrap();
    let snap = h.snapshot().await;
    assert_eq!(snap.task.artifacts[0].parts, [Part::text("v2")]);
    assert!(!snap.artifacts_complete());
}

#[tokio::test]
async fn interrupted_and_terminal_states_wake_the_thread() {
    let h = Harness::new();
    let config = h.token_config().await;
    h.post(&config, &token_headers(), &fixture("v1/stream-task.json"))
        .await
        .unwrap();
    assert!(h.receiver.wakes(THREAD).await.unwrap().is_empty());
    h.post(
        &config,
        &token_headers(),
        &fixture("v1/stream-status-input-required.json"),
    )
    .await
    .unwrap();
    let wake = h.receiver.wakes(THREAD).await.unwrap().remove(0);
    assert_eq!(
        (wake.state, wake.seq, wake.task_id.as_str()),
        (TaskState::InputRequired, 1, TASK)
    );
    assert!(
        wake.status.message.is_some(),
        "the question travels with the wake"
    );
    // The engine consumes it; a stale seq does not remove a newer wake.
    h.post(
        &config,
        &token_headers(),
        &status_body("TASK_STATE_WORKING", Some("2026-11-29T13:03:00Z")),
    )
    .await
    .unwrap();
    h.post(
        &config,
        &token_headers(),
        &status_body("TASK_STATE_AUTH_REQUIRED", Some("2026-11-29T13:04:00Z")),
    )
    .await
    .unwrap();
    assert!(!h.receiver.clear_wake(THREAD, TASK, 1).await.unwrap());
    let wake = h.receiver.wakes(THREAD).await.unwrap().remove(0);
    assert_eq!((wake.state, wake.seq), (TaskState::AuthRequired, 2));
    assert!(h.receiver.clear_wake(THREAD, TASK, 2).await.unwrap());
    assert!(h.receiver.wakes(THREAD).await.unwrap().is_empty());
    h.post(
        &config,
        &token_headers(),
        &fixture("v1/stream-message.json"),
    )
    .await
    .unwrap();
    assert!(
        h.receiver.wakes(THREAD).await.unwrap().is_empty(),
        "messages do not wake"
    );
}

#[tokio::test]
async fn v03_bodies_are_accepted() {
    let h = Harness::new();
    let config = h.token_config().await;
    let steps = [
        ("v0.3/task-python-model-dump.json", TaskState::Submitted),
        ("v0.3/status-update.json", TaskState::Working),
        ("v0.3/artifact-update.json", TaskState::Working),
        ("v0.3/message.json", TaskState::Working),
        ("v0.3/status-input-required.json", TaskState::InputRequired),
        ("v0.3/task.json", TaskState::Completed),
    ];
    for (path, state) in steps {
        let ack = h
            .post(&config, &token_headers(), &fixture(path))
            .await
            .unwrap();
        assert_eq!(
            (ack.outcome, ack.state),
            (Outcome::Applied, state),
            "{path}"
        );
    }
    let snap = h.snapshot().await;
    assert_eq!(snap.task.artifacts.len(), 2);
    assert!(
        snap.task
            .history
            .iter()
            .any(|m| m.message_id == "msg-agent-9")
    );
    assert_eq!(h.receiver.wakes(THREAD).await.unwrap()[0].seq, 2);
}

#[tokio::test]
async fn lost_races_are_retried_and_persistent_failures_are_503() {
    let h = Harness::new();
    let config = h.token_config().await;
    h.store.fail_next.store(3, Ordering::SeqCst);
    let ack = h
        .post(&config, &token_headers(), &status_body("working", None))
        .await
        .unwrap();
    assert_eq!(ack.outcome, Outcome::Applied);
    h.store.fail_next.store(100, Ordering::SeqCst);
    let err = h
        .post(&config, &token_headers(), &status_body("completed", None))
        .await
        .unwrap_err();
    assert_eq!(
        (err.http_status(), err.code().name),
        (503, "STORE_UNAVAILABLE")
    );
    h.store.fail_next.store(0, Ordering::SeqCst);
    h.store.down.store(true, Ordering::SeqCst);
    let err = h
        .post(&config, &token_headers(), &status_body("completed", None))
        .await
        .unwrap_err();
    assert_eq!(err.http_status(), 503);
    h.store.down.store(false, Ordering::SeqCst);
    // The sender's retry then lands once.
    let ack = h
        .post(&config, &token_headers(), &status_body("completed", None))
        .await
        .unwrap();
    assert_eq!((ack.state, ack.duplicate), (TaskState::Completed, false));
}

#[tokio::test]
async fn concurrent_deliveries_all_land() {
    // The test store yields in every read, so these interleave: all read the
    // same snapshot version, one commit wins, the others retry on the new one.
    let h = Harness::new();
    let config = h.token_config().await;
    let auth = token_headers();
    let bodies: Vec<Vec<u8>> = (0..6)
        .map(|n| artifact_body(&format!("a{n}"), "x", false, true))
        .collect();
    let acks = futures::future::join_all(bodies.iter().map(|b| h.post(&config, &auth, b))).await;
    assert!(
        acks.iter()
            .all(|a| a.as_ref().is_ok_and(|a| a.outcome == Outcome::Applied))
    );
    let snap = h.snapshot().await;
    assert_eq!((snap.task.artifacts.len(), snap.applied), (6, 6));
    assert!(
        h.store.conflicts.load(Ordering::SeqCst) > 0,
        "the writers did race"
    );
}

#[tokio::test]
async fn the_ownership_challenge_echoes_for_live_subscriptions_only() {
    let h = Harness::new();
    let config = h.token_config().await;
    let echo = h
        .receiver
        .challenge(&config, Some("abc-123_XYZ"), h.now())
        .await
        .unwrap();
    assert_eq!(echo, "abc-123_XYZ");
    let err = h
        .receiver
        .challenge("a2apush-nope", Some("abc"), h.now())
        .await
        .unwrap_err();
    assert_eq!(err.http_status(), 401);
    for bad in [
        None,
        Some(""),
        Some("a b"),
        Some("<script>\n"),
        Some(&*"x".repeat(513)),
    ] {
        let err = h
            .receiver
            .challenge(&config, bad, h.now())
            .await
            .unwrap_err();
        assert_eq!(
            (err.http_status(), err.code().name),
            (400, "INVALID_CHALLENGE"),
            "{bad:?}"
        );
    }
}
