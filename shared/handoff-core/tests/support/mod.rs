//! Shared fixtures for the engine's integration tests: a manual-clock runtime, a
//! controllable sleep, a fault-injecting store, gates, test agents, stream
//! helpers and the stream-validity assertion every test applies.
//!
//! Each test binary uses a subset of this module.
#![allow(dead_code, unreachable_pub)]

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use agui_protocol::{Event, RunAgentInput};
use futures::StreamExt;
use futures::future::BoxFuture;
use handoff_core::Principal;
use handoff_core::codes::ErrorCode;
use handoff_core::records::RunRecord;
use handoff_core::runtime::{ManualClock, SequentialIds};
use handoff_core::{
    Agent, CoreError, Engine, EngineConfig, Item, RunOptions, RunStream, Runtime, Sleep, Store,
    ThreadView,
};

mod agents;
mod events;
mod store;

// Each test binary uses part of them.
#[allow(unused_imports)]
pub use agents::*;
#[allow(unused_imports)]
pub use events::*;
#[allow(unused_imports)]
pub use store::*;

/// Where every test clock starts (2026-11-18, well inside the safe-integer range).
pub const T0: u64 = 1_795_000_000_000;

/// Locks a mutex, ignoring poisoning (a panicking agent must not break the fixtures).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

// ---------------------------------------------------------------------------
// Gate: a reusable "wait until the test says so".
// ---------------------------------------------------------------------------

/// A one-way latch. `wait()` resolves once `open()` has been called. The open
/// flag is re-checked on every poll, so it also works under `now_or_never`.
#[derive(Clone, Default)]
pub struct Gate {
    inner: Arc<GateInner>,
}

#[derive(Default)]
struct GateInner {
    open: AtomicBool,
    wakers: Mutex<Vec<Waker>>,
}

impl Gate {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn open(&self) {
        self.inner.open.store(true, Ordering::SeqCst);
        for waker in lock(&self.inner.wakers).drain(..) {
            waker.wake();
        }
    }
    pub fn is_open(&self) -> bool {
        self.inner.open.load(Ordering::SeqCst)
    }
    pub fn wait(&self) -> impl Future<Output = ()> + Send + 'static {
        let inner = self.inner.clone();
        futures::future::poll_fn(move |cx: &mut Context<'_>| {
            if inner.open.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            lock(&inner.wakers).push(cx.waker().clone());
            // Re-check after registering, so an `open()` in between is not missed.
            if inner.open.load(Ordering::SeqCst) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }
}

// ---------------------------------------------------------------------------
// ControlSleep: the host timer, driven by the test.
// ---------------------------------------------------------------------------

/// A [`Sleep`] that records every requested duration and completes either
/// immediately (durations up to `immediate_up_to`) or when the test calls
/// [`ControlSleep::fire`] (every sleep requested before that call completes).
#[derive(Clone, Default)]
pub struct ControlSleep {
    inner: Arc<SleepInner>,
}

#[derive(Default)]
struct SleepInner {
    requested: Mutex<Vec<u64>>,
    fired_upto: AtomicUsize,
    immediate_up_to: Mutex<Option<u64>>,
    wakers: Mutex<Vec<Waker>>,
}

impl ControlSleep {
    pub fn new() -> Self {
        Self::default()
    }
    /// Sleeps of at most `millis` complete at once.
    pub fn complete_immediately_up_to(&self, millis: u64) {
        *lock(&self.inner.immediate_up_to) = Some(millis);
    }
    /// Completes every sleep requested so far.
    pub fn fire(&self) {
        let n = lock(&self.inner.requested).len();
        self.inner.fired_upto.store(n, Ordering::SeqCst);
        for waker in lock(&self.inner.wakers).drain(..) {
            waker.wake();
        }
    }
    /// The durations asked for, in order.
    pub fn requested(&self) -> Vec<u64> {
        lock(&self.inner.requested).clone()
    }
}

impl Sleep for ControlSleep {
    fn sleep(&self, millis: u64) -> BoxFuture<'static, ()> {
        let index = {
            let mut requested = lock(&self.inner.requested);
            requested.push(millis);
            requested.len() - 1
        };
        if lock(&self.inner.immediate_up_to).is_some_and(|limit| millis <= limit) {
            return Box::pin(futures::future::ready(()));
        }
        let inner = self.inner.clone();
        Box::pin(futures::future::poll_fn(move |cx: &mut Context<'_>| {
            if inner.fired_upto.load(Ordering::SeqCst) > index {
                return Poll::Ready(());
            }
            lock(&inner.wakers).push(cx.waker().clone());
            if inner.fired_upto.load(Ordering::SeqCst) > index {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }))
    }
}

// ---------------------------------------------------------------------------
// Harness: engine + clock + sleep + store.
// ---------------------------------------------------------------------------

/// One engine over a [`FaultStore`], with a manual clock and a controllable sleep.
pub struct Harness {
    pub clock: Arc<ManualClock>,
    pub sleep: ControlSleep,
    pub store: Arc<FaultStore>,
    pub engine: Engine,
}

impl Harness {
    pub fn new(agent: impl Agent) -> Self {
        Self::with_config(agent, EngineConfig::default())
    }

    pub fn with_config(agent: impl Agent, config: EngineConfig) -> Self {
        let clock = Arc::new(ManualClock::new(T0));
        let sleep = ControlSleep::new();
        let store = Arc::new(FaultStore::new());
        let runtime = Runtime::new(clock.clone(), SequentialIds::new("h"), sleep.clone());
        let engine = Engine::with_config(Arc::new(agent), store.clone(), runtime, config);
        Harness {
            clock,
            sleep,
            store,
            engine,
        }
    }

    /// A second engine (another "instance") over the same store, clock and sleep.
    pub fn instance(&self, agent: impl Agent, tag: &str) -> Engine {
        let runtime = Runtime::new(
            self.clock.clone(),
            SequentialIds::new(tag),
            self.sleep.clone(),
        );
        Engine::with_config(
            Arc::new(agent),
            self.store.clone(),
            runtime,
            self.engine.config().clone(),
        )
    }

    pub fn now(&self) -> u64 {
        self.engine.runtime().now_ms()
    }
    pub fn advance(&self, millis: u64) {
        self.clock.advance(millis);
    }

    /// Starts a run that must be accepted; returns its stream.
    pub async fn stream(&self, input: &RunAgentInput) -> RunStream {
        self.stream_with(input, RunOptions::default()).await
    }
    pub async fn stream_with(&self, input: &RunAgentInput, options: RunOptions) -> RunStream {
        match self.engine.start(input.clone(), options).await {
            Ok(stream) => stream,
            Err(e) => panic!("run {} was rejected: {} ({e})", input.run_id, e.code().name),
        }
    }

    /// Runs to completion and checks the stream with the strict verifier.
    pub async fn run(&self, input: &RunAgentInput) -> Vec<Event> {
        self.run_with(input, RunOptions::default()).await
    }
    pub async fn run_with(&self, input: &RunAgentInput, options: RunOptions) -> Vec<Event> {
        let events = self
            .stream_with(input, options)
            .await
            .collect::<Vec<_>>()
            .await;
        assert_valid_stream(&events, input);
        events
    }

    /// A start that must be refused before any stream.
    pub async fn reject(&self, input: &RunAgentInput) -> CoreError {
        match self
            .engine
            .start(input.clone(), RunOptions::default())
            .await
        {
            // Not drained: the accepted run might wait on a gate forever.
            Ok(_stream) => panic!(
                "run {} was expected to be rejected before any stream, but was accepted",
                input.run_id
            ),
            Err(e) => e,
        }
    }

    pub async fn thread(&self, thread_id: &str) -> ThreadView {
        self.engine
            .thread(&Principal::anonymous(), thread_id)
            .await
            .expect("thread read")
            .expect("thread exists")
    }

    pub async fn run_record(
        &self,
        thread_id: &str,
        run_id: &str,
    ) -> Option<(RunRecord, Vec<Event>)> {
        self.engine
            .run_events(&Principal::anonymous(), thread_id, run_id)
            .await
            .expect("run record read")
    }

    /// Reads one raw item of a thread partition.
    pub async fn item(&self, thread_id: &str, key: &str) -> Option<Item> {
        let mut items = self
            .store
            .get(thread_id, &[key], self.now())
            .await
            .expect("store read");
        items.pop().flatten()
    }
}

/// Polls `stream` without blocking until it is pending with nothing left to do
/// (no wake-up arrived during the poll) or ended; returns what it yielded and
/// whether it ended.
pub fn drain_ready<S: futures::Stream + Unpin>(stream: &mut S) -> (Vec<S::Item>, bool) {
    struct Flag(AtomicBool);
    impl futures::task::ArcWake for Flag {
        fn wake_by_ref(arc_self: &Arc<Self>) {
            arc_self.0.store(true, Ordering::SeqCst);
        }
    }
    let flag = Arc::new(Flag(AtomicBool::new(false)));
    let waker = futures::task::waker(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut out = Vec::new();
    loop {
        flag.0.store(false, Ordering::SeqCst);
        match stream.poll_next_unpin(&mut cx) {
            Poll::Ready(Some(event)) => out.push(event),
            Poll::Ready(None) => return (out, true),
            Poll::Pending if flag.0.load(Ordering::SeqCst) => {}
            Poll::Pending => return (out, false),
        }
    }
}
