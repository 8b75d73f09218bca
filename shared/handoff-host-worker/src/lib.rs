//! What a Cloudflare Worker gives Handoff, in the same parts as the native host
//! (`handoff-host-native`): [`runtime`] (clock, ids, timers and `waitUntil`), [`store`] (the
//! Durable Object store from the bindings), [`outbound`] (`fetch`, the one outbound HTTP
//! client), [`a2a`] (tokens for push subscriptions), [`telemetry`] (log and span lines on
//! the console) and [`schema`] (answers checked by the platform's JSON Schema validator).
//!
//! The `handoff` crate's `worker` feature serves an agent with these parts; use them directly
//! to assemble a Worker of your own:
//!
//! ```ignore
//! let store = handoff_host_worker::store::from_env(&env)?;
//! let runtime = handoff_host_worker::runtime::runtime(ctx);
//! handoff_host_worker::telemetry::init(&|key| handoff_host_worker::var(&env, key));
//! ```
//!
//! Everything here needs the Workers runtime (`wasm32-unknown-unknown` under workerd).

pub mod a2a;
pub mod outbound;
pub mod runtime;
pub mod schema;
pub mod store;
pub mod telemetry;

pub use a2a::RandomTokens;
pub use outbound::FetchOutbound;
pub use runtime::{RandomIds, WaitUntil, WorkerClock, WorkerSleep};
pub use schema::WorkerSchema;

/// A variable (`[vars]` or a secret) of the Worker.
pub fn var(env: &worker::Env, key: &str) -> Option<String> {
    env.var(key).ok().map(|v| v.to_string())
}
