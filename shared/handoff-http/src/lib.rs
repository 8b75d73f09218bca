//! The HTTP surface every Handoff host serves, as one axum [`Router`].
//!
//! | route | what |
//! |---|---|
//! | `POST /agent` | AG-UI run over SSE; A2UI with `X-A2UI: true` or `?a2ui=true` |
//! | `GET /threads?limit=&cursor=&includeArchived=&agentId=` | the caller's threads, latest activity first: `{threads, nextCursor}` |
//! | `GET /approvals?limit=&cursor=` | the pending interrupts the caller may resolve across its tenant's threads, newest first: `{approvals, nextCursor}` |
//! | `GET /audit?threadId=&since=&limit=&cursor=` | role `auditor`: the approval audit trail, newest first: `{entries, nextCursor}` (NDJSON with `Accept: application/x-ndjson`) |
//! | `GET /audit/verify?threadId=` | role `auditor`: `{intact, entries, firstBroken?}` |
//! | `GET /threads/{threadId}` | pending interrupts, state, messages, last run (rehydrate after a reload) |
//! | `PATCH /threads/{threadId}` | `{name?, archived?}`: the updated thread |
//! | `DELETE /threads/{threadId}` | erase the thread whole: `{threadId, deleted: true}` |
//! | `POST /threads/{threadId}/fork` | `{atMessageId?, threadId?}`: a new thread of the caller's with the history up to that message and the state as it stood then: 201 `{threadId}` |
//! | `GET /threads/{threadId}/messages?limit=&before=` | the history in pages, oldest first within a page: `{messages, nextBefore}` |
//! | `GET /threads/{threadId}/runs/{runId}/events` | a run's frames; `Last-Event-ID` rejoins after a frame, a running run is followed to its end |
//! | `POST /api/v1/chat/stream`, `POST /api/v1/chat/resume` | Superagent-compatible chat (legacy framing unless A2UI is asked for) |
//! | `GET {base}/info`, `POST {base}/agent/{agentId}/run`, `…/connect`, `…/stop/{threadId}`, `POST {base}` (envelope) | CopilotKit runtime protocol, `{base}` = [`HttpConfig::copilotkit_base`] |
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

pub mod auth;
mod body;
mod config;
mod cors;
mod drain;
mod error;
mod guard;
mod routes;
mod trace_context;

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use futures::future::BoxFuture;
use handoff_core::Engine;

pub use auth::{AuthError, AuthHook, Authenticator, NoAuth, Principal};
pub use body::{Encoding, sse_response, sse_response_numbered};
pub use config::{
    COPILOTKIT_BASE, Host, HostDeadline, HttpConfig, RATE_LIMIT_VAR, TOKEN_BUDGET_VAR, check_limits,
};
pub use cors::{CORS_MAX_AGE, CORS_ORIGINS_VAR, CorsConfigError, CorsOrigins, finish_preflight};
pub use drain::read_unread_bodies;
pub use error::ApiError;
pub use guard::ALLOWED_HOSTS_VAR;
pub use trace_context::parse_traceparent;

/// Shared state of the handlers.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The engine.
    pub engine: Engine,
    /// HTTP settings.
    pub config: HttpConfig,
    /// Extra fields for `GET /threads/{threadId}`.
    pub thread_extras: Option<ThreadExtrasHook>,
    /// Who is calling.
    pub auth: AuthHook,
    /// Agents served next to `engine` (by id) on the CopilotKit routes.
    pub agents: Arc<BTreeMap<String, AgentEntry>>,
    /// The description of `engine` on the CopilotKit routes.
    pub description: Option<String>,
}

/// An agent served by id on the CopilotKit routes besides the primary engine.
#[derive(Clone, Debug)]
pub struct AgentEntry {
    /// Its engine.
    pub engine: Engine,
    /// What `GET {base}/info` says it does.
    pub description: Option<String>,
}

/// Adds host-specific fields to the `GET /threads/{threadId}` answer.
pub trait ThreadExtras: Send + Sync + 'static {
    /// Fields to merge into the view of the thread stored in `partition` (its id scoped
    /// by the caller's tenant, see `handoff_core::principal`), once the caller was allowed
    /// to read it.
    fn fields<'a>(
        &'a self,
        partition: &'a str,
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

/// The router with every engine route, open to anyone ([`NoAuth`]): for tests and local
/// use. Deployed hosts build theirs with [`Routes`] and an [`Authenticator`].
pub fn router(engine: Engine, config: HttpConfig) -> Router {
    Routes::new(engine, config).build()
}

/// [`router`], with extra `GET /threads/{threadId}` fields from `extras`.
pub fn router_with_thread_extras(
    engine: Engine,
    config: HttpConfig,
    extras: Arc<dyn ThreadExtras>,
) -> Router {
    Routes::new(engine, config).thread_extras(extras).build()
}

/// Builds the router: the engine routes behind an [`Authenticator`] (default [`NoAuth`]),
/// optionally with thread extras, a host's own routes and a fallback. Every request body
/// is read to its end before the answer ([`read_unread_bodies`]). CORS
/// ([`CorsOrigins::apply`]) goes around the final router.
#[derive(Debug)]
pub struct Routes {
    state: AppState,
    extra: Router,
    protected: Router,
    fallback: Option<Router>,
}

impl Routes {
    /// The routes of `engine`.
    pub fn new(engine: Engine, config: HttpConfig) -> Self {
        Routes {
            state: AppState {
                engine,
                config,
                thread_extras: None,
                auth: AuthHook::default(),
                agents: Arc::default(),
                description: None,
            },
            extra: Router::new(),
            protected: Router::new(),
            fallback: None,
        }
    }

    /// A host's own routes behind the [`Authenticator`], like the engine's: their
    /// handlers find the caller's [`Principal`] in the request extensions.
    #[must_use]
    pub fn protected(mut self, routes: Router) -> Self {
        self.protected = self.protected.merge(routes);
        self
    }

    /// A host's own routes next to the engine's (a path both define panics, as
    /// [`Router::merge`] does).
    #[must_use]
    pub fn merge(mut self, routes: Router) -> Self {
        self.extra = self.extra.merge(routes);
        self
    }

    /// What answers the requests no route matches (the web console, say).
    #[must_use]
    pub fn fallback(mut self, fallback: Router) -> Self {
        self.fallback = Some(fallback);
        self
    }

    /// Extra `GET /threads/{threadId}` fields.
    #[must_use]
    pub fn thread_extras(mut self, extras: Arc<dyn ThreadExtras>) -> Self {
        self.state.thread_extras = Some(ThreadExtrasHook(extras));
        self
    }

    /// Who may call: run before every route but `/healthz`.
    #[must_use]
    pub fn authenticator(mut self, authenticator: Arc<dyn Authenticator>) -> Self {
        self.state.auth = AuthHook(authenticator);
        self
    }

    /// Serves `engine` as agent `id` on the CopilotKit routes too (the primary engine is
    /// served as its `agent_name()`); `description` is what `GET {base}/info` lists.
    #[must_use]
    pub fn agent(
        mut self,
        id: impl Into<String>,
        engine: Engine,
        description: Option<String>,
    ) -> Self {
        Arc::make_mut(&mut self.state.agents).insert(
            id.into(),
            AgentEntry {
                engine,
                description,
            },
        );
        self
    }

    /// The description of the primary engine on `GET {base}/info`.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.state.description = Some(description.into());
        self
    }

    /// The router.
    pub fn build(self) -> Router {
        let sleep = self.state.engine.runtime().sleep.clone();
        let body_limit = self.state.config.body_limit;
        let state = self.state;
        let guard = Arc::new(guard::Guard {
            origins: state.config.cors_origins.clone(),
            hosts: (state.auth.0.scheme() == "none").then(|| state.config.allowed_hosts.clone()),
        });
        let protected = routes::copilotkit::register(Router::new(), &state.config.copilotkit_base)
            .route("/agent", post(routes::agent::run_agent))
            .route("/threads", get(routes::thread_list::list_threads))
            .route("/approvals", get(routes::thread_list::list_approvals))
            .route("/audit", get(routes::audit::list_audit))
            .route("/audit/verify", get(routes::audit::verify_audit))
            .route(
                "/threads/{thread_id}",
                get(routes::threads::get_thread)
                    .patch(routes::thread_list::update_thread)
                    .delete(routes::thread_list::delete_thread),
            )
            .route(
                "/threads/{thread_id}/messages",
                get(routes::thread_list::thread_messages),
            )
            .route(
                "/threads/{thread_id}/fork",
                post(routes::thread_list::fork_thread),
            )
            .route(
                "/threads/{thread_id}/runs/{run_id}/events",
                get(routes::threads::replay_run),
            )
            .route(
                "/threads/{thread_id}/runs/{run_id}/stop",
                post(routes::runs::stop_run),
            )
            .route("/api/v1/chat/stream", post(routes::superagent::chat_stream))
            .route("/api/v1/chat/resume", post(routes::superagent::chat_resume))
            .route_layer(axum::middleware::from_fn_with_state(
                state.auth.clone(),
                auth::authenticate,
            ));
        // axum refuses a route layer on a router without routes.
        let own = match self.protected.has_routes() {
            true => self
                .protected
                .route_layer(axum::middleware::from_fn_with_state(
                    state.auth.clone(),
                    auth::authenticate,
                )),
            false => self.protected,
        };
        let app = protected
            .route("/healthz", get(routes::threads::health))
            // In an Arc: axum clones the state for every request (and a route layer again).
            .with_state(Arc::new(state))
            .merge(self.extra)
            .merge(own);
        let app = match self.fallback {
            Some(fallback) => app.fallback_service(fallback),
            None => app,
        };
        // Around every route, the host's and the fallback included.
        let app = app.layer(axum::middleware::from_fn_with_state(guard, guard::guard));
        read_unread_bodies(app, sleep, body_limit)
    }
}
