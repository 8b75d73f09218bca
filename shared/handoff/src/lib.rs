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
//!
//! # Reading an answer
//!
//! A resumed run sees each answer as a [`Decision`]: [`Decision::approved`] reads its
//! `approved`, [`Decision::payload_as`] the whole answer as your type (derive
//! `serde::Deserialize`; the starter derives the `responseSchema` from the same type with
//! `schemars`), [`Decision::field`] one member, [`Decision::args`] the tool call's arguments
//! (an allowed `editedArgs`, else the proposed ones) and [`Decision::is_cancelled`] whether the
//! user abandoned the question. An answer reaches the agent only after it passed the
//! interrupt's `responseSchema` and approval policy; a refused one is a 4xx and writes nothing.
//!
//! An interrupt's `reason` (`"approval"` above, `"tool_call"` in the starter) is for the client
//! and for the agent itself: AG-UI names `tool_call` (the interrupt is about a tool call, set
//! with `with_tool_call`), `input_required`, `confirmation` and namespaced `<framework>:<name>`.
//! The engine does not interpret it; who may answer and what an edit may change come from the
//! [`ApprovalPolicy`] attached with [`WithApproval::with_approval`], whatever the reason. An
//! agent that asks several kinds of question tells them apart by `decision.interrupt.reason`.
//! `examples/own_agent.rs` (the README's) puts it together on the local server.
//!
//! # Traces and logs
//!
//! Every run is traced with OpenTelemetry's GenAI names, on every host and store: `invoke_agent
//! {agent}` per run (`gen_ai.operation.name`, `gen_ai.agent.name`, `gen_ai.conversation.id` = the
//! thread, `handoff.run.id`, `handoff.run.outcome` = `success|interrupt|cancelled|error`,
//! `handoff.tenant`, `error.type` = the `RUN_ERROR` code, the run's `gen_ai.usage.*`), a client span
//! `chat {model}` per model call (`gen_ai.provider.name`, `gen_ai.request.model`,
//! `gen_ai.response.finish_reasons` as an array of strings, `gen_ai.usage.input_tokens` /
//! `output_tokens` / cache and reasoning counts as integers, as the conventions type them,
//! `gen_ai.response.time_to_first_chunk` in seconds), `execute_tool {tool}` per
//! backend tool (`gen_ai.tool.name`, `gen_ai.tool.call.id`), `handoff.effect` per `ctx.effect`
//! (`handoff.effect.key`, `handoff.effect.replayed`, `handoff.effect.outcome` =
//! `executed|replayed|not_executed|in_doubt`) and `handoff.store {operation}` per store call
//! (`db.system.name` = `dynamodb|sqlite|memory|durable_object`, `db.operation.name`,
//! `handoff.store.conditional`, `handoff.store.outcome`). A2A: a client span per `SendMessage`
//! (`a2a.method.name`, `a2a.protocol.version`, `a2a.message.id`, `a2a.task.id`, `a2a.task.state`)
//! and a server span `handoff.a2a.push` per delivered push (`a2a.task.id`, `a2a.task.state`,
//! `handoff.a2a.duplicate`, `error.type` = the refusal's code). Under them all, a server span
//! `{METHOD} {route}` (the route template) continues the caller's W3C `traceparent`; model, A2A
//! and key-set requests carry one on.
//! Message contents, tool arguments and results are recorded only when
//! `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` (`chat`: `gen_ai.system_instructions`,
//! `gen_ai.input.messages`, `gen_ai.output.messages` in the conventions' `{role, parts}` shape;
//! `execute_tool`: `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`; spans only, never log
//! lines; any value but `true`/`false` refuses to start); keys and tokens never are.
//!
//! - Dev server and Lambda (feature `otel` of the `handoff` crate, on in the demo functions): set
//!   `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL; `/v1/traces` is added) or
//!   `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and spans go out over OTLP/HTTP from the SDK's batch
//!   thread, with the standard `OTEL_SERVICE_NAME` (default `handoff`), `OTEL_EXPORTER_OTLP_HEADERS`,
//!   `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, the default, or `http/json`; anything else
//!   refuses to start), `OTEL_TRACES_SAMPLER` / `_ARG` and `OTEL_BSP_*`. Unset: no exporter, no
//!   request span, and the store spans (debug level) are never built. On Lambda each response ends
//!   only after its spans are flushed (the instance is frozen right after), and X-Ray's trace
//!   header is the parent when the caller sent no `traceparent` and it is sampled (`Sampled=1`).
//!   An unreachable collector costs the exporter thread, never a request.
//! - Workers: the Rust SDK does not run on `wasm32`, so with `OTEL_TRACES_EXPORTER=console` (or an
//!   OTLP endpoint variable set) each span is written when it closes as one JSON line on the
//!   console, `{"span", "kind", "traceId", "spanId", "parentSpanId", "startMs", "durationMs",
//!   "attributes"}` with the same names and attributes, for Workers Logs and its OTLP export.
//! - Logs: `HANDOFF_LOG=text|json` (default text on the dev server, json on Lambda and Workers),
//!   filtered by `RUST_LOG` (default `info`; `level` and `target=level` directives). JSON lines
//!   have their fields at the top level on every host (native lines add the current span's under
//!   `span`, Workers' lines the `traceId`). Two lines per run request, joined by `request_id`:
//!   - `request` (target `handoff::request`), one per request once its response has been sent
//!     whole, a run's stream included: `request_id`, `method`, `route` (the template, else the
//!     path), `status`, `code` (a refusal's), `tenant`, `thread_id` and `run_id` (of the run it
//!     started), `trace_id`, `store_calls` (that run's), `duration_ms`, `aborted` (the client left
//!     first). The request id is the host's (Lambda's request id, Cloudflare's `cf-ray`), else a
//!     well-formed `X-Request-Id` the caller sent (up to 128 of `[A-Za-z0-9._:-]`), else a new
//!     one; responses echo it as `X-Request-Id`. The trace id is the exported request span's,
//!     else the caller's `traceparent`'s.
//!   - `run ended`, one per run: `thread_id`, `run_id`, `tenant`, `outcome`, `code`,
//!     `duration_ms`, `store_calls` (every store call the run made: claim, effects, finish),
//!     `request_id`, `trace_id`.

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
#[cfg(any(feature = "server", feature = "lambda", feature = "worker"))]
mod sweep;

#[cfg(feature = "a2a")]
pub mod a2a;
/// Model-backed agents ([`handoff_llm`]): providers and the tool loop ([`llm::LlmAgent`]).
/// Hand it the host's [`outbound`] client: `UreqOutbound::operator()` or
/// `FetchOutbound::operator()` for the model, and for MCP tools (`handoff_llm::mcp`) the
/// guarded `UreqOutbound::guarded(..)` or `FetchOutbound::guarded(..)`.
#[cfg(feature = "llm")]
pub mod llm {
    pub use handoff_llm::*;
}
/// The one outbound HTTP trait ([`handoff_core::outbound`]) every outbound call goes
/// through (A2A, key sets, models, MCP, the trace exporter), and each host's client:
/// `UreqOutbound` on native hosts, `FetchOutbound` on Workers.
pub mod outbound {
    #[cfg(feature = "worker")]
    pub use crate::worker::FetchOutbound;
    pub use handoff_core::outbound::*;
    #[cfg(any(feature = "server", feature = "lambda"))]
    pub use handoff_host_native::outbound::{NetPolicy, UreqOutbound};
}
#[cfg(feature = "lambda")]
pub mod lambda;
#[cfg(feature = "server")]
pub mod server;
#[cfg(any(feature = "server", feature = "lambda"))]
mod telemetry;
#[cfg(feature = "worker")]
pub mod worker;
