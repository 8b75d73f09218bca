//! Stored history is the source of truth: a new run's messages merge into it by id,
//! a request built on a stale copy is refused (409 THREAD_CHANGED, nothing written),
//! a retried abandoned run cannot rewrite history after a newer run, and records
//! written before history pages keep working.

mod support;

use agui_protocol::{Message, RunAgentInput, RunFinishedOutcome};
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::records::{RunRecord, ThreadRecord};
use handoff_core::store::Write;
use handoff_core::{Condition, EngineConfig, Principal, RunOptions, Store};
use support::*;

/// The client's copy: the thread's history plus a new user message.
async fn resend(h: &Harness, run: &str, text: &str) -> RunAgentInput {
    let mut messages = h.thread("t").await.messages;
    messages.push(Message::user(format!("u-{run}"), text));
    RunAgentInput::new("t", run, messages)
}

fn ids(messages: &[Message]) -> Vec<String> {
    messages.iter().map(|m| m.id().to_string()).collect()
}

#[test]
fn a_stale_second_tab_is_refused_and_changes_nothing() {
    block_on(async {
        let h = Harness::new(Chatty);
        h.run(&user_input("t", "r1", "one")).await;
        // Both tabs read the thread now; tab A sends a turn first.
        let stale = resend(&h, "r3", "from tab B").await;
        h.run(&resend(&h, "r2", "from tab A").await).await;
        let before = h.thread("t").await;
        let commits = h.store.commits();

        let err = h.reject(&stale).await;
        assert_eq!(
            (err.code().name, err.http_status()),
            ("THREAD_CHANGED", 409)
        );
        assert!(!err.retryable());
        assert_eq!(h.store.commits(), commits, "a refused request wrote");
        assert_eq!(h.thread("t").await, before);

        // Rehydrated, tab B's turn goes through and keeps tab A's.
        let events = h.run(&resend(&h, "r4", "from tab B again").await).await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        let after = h.thread("t").await.messages;
        assert_eq!(after[..before.messages.len()], before.messages[..]);
        assert_eq!(after.len(), before.messages.len() + 2);
    });
}

#[test]
fn resent_history_is_deduplicated_by_id_and_the_stored_copy_wins() {
    block_on(async {
        let h = Harness::new(Chatty);
        h.run(&user_input("t", "r1", "original")).await;
        let mut input = resend(&h, "r2", "next").await;
        // The client edited its copy of the first message and sent one message twice.
        input.messages[0] = Message::user("u-r1", "tampered");
        input.messages.push(Message::user("u-r2", "next"));
        h.run(&input).await;
        let messages = h.thread("t").await.messages;
        assert_eq!(messages[0].text().as_deref(), Some("original"));
        assert_eq!(ids(&messages).iter().filter(|id| *id == "u-r2").count(), 1);
        assert_eq!(messages.len(), 4);
    });
}

#[test]
fn a_request_sharing_no_history_appends() {
    block_on(async {
        let h = Harness::new(Chatty);
        h.run(&user_input("t", "r1", "one")).await;
        h.run(&user_input("t", "r2", "two")).await;
        let messages = h.thread("t").await.messages;
        assert_eq!(messages.len(), 4);
        assert_eq!(messages[2].text().as_deref(), Some("two"));
    });
}

#[test]
fn a_retried_abandoned_run_after_a_newer_run_is_refused() {
    block_on(async {
        let config = EngineConfig {
            lease_ms: 10_000,
            ..EngineConfig::default()
        };
        let h = Harness::with_config(Blocking::new(Gate::new()), config);
        let abandoned = user_input("t", "r1", "first");
        let mut dead = h.stream(&abandoned).await;
        until_blocked(&mut dead);
        h.advance(10_000);
        // Claimed before runs kept their request (or its re-drive failed): the newer run
        // supersedes it instead of finishing it first (see tests/redrive.rs for that).
        let partition = Principal::anonymous().partition("t").unwrap();
        let item = h
            .store
            .get_one(&partition, "run#r1", h.now())
            .await
            .unwrap();
        let item = item.expect("the run's record");
        let mut run: RunRecord = serde_json::from_slice(&item.value).unwrap();
        assert!(
            run.redrive.take().is_some(),
            "a running run keeps its request"
        );
        let bytes = serde_json::to_vec(&run).unwrap();
        let forget = Write::put(
            "run#r1",
            Condition::Version(item.version),
            bytes,
            item.expires_at_ms,
        );
        h.store
            .commit(&partition, vec![forget], h.now())
            .await
            .unwrap();
        let other = h.instance(Chatty, "b");
        let newer = user_input("t", "r2", "second");
        let events: Vec<_> = other
            .start(newer, RunOptions::default())
            .await
            .unwrap()
            .collect()
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        let before = h.thread("t").await;

        let retry = h.instance(Chatty, "c");
        let err = retry
            .start(abandoned, RunOptions::default())
            .await
            .err()
            .expect("the late retry was accepted");
        assert_eq!(err.code().name, "THREAD_CHANGED");
        assert_eq!(h.thread("t").await, before);
    });
}

#[test]
fn an_interrupted_run_log_references_history_instead_of_copying_it() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe));
        let chat = h.instance(Chatty, "chat");
        for n in 0..20 {
            let input = user_input(
                "t",
                &format!("chat-{n}"),
                "some earlier turn of the conversation",
            );
            let _: Vec<_> = chat
                .start(input, RunOptions::default())
                .await
                .unwrap()
                .collect()
                .await;
        }
        let live = h.run(&user_input("t", "r1", "refund order 7")).await;
        let item = h.item("t", "run#r1").await.unwrap();
        assert!(
            !String::from_utf8_lossy(&item.value).contains("some earlier turn"),
            "the run record copies the history"
        );
        // The replay still carries the full snapshot.
        let (_, replayed) = h.run_record("t", "r1").await.unwrap();
        let snapshot = |events: &[agui_protocol::Event]| {
            events.iter().find_map(|e| match e {
                agui_protocol::Event::MessagesSnapshot(s) => Some(s.messages.clone()),
                _ => None,
            })
        };
        assert_eq!(snapshot(&replayed), snapshot(&live));
        let duplicate = h.run(&user_input("t", "r1", "refund order 7")).await;
        assert_eq!(snapshot(&duplicate), snapshot(&live));
    });
}

#[test]
fn a_thread_written_before_history_pages_is_read_and_migrated() {
    block_on(async {
        let h = Harness::new(Chatty);
        let legacy = serde_json::json!({
            "status": "idle",
            "pending": [],
            "state": { "stage": "old" },
            "messages": [
                { "id": "old-1", "role": "user", "content": "from the old format" },
                { "id": "old-2", "role": "assistant", "content": "answered" }
            ],
            "lastRun": { "runId": "r0", "status": "succeeded" }
        });
        let write = Write::put(
            "thread",
            handoff_core::Condition::Absent,
            legacy.to_string().into_bytes(),
            None,
        );
        h.store.commit("t", vec![write], h.now()).await.unwrap();
        assert_eq!(ids(&h.thread("t").await.messages), ["old-1", "old-2"]);

        h.run(&resend(&h, "r1", "new turn").await).await;
        let view = h.thread("t").await;
        assert_eq!(ids(&view.messages)[..3], ["old-1", "old-2", "u-r1"]);
        let item = h.item("t", "thread").await.unwrap();
        let head: ThreadRecord = serde_json::from_slice(&item.value).unwrap();
        assert!(
            head.messages.is_empty(),
            "the head still carries the history"
        );
        assert_eq!((head.pages, head.message_count), (2, 4));
        assert!(
            head.history_digest.is_some(),
            "the migrated history has no digest"
        );
    });
}

#[test]
fn a_paged_thread_stored_before_digests_gets_one_from_its_next_run() {
    block_on(async {
        let h = Harness::new(Chatty);
        h.run(&user_input("t", "r1", "one")).await;
        // As an older release wrote it: pages, no digest.
        let item = h.item("t", "thread").await.unwrap();
        let mut head: serde_json::Value = serde_json::from_slice(&item.value).unwrap();
        assert!(head["historyDigest"].is_string());
        head.as_object_mut().unwrap().remove("historyDigest");
        let write = Write::put(
            "thread",
            handoff_core::Condition::Always,
            head.to_string().into_bytes(),
            None,
        );
        h.store.commit("t", vec![write], h.now()).await.unwrap();

        h.run(&resend(&h, "r2", "two").await).await;
        let item = h.item("t", "thread").await.unwrap();
        let head: ThreadRecord = serde_json::from_slice(&item.value).unwrap();
        assert!(head.history_digest.is_some(), "no digest after the run");
        // A third turn resending it is taken from its input and keeps the history whole.
        h.run(&resend(&h, "r3", "three").await).await;
        let messages = h.thread("t").await.messages;
        assert_eq!(messages.len(), 6);
        assert_eq!(messages[0].text().as_deref(), Some("one"));
    });
}
