//! Cost per turn is independent of history length: a turn on a thread with 1,000
//! messages writes at most 1.5× the bytes of the same turn on a 10-message thread, and
//! the same number of store writes and reads. A turn whose client resends the history
//! (chat, and the resume of an approval) reads no history page at all (the head's digest
//! recognises it); a resume sending only its answers reads them once. Bytes are
//! counted at the store trait, which every backend receives unchanged (no timing
//! involved).

use handoff_core::store::memory::MemoryStore;
use handoff_store_sqlite::SqliteStore;
use handoff_tests::history_cost::{Conversation, ResumeBody};

fn assert_flat(
    small: handoff_tests::history_cost::TurnCost,
    large: handoff_tests::history_cost::TurnCost,
) {
    for (kind, a, b) in [
        ("chat", small.chat, large.chat),
        ("approval", small.approval, large.approval),
    ] {
        assert!(
            b.bytes_written * 2 <= a.bytes_written * 3,
            "{kind} turn at {} msgs wrote {} B, at {} msgs {} B",
            small.messages,
            a.bytes_written,
            large.messages,
            b.bytes_written
        );
        assert_eq!(a.commits, b.commits, "{kind}: commits per turn changed");
        assert_eq!(a.puts, b.puts, "{kind}: puts per turn changed");
        assert_eq!(a.gets, b.gets, "{kind}: gets per turn changed");
        assert_eq!(a.scans, b.scans, "{kind}: scans per turn changed");
    }
    // The resent history is recognised: no page is read, by the chat turn nor by the
    // approval turn's resume (whose body carries the history the client holds, as
    // `@ag-ui/client` sends it).
    // Reads of an approval turn: each run's claim (the resume's also brings the audit
    // chain's head); the effect writes its record without reading it first.
    assert_eq!(small.approval.gets, 2, "approval turn reads: {small:?}");
    assert_eq!(small.chat.scans, 0, "chat turn read pages: {small:?}");
    assert_eq!(large.chat.scans, 0, "chat turn read pages: {large:?}");
    assert_eq!(
        small.approval.scans, 0,
        "approval turn read pages: {small:?}"
    );
    assert_eq!(
        large.approval.scans, 0,
        "approval turn read pages: {large:?}"
    );
}

#[test]
fn memory_turn_cost_does_not_grow_with_history() {
    futures::executor::block_on(async {
        let mut c = Conversation::new(MemoryStore::default(), "t");
        c.grow_to(10).await;
        let small = c.measure().await;
        c.grow_to(1_000).await;
        let large = c.measure().await;
        assert!(large.messages >= 1_000);
        assert_flat(small, large);
    });
}

#[test]
fn sqlite_turn_cost_does_not_grow_with_history() {
    futures::executor::block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("t.db")).unwrap();
        let mut c = Conversation::new(store, "t");
        c.grow_to(10).await;
        let small = c.measure().await;
        c.grow_to(300).await;
        let large = c.measure().await;
        assert_flat(small, large);
    });
}

#[test]
fn a_resume_without_history_reads_the_pages_once() {
    futures::executor::block_on(async {
        let mut c = Conversation::new(MemoryStore::default(), "t")
            .with_resume_body(ResumeBody::AnswersOnly);
        c.grow_to(10).await;
        let cost = c.measure().await;
        assert_eq!(cost.approval.scans, 1, "approval turn: {cost:?}");
        assert_eq!(cost.chat.scans, 0, "chat turn: {cost:?}");
    });
}
