//! The HTTP surface every Handoff host serves, as one axum [`Router`].
//!
//! | route | what |
//! |---|---|
//! | `POST /agent` | AG-UI run over SSE; A2UI with `X-A2UI: true` or `?a2ui=true` |
//! | `GET /threads/{threadId}` | pending interrupts, state, messages, last run (rehydrate after a reload) |
//! | `GET /threads/{threadId}/runs/{runId}/events` | a finished run replayed as SSE |
//! | `POST /api/v1/chat/stream`, `POST /api/v1/chat/resume` | Superagent-compatible chat (legacy framing unless A2UI is asked for) |
//! | `GET /healthz` | liveness |
//!
//! **Extension point**: [`router_with_thread_extras`] takes a [`ThreadExtras`]
//! hook whose fields are added to the `GET /threads/{threadId}` body (e.g. the
//! thread's A2A task snapshots as `a2aTasks`). Core fields always win on a
//! name clash; a hook failure is a 500 like any store failure.
//!
//! Bad input is answered before the stream with a JSON body `{"code","message"}`:
//! 400 (malformed JSON, missing `threadId`/`runId`/`messages`), 413 (over
//! [`HttpConfig::body_limit`]), 415 (not JSON), 409 (busy thread, pending
//! interrupt without resume, reused runId), 422 (expired interrupt, payload
//! against `responseSchema`). Once streaming, failures are `RUN_ERROR` events.
//!
//! Hosts only adapt: `axum::serve` (dev server), `lambda_http` (Lambda) or a
//! Worker fetch handler call the same router. A host deadline travels in the
//! request extensions as [`HostDeadline`].
//!
//! ```no_run
//! # async fn demo(engine: handoff_core::Engine) {
//! let app = handoff_http::router(engine, handoff_http::HttpConfig::default());
//! # let _: axum::Router = app;
//! # }
//! ```

mod body;
mod config;
mod error;
mod routes;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use futures::future::BoxFuture;
use handoff_core::Engine;

pub use body::{Encoding, sse_response};
pub use config::{Host, HostDeadline, HttpConfig};
pub use error::ApiError;

/// Shared state of the handlers.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The engine.
    pub engine: Engine,
    /// HTTP settings.
    pub config: HttpConfig,
    /// Extra fields for `GET /threads/{threadId}`.
    pub thread_extras: Option<ThreadExtrasHook>,
}

/// Adds host-specific fields to the `GET /threads/{threadId}` answer.
pub trait ThreadExtras: Send + Sync + 'static {
    /// Fields to merge into the view of `thread_id` (only for an existing thread).
    fn fields<'a>(
        &'a self,
        thread_id: &'a str,
    ) -> BoxFuture<'a, Result<serde_json::Map<String, serde_json::Value>, ApiError>>;
}

/// A shared [`ThreadExtras`].
#[derive(Clone)]
pub struct ThreadExtrasHook(pub Arc<dyn ThreadExtras>);

impl std::fmt::Debug for ThreadExtrasHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ThreadExtrasHook")
    }
}

/// The router with every engine route.
pub fn router(engine: Engine, config: HttpConfig) -> Router {
    build(AppState {
        engine,
        config,
        thread_extras: None,
    })
}

/// [`router`], with extra `GET /threads/{threadId}` fields from `extras`.
pub fn router_with_thread_extras(
    engine: Engine,
    config: HttpConfig,
    extras: Arc<dyn ThreadExtras>,
) -> Router {
    build(AppState {
        engine,
        config,
        thread_extras: Some(ThreadExtrasHook(extras)),
    })
}

fn build(state: AppState) -> Router {
    Router::new()
        .route("/agent", post(routes::agent::run_agent))
        .route("/threads/{thread_id}", get(routes::threads::get_thread))
        .route(
            "/threads/{thread_id}/runs/{run_id}/events",
            get(routes::threads::replay_run),
        )
        .route("/api/v1/chat/stream", post(routes::superagent::chat_stream))
        .route("/api/v1/chat/resume", post(routes::superagent::chat_resume))
        .route("/healthz", get(routes::threads::health))
        .with_state(state)
}
