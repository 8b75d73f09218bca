//! Where a running run keeps the request it is re-driven from (issue 54): in its own run
//! record, listed by its lease's end, so a run pays no item of its own for its re-drive and
//! its end no delete. A request an earlier version kept in an item of its own
//! (`redrive#{runId}`) is still re-driven, and dropped once its run has ended.

mod support;

use futures::executor::block_on;
use handoff_core::records::{RunRecord, RunStatus};
use handoff_core::store::{IndexEntry, MAX_INDEX_RANK};
use handoff_core::{Condition, EngineConfig, Principal, REDRIVE_SCOPE, Store, Write};
use support::*;

const LEASE: u64 = 10_000;

fn config() -> EngineConfig {
    EngineConfig {
        lease_ms: LEASE,
        ..EngineConfig::default()
    }
}

/// The partition of thread `t` of the anonymous principal.
fn partition() -> String {
    Principal::anonymous().partition("t").expect("a partition")
}

/// The keys listed for a re-drive, all of them (due or not).
async fn listed(h: &Harness) -> Vec<String> {
    let hits = h.store.list_index(REDRIVE_SCOPE, None, 10, h.now()).await;
    hits.expect("listing")
        .into_iter()
        .map(|hit| hit.key)
        .collect()
}

async fn stored_run(h: &Harness) -> (RunRecord, handoff_core::store::Item) {
    let item = h.store.get_one(&partition(), "run#r1", h.now()).await;
    let item = item.expect("read").expect("the run's record");
    let record = serde_json::from_slice(&item.value).expect("a run record");
    (record, item)
}

#[test]
fn a_running_run_keeps_its_request_in_its_own_record_and_its_end_takes_it_away() {
    block_on(async {
        let gate = Gate::new();
        let h = Harness::with_config(Blocking::new(gate.clone()), config());
        let mut stream = h.stream(&user_input("t", "r1", "hello")).await;
        until_blocked(&mut stream);
        // The run record itself is listed, and it holds the request: no item beside it.
        assert_eq!(listed(&h).await, ["run#r1"]);
        let (record, _) = stored_run(&h).await;
        assert_eq!(record.status, RunStatus::Running);
        assert!(record.redrive.is_some(), "the request rides in the record");
        let legacy = h.store.get_one(&partition(), "redrive#r1", h.now()).await;
        assert_eq!(legacy.expect("read"), None, "no item of its own");

        gate.open();
        let events: Vec<_> = futures::StreamExt::collect(stream).await;
        assert!(contains_run_finished(&events), "{}", dump(&events));
        let (record, _) = stored_run(&h).await;
        assert_eq!(record.status, RunStatus::Succeeded);
        assert_eq!(record.redrive, None, "an ended run keeps no request");
        assert!(listed(&h).await.is_empty(), "and is listed nowhere");
    });
}

/// Rewrites the store as an earlier version left a run that died: the request in an item
/// of its own, listed by the lease's end, and the run record without it.
async fn as_an_earlier_version_kept_it(h: &Harness) {
    let (mut record, item) = stored_run(h).await;
    let request = record
        .redrive
        .take()
        .expect("a running run keeps its request");
    let run = Write::put(
        "run#r1",
        Condition::Version(item.version),
        serde_json::to_vec(&record).expect("encode"),
        item.expires_at_ms,
    );
    let lease_end = h.now() + LEASE;
    let kept = Write::put(
        "redrive#r1",
        Condition::Absent,
        serde_json::to_vec(&request).expect("encode"),
        item.expires_at_ms,
    )
    .indexed(IndexEntry {
        scope: REDRIVE_SCOPE.to_owned(),
        rank: MAX_INDEX_RANK - lease_end,
    });
    let committed = h.store.commit(&partition(), vec![run, kept], h.now()).await;
    committed.expect("commit");
    assert_eq!(listed(h).await, ["redrive#r1"]);
}

#[test]
fn a_request_an_earlier_version_kept_apart_is_re_driven_and_then_dropped() {
    block_on(async {
        let h = Harness::with_config(Blocking::new(Gate::new()), config());
        let mut stream = h.stream(&user_input("t", "r1", "hello")).await;
        until_blocked(&mut stream);
        drop(stream);
        as_an_earlier_version_kept_it(&h).await;

        // Its status reads running while it waits, as before.
        let view = h
            .engine
            .run_status(&Principal::anonymous(), "t", "r1")
            .await;
        assert_eq!(
            view.expect("status").status,
            handoff_core::RunPhase::Running
        );

        h.advance(LEASE * 2);
        let released = Gate::new();
        released.open();
        let other = h.instance(Blocking::new(released), "b");
        assert_eq!(other.redrive_due(10, None).await.redriven, 1);
        let (record, _) = stored_run(&h).await;
        assert_eq!(record.status, RunStatus::Succeeded);
        // The legacy item outlives its run until a sweep finds it stale and drops it.
        let report = other.redrive_due(10, None).await;
        assert_eq!((report.redriven, report.skipped), (0, 1));
        assert!(listed(&h).await.is_empty());
        let legacy = h.store.get_one(&partition(), "redrive#r1", h.now()).await;
        assert_eq!(legacy.expect("read"), None);
    });
}
