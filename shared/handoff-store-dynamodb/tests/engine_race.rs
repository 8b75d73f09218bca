//! Exactly once through the engine on DynamoDB (moto_server): 200 clients send identical
//! resumes of one interrupted thread, released together on a multi-threaded runtime and spread
//! over several engine instances, each with its own `DynamoStore` and SDK client (its own
//! connections). A client refused with 409 `THREAD_BUSY` waits a little and resends (a new
//! runId), as a client honouring `Retry-After` would, until it gets the answer. The refund
//! executes once: every execution is recorded outside the engine and the store.
//!
//! moto processes the requests one at a time (the clients of `support::Moto` share its lock):
//! moto is not linearizable under parallel requests (see `support`), DynamoDB is, per request.
//! The engines, their tasks and connections still race; they interleave at request granularity.
//! Sent to moto in parallel, about one run in twenty fails on moto's own races: two claims
//! conditioned on one thread version both succeed (the loser's stream ends `LEASE_LOST`), or a
//! refused claim's run record reappears (`THREAD_CHANGED` for that runId). The refund still
//! executed once in every such run.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use handoff_core::runtime::{ManualClock, NeverSleep, SequentialIds};
use handoff_core::store::counting::CountingStore;
use handoff_core::{Engine, Runtime, Store};
use handoff_store_conformance::race::{self, Outcome, RaceAgent, Tally};
use handoff_store_dynamodb::DynamoStore;
use support::{moto, table_name};

const NOW: u64 = 1_700_000_000_000;
const THREAD: &str = "thread-race";
/// Clients, each resuming until it gets the answer.
const CLIENTS: usize = 200;
const INSTANCES: usize = 4;
/// Resends after a 409 before a client gives up.
const MAX_SENDS: usize = 400;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_clients_racing_identical_resumes_refund_once() {
    let table = table_name("race");
    DynamoStore::create_table(&moto().client(), &table)
        .await
        .unwrap_or_else(|e| panic!("create table {table}: {e}"));

    let executed: Arc<Mutex<Vec<String>>> = Arc::default();
    let clock = Arc::new(ManualClock::new(NOW));
    let instances: Vec<(Engine, Arc<CountingStore<DynamoStore>>)> = (0..INSTANCES)
        .map(|i| {
            let client = moto().client();
            let store = Arc::new(CountingStore::new(DynamoStore::new(client, &table)));
            let sink = executed.clone();
            let agent = RaceAgent::new(format!("i{i}-"), move |key| {
                lock(&sink).push(key.to_owned());
            });
            let runtime = Runtime::new(
                clock.clone(),
                SequentialIds::new(format!("i{i}-")),
                NeverSleep,
            );
            let shared: Arc<dyn Store> = store.clone();
            (Engine::new(agent, shared, runtime), store)
        })
        .collect();
    let interrupt = race::interrupt_thread(&instances[0].0, THREAD).await;

    let barrier = Arc::new(tokio::sync::Barrier::new(CLIENTS));
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|n| {
            let engine = instances[n % INSTANCES].0.clone();
            let barrier = barrier.clone();
            let interrupt_id = interrupt.id.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                let mut outcomes = Vec::new();
                for send in 0..MAX_SENDS {
                    let input = race::approve(THREAD, &format!("run-{n}-{send}"), &interrupt_id);
                    let outcome = race::attempt(&engine, input).await;
                    let busy = outcome == Outcome::Busy;
                    outcomes.push(outcome);
                    if !busy {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                outcomes
            })
        })
        .collect();
    let (mut tally, mut sends, mut first_sends) = (Tally::default(), 0, Tally::default());
    for task in tasks {
        let outcomes = task.await.expect("a client task panicked");
        sends += outcomes.len() as u64;
        first_sends.add(outcomes[0].clone());
        for outcome in outcomes {
            tally.add(outcome);
        }
    }
    let lost: u64 = instances
        .iter()
        .map(|(_, store)| store.cost().conflicts)
        .sum();
    eprintln!(
        "{CLIENTS} clients over {INSTANCES} instances, first sends: {first_sends}; \
         all sends: {tally}; {lost} commits lost a race; refunds executed: {}",
        lock(&executed).len()
    );
    race::assert_exactly_once(&instances[1].0, THREAD, &interrupt, &tally, sends, || {
        lock(&executed).clone()
    })
    .await;
    assert_eq!(
        tally.answered, CLIENTS as u64,
        "every client got the answer"
    );
    assert!(
        lost > 0,
        "no commit lost a race: the resumes did not overlap"
    );
}
