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

use axum::Router;
use axum::routing::{get, post};
use handoff_core::Engine;

pub use body::{Encoding, sse_response};
pub use config::{HostDeadline, HttpConfig};
pub use error::ApiError;

/// Shared state of the handlers.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The engine.
    pub engine: Engine,
    /// HTTP settings.
    pub config: HttpConfig,
}

/// The router with every engine route.
pub fn router(engine: Engine, config: HttpConfig) -> Router {
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
        .with_state(AppState { engine, config })
}
