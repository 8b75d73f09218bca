//! A thread's first run claims it with one commit and no read before it (on DynamoDB, a
//! round trip fewer before the first byte). Every assumption is a condition of that commit,
//! so an existing thread, a record of the same run, or an old thread's leftovers refuse it,
//! and the claim then reads and decides as it always did (`lifetime.rs` has the leftovers).

mod support;

use agui_protocol::{Message, RunAgentInput, RunFinishedOutcome};
use futures::executor::block_on;
use handoff_core::records::THREAD_KEY;
use support::*;

#[test]
fn a_new_threads_first_run_reads_nothing_before_it_claims() {
    block_on(async {
        let h = Harness::new(Chatty);
        let events = h.run(&user_input("t", "r1", "hello")).await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        let read = h.store.keys_read();
        assert!(
            !read.iter().any(|key| key == THREAD_KEY),
            "the claim read the thread: {read:?}"
        );
        assert_eq!(h.store.conflicts(), 0, "no commit was refused");
        assert_eq!(h.thread("t").await.messages.len(), 2);
    });
}

#[test]
fn a_history_with_a_reply_in_it_is_read_first() {
    block_on(async {
        let h = Harness::new(Chatty);
        h.run(&user_input("t", "r1", "hello")).await;
        let mut messages = h.thread("t").await.messages;
        messages.push(Message::user("u-r2", "again"));
        let events = h.run(&RunAgentInput::new("t", "r2", messages)).await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(
            h.store.conflicts(),
            0,
            "the claim did not try a blind commit"
        );
        assert_eq!(h.thread("t").await.messages.len(), 4);
    });
}

/// A client that sends only its new message looks like a first run on every turn: its
/// blind commit is refused (nothing written), and the claim reads and runs the turn.
#[test]
fn a_later_turn_that_sends_only_its_new_message_is_refused_once_then_runs() {
    block_on(async {
        let h = Harness::new(Chatty);
        h.run(&user_input("t", "r1", "hello")).await;
        let before = h.store.commits();
        let events = h.run(&user_input("t", "r2", "again")).await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(h.store.conflicts(), 1);
        let ids: Vec<String> = h
            .thread("t")
            .await
            .messages
            .iter()
            .map(|m| m.id().to_string())
            .collect();
        assert_eq!(ids.len(), 4, "{ids:?}");
        assert!(h.store.commits() > before);
    });
}

#[test]
fn the_same_first_run_sent_again_is_replayed_not_run_twice() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let input = user_input("t", "r1", "refund order 7");
        let first = h.run(&input).await;
        let again = h.run(&input).await;
        assert_eq!(interrupts(&first), interrupts(&again));
        assert_eq!(
            h.store.conflicts(),
            1,
            "the retry's blind commit was refused"
        );
        let view = h.thread("t").await;
        assert_eq!(view.pending_interrupts.len(), 1);
        assert_eq!(
            view.last_run.map(|r| r.run_id.to_string()),
            Some("r1".to_owned())
        );
    });
}

/// Two first runs of one new thread at once: one claims it, the other is told it is busy
/// (or, once the first is done, runs after it); never both on one fresh head.
#[test]
fn two_first_runs_racing_on_a_new_thread_do_not_both_claim_it() {
    block_on(async {
        let h = Harness::new(Chatty);
        h.store.yield_on_io();
        let (one, two) = (user_input("t", "r1", "one"), user_input("t", "r2", "two"));
        let (a, b) = futures::join!(h.run(&one), h.run(&two));
        let succeeded = [&a, &b]
            .iter()
            .filter(|events| matches!(events.last(), Some(agui_protocol::Event::RunFinished(_))))
            .count();
        let view = h.thread("t").await;
        // Whatever the interleaving, the head holds exactly the turns that succeeded.
        assert_eq!(
            view.messages.len(),
            2 * succeeded,
            "{}\n{}",
            dump(&a),
            dump(&b)
        );
        assert!(succeeded >= 1);
    });
}
