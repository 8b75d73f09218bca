//! Clock, ids, timers and background work from the Workers runtime (no tokio).

use std::time::Duration;

use futures::future::BoxFuture;
use handoff_core::{Clock, IdGen, Runtime, Sleep, Spawn};
use worker::send::{SendFuture, SendWrapper};
use worker::{Context, Date, Delay};

/// `Date.now()`; inside a request it advances with I/O, as Workers allow.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkerClock;

impl Clock for WorkerClock {
    fn now_ms(&self) -> u64 {
        Date::now().as_millis()
    }
}

/// 128-bit ids from `crypto.getRandomValues`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomIds;

impl IdGen for RandomIds {
    fn next_id(&self, prefix: &str) -> String {
        format!("{prefix}-{}", random_hex::<16>())
    }
}

/// `N` random bytes from `crypto.getRandomValues` as lowercase hex, never all zeros (run
/// ids, trace and span ids).
pub(crate) fn random_hex<const N: usize>() -> String {
    let mut bytes = [0u8; N];
    if getrandom::fill(&mut bytes).is_err() || bytes.iter().all(|b| *b == 0) {
        // getRandomValues does not fail in workerd; if it ever did, the clock keeps ids
        // unique per isolate rather than aborting a run.
        let now = Date::now().as_millis().to_be_bytes();
        let n = N.min(now.len());
        bytes[N - n..].copy_from_slice(&now[now.len() - n..]);
        bytes[0] |= 1;
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Workers timers (`setTimeout` under `worker::Delay`).
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkerSleep;

impl Sleep for WorkerSleep {
    fn sleep(&self, millis: u64) -> BoxFuture<'static, ()> {
        Box::pin(SendFuture::new(Delay::from(Duration::from_millis(millis))))
    }
}

/// `ctx.waitUntil`: a run keeps going after its client disconnects, until it
/// commits and releases the thread.
pub struct WaitUntil(SendWrapper<Context>);

impl Spawn for WaitUntil {
    fn spawn(&self, future: BoxFuture<'static, ()>) {
        self.0.wait_until(future);
    }
}

/// The runtime for one request: its `waitUntil` keeps a run going after the response, and
/// drives background runs (for about 30 s past the response; the host hands them over
/// before that, see `handoff_http::HttpConfig::background_budget_ms`).
pub fn runtime(ctx: Context) -> Runtime {
    let mut runtime = Runtime::new(WorkerClock, RandomIds, WorkerSleep)
        .with_spawner(WaitUntil(SendWrapper::new(ctx)));
    runtime.background = runtime.spawner.clone();
    runtime
}
