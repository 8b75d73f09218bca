//! Injected time, ids and sleep: the core never reads a clock or mints randomness itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;

/// Wall-clock time in Unix milliseconds.
pub trait Clock: Send + Sync + 'static {
    /// Now, in Unix milliseconds.
    fn now_ms(&self) -> u64;
}

/// Mints unique, opaque ids.
pub trait IdGen: Send + Sync + 'static {
    /// A fresh id beginning with `prefix` (e.g. `msg`, `tc`, `int`).
    fn next_id(&self, prefix: &str) -> String;
}

/// Waits without blocking the executor.
pub trait Sleep: Send + Sync + 'static {
    /// Resolves after `millis` milliseconds.
    fn sleep(&self, millis: u64) -> BoxFuture<'static, ()>;
}

/// Runs a future to completion in the background, independent of whoever asked.
pub trait Spawn: Send + Sync + 'static {
    /// Starts `future`; it must run to completion even if nobody waits for it.
    fn spawn(&self, future: BoxFuture<'static, ()>);
}

/// The injected services, cheap to clone.
#[derive(Clone)]
pub struct Runtime {
    /// Time source.
    pub clock: Arc<dyn Clock>,
    /// Id source.
    pub ids: Arc<dyn IdGen>,
    /// Timer.
    pub sleep: Arc<dyn Sleep>,
    /// Background executor. With one, a run outlives its response: a client that
    /// disconnects mid-run does not stop it (it finishes, commits and releases the
    /// thread). Without one, the run is driven by its response stream.
    pub spawner: Option<Arc<dyn Spawn>>,
    /// Where background runs (`Prefer: respond-async`) are driven with nobody connected,
    /// once answered `202`: the dev server's tasks; a Worker's `waitUntil` (about 30 s past
    /// the response, so its runs are handed over to the next sweep before that). Unset on
    /// Lambda (the environment freezes once the response ends): there a background run is
    /// only claimed and the next sweep runs it ([`crate::Engine::start_detached`]).
    pub background: Option<Arc<dyn Spawn>>,
}

impl Runtime {
    /// Bundles the services.
    pub fn new(clock: impl Clock, ids: impl IdGen, sleep: impl Sleep) -> Self {
        Self {
            clock: Arc::new(clock),
            ids: Arc::new(ids),
            sleep: Arc::new(sleep),
            spawner: None,
            background: None,
        }
    }
    /// Runs each run in the background on `spawner` (see [`Runtime::spawner`]).
    pub fn with_spawner(mut self, spawner: impl Spawn) -> Self {
        self.spawner = Some(Arc::new(spawner));
        self
    }
    /// Offers background runs, driven on `background` (see [`Runtime::background`]).
    pub fn with_background(mut self, background: impl Spawn) -> Self {
        self.background = Some(Arc::new(background));
        self
    }
    /// Now, in Unix milliseconds.
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").finish_non_exhaustive()
    }
}

/// A clock that only moves when told to; for tests.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// Starts at `millis`.
    pub fn new(millis: u64) -> Self {
        Self(AtomicU64::new(millis))
    }
    /// Moves forward by `millis`.
    pub fn advance(&self, millis: u64) {
        self.0.fetch_add(millis, Ordering::SeqCst);
    }
    /// Jumps to `millis`.
    pub fn set(&self, millis: u64) {
        self.0.store(millis, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

impl<C: Clock> Clock for Arc<C> {
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
}

/// Sequential ids `prefix-1`, `prefix-2`, … with an instance tag; deterministic, for tests.
#[derive(Debug, Default)]
pub struct SequentialIds {
    tag: String,
    next: AtomicU64,
}

impl SequentialIds {
    /// Ids look like `{prefix}-{tag}{n}`.
    pub fn new(tag: impl Into<String>) -> Self {
        Self {
            tag: tag.into(),
            next: AtomicU64::new(1),
        }
    }
}

impl IdGen for SequentialIds {
    fn next_id(&self, prefix: &str) -> String {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        format!("{prefix}-{}{n}", self.tag)
    }
}

/// A sleep that never completes; for hosts without timers and for tests without deadlines.
#[derive(Debug, Default, Clone, Copy)]
pub struct NeverSleep;

impl Sleep for NeverSleep {
    fn sleep(&self, _millis: u64) -> BoxFuture<'static, ()> {
        Box::pin(futures::future::pending())
    }
}
