//! A schedule's tick is a run like any other: its end is told to the webhooks, from the
//! outbox, with the tick's thread and run. The receiver is a recording `Sender`; the
//! notifier, the outbox and the scheduler are the real ones.
#![cfg(all(feature = "schedules", feature = "webhooks"))]

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use handoff_core::outbox::{Outbox, OutboxItem, SendOutcome, Sender};
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::schedule::{self, Cadence, Schedule};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Agent, AgentError, Engine, Finish, Principal, RunContext, Store};
use handoff_http::schedules::Scheduler;
use handoff_http::webhooks::{WEBHOOK_KIND, WebhookNotifier};
use serde_json::json;

const T0: u64 = 1_764_421_200_000;

struct Reporter;

#[async_trait]
impl Agent for Reporter {
    fn name(&self) -> &str {
        "reporter"
    }
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        ctx.say("report ready");
        Ok(Finish::done())
    }
}

#[derive(Default)]
struct Recorded(Mutex<Vec<OutboxItem>>);

struct Recorder(Arc<Recorded>);

#[async_trait]
impl Sender for Recorder {
    async fn send(&self, _partition: &str, item: &OutboxItem) -> SendOutcome {
        self.0.0.lock().unwrap().push(item.clone());
        SendOutcome::Delivered
    }
}

#[tokio::test]
async fn a_ticks_run_end_is_told_to_the_webhooks() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let clock = Arc::new(ManualClock::new(T0));
    let runtime = Runtime::new(clock.clone(), SequentialIds::new("w"), NeverSleep);
    let recorded = Arc::new(Recorded::default());
    let outbox = Outbox::new(store.clone(), runtime.clone())
        .sender(WEBHOOK_KIND, Arc::new(Recorder(recorded.clone())));
    let engine = Engine::new(Reporter, store.clone(), runtime)
        .with_notifier(Arc::new(WebhookNotifier::new(None)))
        .with_outbox(outbox);
    let cadence = Cadence::EverySeconds(30);
    let owner = Principal::new("acme", "alice");
    let created = Schedule {
        id: "nightly".to_owned(),
        owner,
        agent_id: "reporter".to_owned(),
        next_due_ms: cadence.first_due(T0).unwrap(),
        cadence,
        messages: vec![json!({ "role": "user", "content": "report" })],
        thread_id: None,
        created_ms: T0,
        ticks: 0,
        last_run: None,
    };
    schedule::create(store.as_ref(), &created, T0)
        .await
        .unwrap();
    clock.advance(30_000);
    let report = Scheduler::new(engine).tick().await;
    assert_eq!((report.started, report.failed), (1, 0), "{report:?}");

    let stored = schedule::get(store.as_ref(), "acme", "nightly", T0 + 30_000)
        .await
        .unwrap()
        .unwrap();
    let run = stored.last_run.unwrap();
    let items = recorded.0.lock().unwrap().clone();
    assert_eq!(items.len(), 1, "{items:?}");
    let event = &items[0].body;
    assert_eq!(event["type"], "run.finished", "{event}");
    assert_eq!(event["data"]["threadId"], run.thread_id);
    assert_eq!(event["data"]["runId"], run.run_id);
    assert_eq!(event["data"]["tenant"], "acme");
}
