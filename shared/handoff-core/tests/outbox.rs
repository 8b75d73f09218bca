//! The outbox (issue 51's pushes, issue 53's webhooks): notices written with the run's end,
//! watches inherited by the answering run, retries with backoff, one id per notice.

mod support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use handoff_core::outbox::{
    Notice, Notifier, Outbox, OutboxItem, RunFacts, SendOutcome, Sender, Watch, listed,
};
use handoff_core::{RunOptions, Store};
use serde_json::json;
use support::*;

/// Tells about every run that carries a `test` watch: its status and watches, each
/// notice listed under `listed:` + the watch's key.
struct Watching;

impl Notifier for Watching {
    fn notices(&self, facts: &RunFacts<'_>) -> Vec<Notice> {
        facts
            .watches
            .iter()
            .filter(|w| w.kind == "test")
            .map(|w| {
                Notice::new(
                    "test",
                    json!({"key": w.key, "run": facts.run_id, "status": format!("{:?}", facts.status)}),
                )
                .listed_in(format!("listed:{}", w.key))
            })
            .collect()
    }
}

/// Fails its first `failures` attempts, then records what it delivers.
#[derive(Default)]
struct Flaky {
    failures: Mutex<usize>,
    attempts: Mutex<Vec<(String, u32)>>,
    delivered: Mutex<Vec<OutboxItem>>,
}

/// The sender the outbox holds, sharing its record with the test.
struct Shared(Arc<Flaky>);

impl std::ops::Deref for Shared {
    type Target = Flaky;
    fn deref(&self) -> &Flaky {
        &self.0
    }
}

#[async_trait]
impl Sender for Shared {
    async fn send(&self, _partition: &str, item: &OutboxItem) -> SendOutcome {
        lock(&self.attempts).push((item.id.clone(), item.attempts));
        let mut failures = lock(&self.failures);
        if *failures > 0 {
            *failures -= 1;
            return SendOutcome::Retry {
                done: Vec::new(),
                error: "receiver down".into(),
            };
        }
        lock(&self.delivered).push(item.clone());
        SendOutcome::Delivered
    }
}

fn harness(failures: usize) -> (Harness, Arc<Flaky>, Outbox) {
    let probe = Probe::new();
    let mut h = Harness::new(RefundAgent::new(probe));
    let flaky = Arc::new(Flaky {
        failures: Mutex::new(failures),
        ..Flaky::default()
    });
    let store: Arc<dyn Store> = h.store.clone();
    let outbox = Outbox::new(store, h.engine.runtime().clone())
        .sender("test", Arc::new(Shared(flaky.clone())));
    h.engine = h
        .engine
        .clone()
        .with_notifier(Arc::new(Watching))
        .with_outbox(outbox.clone());
    (h, flaky, outbox)
}

fn watched(key: &str) -> RunOptions {
    RunOptions {
        watches: vec![Watch::new("test", key)],
        ..RunOptions::default()
    }
}

#[tokio::test]
async fn the_answering_run_inherits_the_watch_and_each_end_is_told_once() {
    let (h, flaky, _) = harness(0);
    let events = h
        .run_with(&user_input("t", "r1", "refund"), watched("task-1"))
        .await;
    let asked = interrupts(&events);
    // Answered with no watch of its own: it inherits the interrupt's.
    h.run(&resume_input("t", "r2", vec![approve(&asked[0])]))
        .await;
    let delivered = lock(&flaky.delivered).clone();
    let told: Vec<_> = delivered
        .iter()
        .map(|i| (i.body["run"].clone(), i.body["status"].clone()))
        .collect();
    assert_eq!(
        told,
        [
            (json!("r1"), json!("Interrupted")),
            (json!("r2"), json!("Succeeded"))
        ]
    );
    assert!(delivered.iter().all(|i| i.body["key"] == "task-1"));
    // A run nobody watches is told about to no one.
    h.run(&user_input("t2", "r3", "refund")).await;
    assert_eq!(lock(&flaky.delivered).len(), 2);
}

#[tokio::test]
async fn a_failing_receiver_is_tried_again_with_backoff_under_one_id() {
    let (h, flaky, outbox) = harness(2);
    h.run_with(&user_input("t", "r1", "refund"), watched("task-1"))
        .await;
    assert_eq!(
        lock(&flaky.attempts).len(),
        1,
        "the first attempt follows the run's end"
    );
    assert_eq!(
        outbox.deliver_due(10).await.delivered,
        0,
        "not due before its backoff"
    );
    h.advance(5_000);
    let report = outbox.deliver_due(10).await;
    assert_eq!(
        (report.delivered, report.retried),
        (0, 1),
        "second attempt fails too"
    );
    h.advance(5_000);
    assert_eq!(
        outbox.deliver_due(10).await.delivered,
        0,
        "the third waits 10 s, not 5"
    );
    h.advance(5_000);
    assert_eq!(outbox.deliver_due(10).await.delivered, 1);
    let attempts = lock(&flaky.attempts).clone();
    assert_eq!(attempts.iter().map(|a| a.1).collect::<Vec<_>>(), [1, 2, 3]);
    assert!(
        attempts.iter().all(|a| a.0 == attempts[0].0),
        "one id: {attempts:?}"
    );
    h.advance(3_600_000);
    assert_eq!(
        outbox.deliver_due(10).await,
        Default::default(),
        "delivered items are not sent again"
    );
}

#[tokio::test]
async fn a_listed_notice_stays_listed_once_delivered_newest_first() {
    let (h, _, outbox) = harness(1);
    let events = h
        .run_with(&user_input("t", "r1", "refund"), watched("task-1"))
        .await;
    let asked = interrupts(&events);
    let store: Arc<dyn Store> = h.store.clone();
    let now = h.engine.runtime().now_ms();
    let (items, _) = listed(store.as_ref(), "listed:task-1", None, 10, now)
        .await
        .unwrap();
    assert_eq!(items.len(), 1);
    let pending = &items[0].item;
    assert_eq!((pending.attempts, pending.outcome.as_deref()), (1, None));
    assert_eq!(pending.body["run"], "r1");

    h.advance(5_000);
    assert_eq!(outbox.deliver_due(10).await.delivered, 1);
    h.advance(1);
    h.run(&resume_input("t", "r2", vec![approve(&asked[0])]))
        .await;
    let now = h.engine.runtime().now_ms();
    let (items, next) = listed(store.as_ref(), "listed:task-1", None, 10, now)
        .await
        .unwrap();
    let seen: Vec<_> = items
        .iter()
        .map(|l| {
            (
                l.item.body["run"].clone(),
                l.item.attempts,
                l.item.outcome.clone(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (json!("r2"), 1, Some("delivered".to_owned())),
            (json!("r1"), 2, Some("delivered".to_owned())),
        ],
        "delivered items stay listed, the newest first"
    );
    assert!(next.is_none(), "a short page has no next");
    assert!(items.iter().all(|l| l.partition == items[0].partition));
    let (other, _) = listed(store.as_ref(), "listed:task-2", None, 10, now)
        .await
        .unwrap();
    assert!(other.is_empty(), "another listing is another scope");
}
