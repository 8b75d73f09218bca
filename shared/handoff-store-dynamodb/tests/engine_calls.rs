//! DynamoDB round trips per engine operation, counted with the store's SDK interceptor while
//! the demo agent runs through [`handoff_core::Engine`] on a real `moto_server`.
//!
//! The runtime has no spawner, so a run is driven only by polling its stream: whatever the
//! counter shows when `Engine::start` returns is exactly what happened before `RUN_STARTED`.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;

use agui_protocol::{Event, EventType, Interrupt, Message, ResumeEntry, RunAgentInput};
use futures::StreamExt;
use handoff_core::runtime::{ManualClock, NeverSleep, SequentialIds};
use handoff_core::{Engine, RunOptions, Runtime, Store};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_store_dynamodb::DynamoStore;
use serde_json::json;
use support::fresh_store;

const NOW: u64 = 1_700_000_000_000;
const WRITES: [&str; 5] = [
    "PutItem",
    "UpdateItem",
    "DeleteItem",
    "TransactWriteItems",
    "BatchWriteItem",
];

type Counts = BTreeMap<String, u64>;

struct Measured {
    /// Requests before `RUN_STARTED` (or before the replay's first event).
    before_start: Counts,
    /// Requests of the whole run, stream drained.
    total: Counts,
    events: Vec<Event>,
}

async fn setup() -> (Arc<DynamoStore>, Engine) {
    let store = Arc::new(fresh_store().await);
    let shared: Arc<dyn Store> = store.clone();
    let agent = DemoAgent::new(shared.clone(), DemoConfig::default());
    let runtime = Runtime::new(
        ManualClock::new(NOW),
        SequentialIds::new("calls"),
        NeverSleep,
    );
    (store, Engine::new(agent, shared, runtime))
}

async fn measure(store: &DynamoStore, engine: &Engine, input: RunAgentInput) -> Measured {
    let counter = store.call_counter();
    let before = counter.snapshot();
    let stream = engine
        .start(input, RunOptions::default())
        .await
        .unwrap_or_else(|e| panic!("start: {e}"));
    let before_start = counter.since(&before);
    let events: Vec<Event> = stream.collect().await;
    Measured {
        before_start,
        total: counter.since(&before),
        events,
    }
}

fn counts(pairs: &[(&str, u64)]) -> Counts {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}

fn writes(c: &Counts) -> Counts {
    c.iter()
        .filter(|(op, _)| WRITES.contains(&op.as_str()))
        .map(|(op, n)| (op.clone(), *n))
        .collect()
}

fn reads(c: &Counts) -> Counts {
    c.iter()
        .filter(|(op, _)| !WRITES.contains(&op.as_str()))
        .map(|(op, n)| (op.clone(), *n))
        .collect()
}

fn minus(a: &Counts, b: &Counts) -> Counts {
    a.iter()
        .filter_map(|(op, n)| {
            let d = n - b.get(op).copied().unwrap_or(0);
            (d > 0).then(|| (op.clone(), d))
        })
        .collect()
}

fn types(events: &[Event]) -> Vec<EventType> {
    events.iter().map(Event::event_type).collect()
}

fn interrupts(events: &[Event]) -> Vec<Interrupt> {
    match events.last() {
        Some(Event::RunFinished(f)) => match &f.outcome {
            Some(agui_protocol::RunFinishedOutcome::Interrupt { interrupts }) => interrupts.clone(),
            other => panic!("expected an interrupt outcome, got {other:?}"),
        },
        other => panic!("expected RUN_FINISHED last, got {other:?}"),
    }
}

fn refund(thread: &str, run: &str) -> RunAgentInput {
    let text = "Refund order A1024";
    RunAgentInput::new(thread, run, vec![Message::user(format!("u-{run}"), text)])
}

fn approve(thread: &str, run: &str, interrupt: &Interrupt) -> RunAgentInput {
    let entry = ResumeEntry::resolved(interrupt.id.clone(), json!({ "approved": true }));
    RunAgentInput::new(thread, run, Vec::new()).with_resume(vec![entry])
}

/// Interrupt, resume, duplicate resume: the round-trip targets of the store's crate docs.
#[tokio::test]
async fn engine_operations_cost_the_documented_round_trips() {
    let (store, engine) = setup().await;

    // A new thread's first run that ends in an interrupt: one transaction claims it, with
    // no read before (its conditions stand in for one), then the whole outcome (thread,
    // pending interrupts, run log) persists in one transaction.
    let first = measure(&store, &engine, refund("t1", "r1")).await;
    assert_eq!(types(&first.events)[0], EventType::RunStarted);
    let raised = interrupts(&first.events);
    assert_eq!(
        first.before_start,
        counts(&[("TransactWriteItems", 1)]),
        "claim of a new thread's first run"
    );
    assert_eq!(
        reads(&first.total),
        counts(&[]),
        "the first run reads nothing"
    );
    let after_start = minus(&first.total, &first.before_start);
    assert_eq!(
        writes(&after_start),
        counts(&[("TransactWriteItems", 1)]),
        "persisting an interrupted run: every write after RUN_STARTED"
    );
    assert_eq!(
        writes(&first.total),
        counts(&[("TransactWriteItems", 2)]),
        "every write of the interrupted run (claim + persist)"
    );
    eprintln!("interrupted run: {:?}", first.total);

    // The resume: RUN_STARTED after two engine round trips (one read, one claim), plus
    // the demo's own readiness check, which reads its ledger (a refund beyond what the
    // order has left is a 422 before anything is written).
    let resume = measure(&store, &engine, approve("t1", "r2", &raised[0])).await;
    assert_eq!(types(&resume.events)[0], EventType::RunStarted);
    assert_eq!(
        resume.before_start,
        counts(&[
            ("GetItem", 1),
            ("TransactGetItems", 1),
            ("TransactWriteItems", 1)
        ]),
        "round trips before the resume's RUN_STARTED"
    );
    assert_eq!(
        types(&resume.events).last(),
        Some(&EventType::RunFinished),
        "{:?}",
        resume.events
    );
    eprintln!("resume run: {:?}", resume.total);
    // Its reads: the claim's, the history pages, and the demo ledger's readiness check and
    // update. `ctx.effect` writes its "started" record under `Absent` without reading it.
    assert_eq!(
        reads(&resume.total),
        counts(&[("GetItem", 2), ("Query", 1), ("TransactGetItems", 1)]),
        "every read of the demo refund's resume"
    );

    // The same answer again under a new runId: a replay from one consistent read.
    let duplicate = measure(&store, &engine, approve("t1", "r3", &raised[0])).await;
    assert_eq!(
        duplicate.total,
        counts(&[("TransactGetItems", 1)]),
        "duplicate resume (new runId)"
    );
    // Replays stream the events as the run did (the log is stored compacted, with its cuts).
    let replayed = types(&resume.events);
    assert_eq!(types(&duplicate.events), replayed);
    // A retried POST (same runId and body) is the same one read.
    let retried = measure(&store, &engine, approve("t1", "r2", &raised[0])).await;
    assert_eq!(
        retried.total,
        counts(&[("TransactGetItems", 1)]),
        "retried resume (same runId)"
    );
    assert_eq!(types(&retried.events), replayed);
    // A retried first run tries its blind claim, which the stored thread refuses, then
    // replays from one read (and, as that run was interrupted, its snapshot's pages).
    let retried_first = measure(&store, &engine, refund("t1", "r1")).await;
    assert_eq!(
        retried_first.total,
        counts(&[
            ("Query", 1),
            ("TransactGetItems", 1),
            ("TransactWriteItems", 1)
        ]),
        "retried first run (same runId): a refused claim, then the replay's reads"
    );
    assert_eq!(types(&retried_first.events), types(&first.events));

    // The side effect ran once in all of this.
    let shared: Arc<dyn Store> = store.clone();
    let account = handoff_demo::Ledger::new(shared)
        .account("A1024", NOW)
        .await
        .unwrap();
    assert_eq!(account.refunds, 1);

    // Reads of the HTTP surface: the thread view reads the small head, then the history
    // pages (one per run that added messages) with one Query.
    let counter = store.call_counter();
    let before = counter.snapshot();
    assert!(
        engine
            .thread(&handoff_core::Principal::anonymous(), "t1")
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        counter.since(&before),
        counts(&[("GetItem", 1), ("Query", 1)]),
        "thread view"
    );
    let before = counter.snapshot();
    assert!(
        engine
            .run_events(&handoff_core::Principal::anonymous(), "t1", "r2")
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        counter.since(&before),
        counts(&[("GetItem", 1)]),
        "run replay"
    );
    // An interrupted run's log references the history for its MESSAGES_SNAPSHOT: its
    // replay reads the run, then the pages up to its own.
    let before = counter.snapshot();
    assert!(
        engine
            .run_events(&handoff_core::Principal::anonymous(), "t1", "r1")
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        counter.since(&before),
        counts(&[("GetItem", 1), ("Query", 1)]),
        "interrupted run replay"
    );
    eprintln!(
        "reads/writes — interrupted run: {:?} / {:?}; resume: {:?} / {:?}",
        reads(&first.total),
        writes(&first.total),
        reads(&resume.total),
        writes(&resume.total)
    );
}
