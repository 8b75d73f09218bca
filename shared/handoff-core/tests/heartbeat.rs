//! A run holds its thread only while its lease lasts. Without a host deadline (dev
//! server, a Worker without a budget) the engine renews the lease under its fence and
//! stops the run before a lease it could not renew ends, so no second run can claim
//! the thread while the first still calls downstream services.

mod support;

use agui_protocol::RunFinishedOutcome;
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::records::{ThreadRecord, ThreadStatus};
use handoff_core::{EngineConfig, RunStream, StoreError};
use support::*;

const LEASE: u64 = 10_000;

fn short_lease() -> EngineConfig {
    EngineConfig {
        lease_ms: LEASE,
        // Only the lease's timers here (stop polls and the journal have their own tests).
        stop_poll_ms: 0,
        live_flush_ms: 0,
        ..EngineConfig::default()
    }
}

async fn stored_thread(h: &Harness) -> ThreadRecord {
    let item = h.item("t", "thread").await.expect("thread record");
    serde_json::from_slice(&item.value).unwrap()
}

/// Fires the pending timers, then polls the run as far as it goes.
fn fire(h: &Harness, stream: &mut RunStream, events: &mut Vec<agui_protocol::Event>) -> bool {
    h.sleep.fire();
    let (more, ended) = drain_ready(stream);
    events.extend(more);
    ended
}

#[test]
fn a_long_run_renews_its_lease_and_keeps_the_thread() {
    block_on(async {
        let gate = Gate::new();
        let h = Harness::with_config(Blocking::new(gate.clone()), short_lease());
        let input = user_input("t", "r1", "long job");
        let mut stream = h.stream(&input).await;
        let mut events = until_blocked(&mut stream);
        // Renewal halfway through the lease.
        assert_eq!(h.sleep.requested(), vec![LEASE / 2]);

        h.advance(LEASE / 2);
        assert!(!fire(&h, &mut stream, &mut events));
        let renewed = stored_thread(&h).await;
        let lease = renewed.lease.expect("lease");
        assert_eq!(lease.expires_at_ms, h.now() + LEASE);

        // Past the original lease end the thread is still this run's.
        h.advance(LEASE / 2 + 1);
        let err = h.reject(&user_input("t", "r2", "me too")).await;
        assert_eq!(err.code().name, "THREAD_BUSY");

        // The run finishes under its renewed fence.
        gate.open();
        events.extend(stream.collect::<Vec<_>>().await);
        assert_valid_stream(&events, &input);
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(h.thread("t").await.status, ThreadStatus::Idle);
    });
}

#[test]
fn a_run_that_cannot_renew_stops_before_its_lease_ends() {
    block_on(async {
        let h = Harness::with_config(Blocking::new(Gate::new()), short_lease());
        let input = user_input("t", "r1", "long job");
        let mut stream = h.stream(&input).await;
        let mut events = until_blocked(&mut stream);
        let lease_end = h.now() + LEASE;
        // Storage refuses every renewal (the claim already happened).
        h.store
            .fail_commits_where(StoreError::Unavailable("throttled".into()), |_, writes| {
                thread_put_status(writes).as_deref() == Some("running")
            });
        h.advance(LEASE / 2);
        let mut ended = fire(&h, &mut stream, &mut events);
        for _ in 0..10 {
            if ended {
                break;
            }
            h.advance(1_000);
            ended = fire(&h, &mut stream, &mut events);
        }
        assert!(ended, "the run kept going past its lease");
        assert!(h.now() < lease_end, "stopped only after the lease ended");
        assert_valid_stream(&events, &input);
        assert_eq!(outcome(&events), &RunFinishedOutcome::Cancelled);
        let thread = stored_thread(&h).await;
        assert_eq!(thread.status, ThreadStatus::Idle);
        assert!(thread.lease.is_none());
    });
}

#[test]
fn a_renewal_that_finds_the_thread_taken_over_stops_the_run() {
    block_on(async {
        let h = Harness::with_config(Blocking::new(Gate::new()), short_lease());
        let input = user_input("t", "r1", "long job");
        let mut stream = h.stream(&input).await;
        let mut events = until_blocked(&mut stream);
        // The process stalls past its lease; another instance takes the thread.
        h.advance(LEASE);
        let other = h.instance(Chatty, "b");
        let next = user_input("t", "r2", "hello");
        let taken: Vec<_> = other
            .start(next, Default::default())
            .await
            .unwrap()
            .collect()
            .await;
        assert_eq!(outcome(&taken), &RunFinishedOutcome::success());

        assert!(fire(&h, &mut stream, &mut events));
        assert_valid_stream(&events, &input);
        assert_eq!(run_error(&events).code.as_deref(), Some("LEASE_LOST"));
        assert_eq!(
            h.thread("t").await.last_run.map(|r| r.run_id.to_string()),
            Some("r2".to_owned())
        );
    });
}
