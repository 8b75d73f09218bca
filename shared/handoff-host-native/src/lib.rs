//! What a native process host (the dev server, Lambda) gives Handoff, in the same parts as
//! the Workers host (`handoff-host-worker`): [`runtime`] (the wall clock, random ids, tokio
//! timers and tasks, injected into the core), [`store`] (the store `HANDOFF_STORE` chooses),
//! [`outbound`] (the one outbound HTTP client, [`outbound::UreqOutbound`]: A2A, key sets,
//! models, MCP, the trace exporter), [`a2a`] (tokens for push subscriptions) and, with the
//! `otel` feature, [`telemetry`] (OTLP export).
//!
//! # Store settings
//!
//! [`store_from_env`] (through [`StoreChoice::from_lookup`]) reads:
//!
//! | variable | default | what |
//! |---|---|---|
//! | `HANDOFF_STORE` | `sqlite`: the embedded SQLite store | `memory` keeps state in the process (Lambda refuses it without `HANDOFF_ALLOW_LOCAL_STORE=true`, and refuses `sqlite`, which its builds do not link) |
//! | `HANDOFF_DATA_DIR` | `.handoff` | where the embedded store's file lives |
//! | `HANDOFF_SQLITE_SYNC` | `full` | the embedded store's durability: `full` survives a crash of the machine or a power loss; `normal`, WAL with `synchronous=NORMAL`, survives a crash of the process but may lose the last commits to a power loss, for fewer fsyncs |
//! | `HANDOFF_MEMORY_MAX_BYTES` | 16 MiB | the memory store's budget for threads, `0` = none: over it, the threads written least recently are forgotten whole, as if they had expired early, so a busy process keeps a bounded size; data stored without an expiry, an application's own records, is neither counted nor dropped; the demo's refund ledger expires 30 days after an order's last change, like the effect records that keep its refunds exactly once, so the budget counts and may drop it too |
//!
//! ```no_run
//! let runtime = handoff_host_native::runtime();
//! let store = handoff_host_native::store_from_env(|k| std::env::var(k).ok()).unwrap();
//! # let _ = (runtime, store);
//! ```

pub mod a2a;
pub mod outbound;
pub mod runtime;
pub mod store;
#[cfg(feature = "otel")]
pub mod telemetry;

/// The W3C `traceparent` of the current span for an outgoing request (model, A2A,
/// webhook), when traces are exported.
#[cfg_attr(not(feature = "otel"), allow(clippy::missing_const_for_fn))]
pub(crate) fn traceparent() -> Option<String> {
    #[cfg(feature = "otel")]
    return telemetry::traceparent();
    #[cfg(not(feature = "otel"))]
    None
}

pub use runtime::{RandomIds, SystemClock, TokioSleep, TokioSpawn, runtime};
pub use store::{StoreChoice, store_from_env};
