//! A finish commit that storage refuses (throttling, an outage) ends the stream with
//! `STORE_UNAVAILABLE` and hands the thread back at once when storage allows it, instead of
//! leaving it leased until the lease lapses.

mod support;

use futures::executor::block_on;
use handoff_core::StoreError;
use handoff_core::codes::ErrorCode;
use handoff_core::records::{RunStatus, ThreadStatus};
use support::*;

fn throttled() -> StoreError {
    StoreError::Unavailable("ThrottlingException".into())
}

#[test]
fn a_refused_finish_releases_the_lease_and_the_same_request_runs_again_at_once() {
    block_on(async {
        let h = Harness::new(RefundAgent::new(Probe::new()));
        h.store
            .fail_commits_where(throttled(), finishing_commit("interrupted"));
        let input = user_input("t", "r1", "refund my order");
        let events = h.run(&input).await;
        assert_eq!(
            run_error(&events).code.as_deref(),
            Some("STORE_UNAVAILABLE")
        );

        let view = h.thread("t").await;
        assert_eq!(view.status, ThreadStatus::Idle);
        assert!(view.pending_interrupts.is_empty());
        assert!(
            view.messages.is_empty(),
            "nothing of the failed run was kept"
        );
        assert_eq!(
            view.last_run.map(|r| (r.run_id.to_string(), r.status)),
            Some(("r1".to_owned(), RunStatus::Errored))
        );

        // No clock advance: the retry is not waiting for a lease to lapse.
        h.store.heal();
        let events = h.run(&input).await;
        assert_eq!(interrupts(&events).len(), 1);
        assert_eq!(h.thread("t").await.status, ThreadStatus::Interrupted);
    });
}

#[test]
fn when_the_release_is_refused_too_the_thread_stays_leased_until_the_lease_lapses() {
    block_on(async {
        let h = Harness::new(RefundAgent::new(Probe::new()));
        let claimed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = claimed.clone();
        // Every commit after the claim fails: the finish and the release.
        h.store.fail_commits_where(throttled(), move |_, _| {
            seen.swap(true, std::sync::atomic::Ordering::SeqCst)
        });
        let input = user_input("t", "r1", "refund my order");
        let events = h.run(&input).await;
        assert_eq!(
            run_error(&events).code.as_deref(),
            Some("STORE_UNAVAILABLE")
        );
        assert_eq!(
            h.store.injected_failures(),
            2,
            "the finish, then the release"
        );
        h.store.heal();

        let busy = h.reject(&user_input("t", "r2", "hello")).await;
        assert_eq!(busy.code().name, "THREAD_BUSY");
        h.advance(h.engine.config().lease_ms);
        let events = h.run(&input).await;
        assert_eq!(interrupts(&events).len(), 1);
    });
}
