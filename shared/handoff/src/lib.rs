//! Handoff: write an agent once, serve it over AG-UI 1.0 (a POST of
//! `RunAgentInput` answered by an SSE stream) from a local server, AWS Lambda or
//! Cloudflare Workers, with no sticky sessions.
//!
//! # Hosts
//!
//! Each host is a feature with an entry point that reads its settings from the
//! environment, and a builder for everything explicit (store, runtime, extra
//! axum routes, extra `GET /threads/{id}` fields):
//!
//! | feature | entry point | builder |
//! |---|---|---|
//! | `server` (default) | `handoff::server::serve(MyAgent).await` | [`server::Server`] |
//! | `lambda` | `handoff::lambda::run(MyAgent).await` | [`lambda::Lambda`] |
//! | `worker` | `handoff::worker::serve(req, env, ctx, MyAgent).await` in a `#[event(fetch)]` (with `default-features = false`) | [`worker::Worker`] |
//! | `a2a` | delegate to A2A agents and receive their pushes | [`a2a`] |
//! | `json-schema` (default) | answers checked against any `responseSchema` by the `jsonschema` crate on `server` and `lambda`; without it an agent checks its own ([`Agent::answer_validator`] with [`schema::TypedAnswers`], as the starter does: about a quarter less Lambda bootstrap) or interrupts with a schema end their run with `SCHEMA_VALIDATION_UNAVAILABLE` | |
//! | `console` (default) | the web console at `/` on `server` and `lambda` (`HANDOFF_CONSOLE=off` turns it off; Workers serve it as static assets, see `functions/agent-worker/wrangler.toml`) | |
//!
//! # An agent that asks before it acts
//!
//! An interrupt is a *finished* run: the agent returns [`Finish::interrupt`], the
//! engine commits the pending interrupt, state and messages, and only then ends
//! the stream with `RUN_FINISHED{outcome:{type:"interrupt"}}`. The answer comes
//! as a **second run** carrying `resume[]`, on any instance; the agent sees it in
//! [`RunContext::decisions`]. Side effects go through [`RunContext::effect`], which
//! runs them at most once per key and thread: a replayed or duplicated resume
//! gets the recorded result instead of a second refund.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//!
//! use futures::StreamExt;
//! use handoff::runtime::{ManualClock, NeverSleep, SequentialIds};
//! use handoff::store::memory::MemoryStore;
//! use handoff::{
//!     Agent, AgentError, Engine, Finish, Interrupt, Principal, RunContext, RunOptions, Runtime,
//! };
//! use serde_json::json;
//!
//! struct Refunds {
//!     executed: Arc<AtomicUsize>,
//! }
//!
//! #[handoff::async_trait]
//! impl Agent for Refunds {
//!     async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
//!         // Run 2: the answer arrives as a resume.
//!         if let Some(answer) = ctx.decisions().first().cloned() {
//!             if !answer.approved() {
//!                 ctx.say("Refund cancelled.");
//!                 return Ok(Finish::done());
//!             }
//!             let executed = self.executed.clone();
//!             let receipt: String = ctx
//!                 .effect("refund", |idempotency_key| async move {
//!                     // Call the payment API here, passing it `idempotency_key`.
//!                     executed.fetch_add(1, Ordering::SeqCst);
//!                     Ok::<_, String>(format!("refunded ({idempotency_key})"))
//!                 })
//!                 .await?;
//!             ctx.say(&receipt);
//!             return Ok(Finish::done());
//!         }
//!         // Run 1: ask, and end the run. Nothing waits in memory for the answer.
//!         ctx.say("I can refund 12.00 USD.");
//!         Ok(Finish::interrupt(
//!             Interrupt::new(ctx.new_id("int"), "approval")
//!                 .with_message("Refund 12.00 USD?")
//!                 .with_response_schema(json!({
//!                     "type": "object",
//!                     "properties": {"approved": {"type": "boolean"}},
//!                     "required": ["approved"]
//!                 })),
//!         ))
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let executed = Arc::new(AtomicUsize::new(0));
//! let agent = Refunds { executed: executed.clone() };
//! let runtime = Runtime::new(ManualClock::new(0), SequentialIds::new("doc"), NeverSleep);
//! let engine = Engine::new(agent, Arc::new(MemoryStore::new()), runtime);
//!
//! futures::executor::block_on(async {
//!     // Run 1 ends with the approval interrupt, which is now durable.
//!     let ask = serde_json::from_value(json!({
//!         "threadId": "t1", "runId": "r1",
//!         "messages": [{"id": "m1", "role": "user", "content": "Refund my order"}]
//!     }))?;
//!     let _events: Vec<_> = engine.start(ask, RunOptions::default()).await?.collect().await;
//!     let thread = engine.thread(&Principal::anonymous(), "t1").await?.expect("the thread exists");
//!     let interrupt_id = thread.pending_interrupts[0].id.to_string();
//!
//!     // Run 2 carries the answer (a client would send it from any tab, to any instance).
//!     let approve = json!({
//!         "threadId": "t1", "runId": "r2", "messages": [],
//!         "resume": [{"interruptId": interrupt_id, "status": "resolved",
//!                     "payload": {"approved": true}}]
//!     });
//!     for _ in 0..2 {
//!         // The second, identical request replays the first: no second refund.
//!         let input = serde_json::from_value(approve.clone())?;
//!         let _events: Vec<_> = engine.start(input, RunOptions::default()).await?.collect().await;
//!     }
//!     assert_eq!(executed.load(Ordering::SeqCst), 1);
//!
//!     let thread = engine.thread(&Principal::anonymous(), "t1").await?.expect("the thread exists");
//!     assert!(thread.pending_interrupts.is_empty());
//!     let last = thread.messages.last().and_then(|m| m.text());
//!     assert_eq!(last.as_deref(), Some("refunded (t1/refund)"));
//!     Ok::<(), Box<dyn std::error::Error>>(())
//! })
//! # }
//! ```
//!
//! Served over HTTP, the same two runs are two POSTs to `/agent`; between them,
//! `GET /threads/t1` shows the pending interrupt (e.g. after a page reload).

pub use agui_protocol as protocol;
pub use agui_protocol::{
    Interrupt, Message, ResumeEntry, ResumeStatus, RunAgentInput, RunFinishedOutcome,
};
pub use async_trait::async_trait;
pub use handoff_core::{
    Agent, AgentError, ApprovalPolicy, CoreError, Decision, DoubleText, EditRule, EffectFailure,
    Engine, EngineConfig, Finish, NotExecuted, Principal, Readiness, RunContext, RunOptions,
    Runtime, Store, StoreError, ThreadView, WithApproval,
};
pub use handoff_core::{access, approval, codes, principal, runtime, schema, store};
/// The HTTP surface every host serves (routes, settings, the `GET /threads` hook).
pub mod http {
    pub use handoff_http::{
        ApiError, Host, HostDeadline, HttpConfig, Routes, ThreadExtras, router,
        router_with_thread_extras,
    };
}
/// Who is calling: the [`Authenticator`](auth::Authenticator) hook and the built-ins
/// `HANDOFF_AUTH` chooses from (`none`, `api-key`, `jwt`, `iam`, `cf-access`).
pub mod auth {
    pub use handoff_auth::*;
    pub use handoff_http::{CorsOrigins, NoAuth};
}

#[cfg(any(feature = "server", feature = "lambda", feature = "worker"))]
mod options;

#[cfg(feature = "a2a")]
pub mod a2a;
/// Model-backed agents ([`handoff_llm`]): providers, the tool loop ([`llm::LlmAgent`]) and,
/// the model client to hand it: `UreqModels` on native hosts, `FetchModels` on Workers.
#[cfg(feature = "llm")]
pub mod llm {
    #[cfg(feature = "worker")]
    pub use crate::worker::FetchModels;
    pub use handoff_llm::*;
    #[cfg(any(feature = "server", feature = "lambda"))]
    pub use handoff_native::llm::UreqModels;
}
#[cfg(feature = "lambda")]
pub mod lambda;
#[cfg(feature = "server")]
pub mod server;
#[cfg(any(feature = "server", feature = "lambda"))]
mod telemetry;
#[cfg(feature = "worker")]
pub mod worker;
