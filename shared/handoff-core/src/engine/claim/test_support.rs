//! An engine over a counting in-memory store, for the claim stages' unit tests.

use std::sync::Arc;

use agui_protocol::{Message, RunAgentInput};
use async_trait::async_trait;

use super::super::{Engine, Inner, RunOptions};
use super::request::Request;
use crate::agent::{Agent, Finish};
use crate::context::RunContext;
use crate::error::AgentError;
use crate::records::ThreadRecord;
use crate::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use crate::store::counting::{CountingStore, StoreCost};
use crate::store::memory::MemoryStore;
use crate::store::{Condition, Store};

struct Quiet;

#[async_trait]
impl Agent for Quiet {
    async fn run(&self, _ctx: &mut RunContext) -> Result<Finish, AgentError> {
        Ok(Finish::done())
    }
}

pub(crate) struct Fixture {
    pub(crate) inner: Arc<Inner>,
    pub(crate) options: RunOptions,
    store: Arc<CountingStore<MemoryStore>>,
}

/// A request on thread `thread` with one user message.
pub(crate) fn input(thread: &str, run: &str) -> RunAgentInput {
    RunAgentInput::new(thread, run, vec![Message::user("u1", "hello")])
}

impl Fixture {
    pub(crate) fn new() -> Self {
        let store = Arc::new(CountingStore::new(MemoryStore::new()));
        let runtime = Runtime::new(
            ManualClock::new(1_000_000),
            SequentialIds::new("t"),
            NeverSleep,
        );
        let engine = Engine::new(Quiet, store.clone(), runtime);
        Fixture {
            inner: engine.inner,
            options: RunOptions::default(),
            store,
        }
    }

    pub(crate) fn now(&self) -> u64 {
        self.inner.runtime.now_ms()
    }

    pub(crate) fn request<'a>(&'a self, input: &'a RunAgentInput) -> Request<'a> {
        Request::new(&self.inner, input, &self.options, false).expect("valid ids")
    }

    /// Stores `thread` as thread `t`'s head; the calls it took are not counted.
    pub(crate) async fn put_thread(&self, thread: &ThreadRecord) {
        let partition = self.options.principal.partition("t").expect("a partition");
        let write = thread.write(&partition, Condition::Absent, None);
        self.store
            .commit(&partition, vec![write], self.now())
            .await
            .expect("an empty store takes it");
        self.store.take();
    }

    /// The store calls since the last look.
    pub(crate) fn cost(&self) -> StoreCost {
        self.store.take()
    }
}
