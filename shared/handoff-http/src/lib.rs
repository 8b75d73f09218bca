//! The HTTP surface every Handoff host serves, as one axum [`Router`].
//!
//! # Routes
//!
//! | route | what |
//! |---|---|
//! | `POST /agent` | AG-UI run over SSE; A2UI named events with `X-A2UI: true` or `?a2ui=true`; the AG-UI protobuf encoding (4-byte big-endian length-prefixed messages, as `@ag-ui/proto` encodes them) with `Accept: application/vnd.ag-ui.event+proto`, also on `GET …/events` |
//! | `GET /threads?limit=&cursor=&includeArchived=true&agentId=` | the caller's threads (those it owns in its tenant), latest activity first: `{"threads": [{id, name, archived, agentId, createdById, createdAt, updatedAt, lastRunAt, status, pendingInterrupts}], "nextCursor"}`; `limit` 1-100 (default 20); archived threads only with `includeArchived=true`; cursors are sealed (HMAC-SHA-256 under a key the deployment keeps in its store) and bound to the caller's list: an altered one, or another caller's, is 400 `INVALID_CURSOR` |
//! | `GET /threads/{threadId}` | pending interrupts, state, messages and last run (rehydrate after a reload) |
//! | `PATCH /threads/{threadId}` | `{"name"?, "archived"?}` (names up to 200 characters, no control characters): the updated thread; the owner's to do, and a run in progress is not disturbed; an archived thread leaves the default list and still works |
//! | `DELETE /threads/{threadId}` | `{"threadId", "deleted": true}`: the running run is stopped first (up to 10 s), then the head goes (every route about the thread answers 404 from then on) and every other record after it: history pages, runs, live journals, stops, answers, effects, A2A snapshots, its list entries; a new `POST /agent` on the id starts a fresh thread |
//! | `GET /threads/{threadId}/messages?limit=&before=` | the history in pages, latest first, oldest first within a page: `{"messages", "nextBefore"}`; reads only the history pages it returns from |
//! | `POST /threads/{threadId}/fork` | `{"atMessageId"?, "threadId"?}`: 201 `{"threadId"}`, a new thread of the caller's whose history is the source's up to and including that message (all of it without one), with the state as it stood then; the source is only read (a run in progress on it is not part of the fork). Edit a message and regenerate: fork before it, then run. The thread's owner only: an approver who may read it while an interrupt is open gets 403 `FORBIDDEN` |
//! | `GET /approvals?limit=&cursor=` | the approvals inbox: the pending interrupts the caller may resolve across its tenant's threads, newest first (those whose policy names a role it holds, minus its own requests under not-the-requester; without a role, those on threads it owns): `{"approvals": [{threadId, interruptId, reason, message, toolCall, responseSchema, expiresAt, requestedBy, requiredRoles, createdAt}], "nextCursor"}` |
//! | `GET /approvals/waiting` | what waits for the caller now, for the console's bell: the inbox's interrupts (the same rule) that have not expired, newest first, at most 100: `{"count", "approvals": [{threadId, interruptId, message?, requestedBy?, requestedAt?, expiresAt?}], "more"?: true}` (Unix ms; `more` when there may be others). It reads the inbox's listing, written in the commit that ends a run, the one that writes the webhooks' `interrupt.created` and `run.finished`/`run.failed`: an answer by any route takes its interrupt off at once. Cost: one listing read plus one read per thread of the tenant with pending interrupts (at most 400) |
//! | `GET /audit?threadId=&since=&limit=&cursor=` | the approval audit trail, role `auditor` only (403 `FORBIDDEN` otherwise): `{"entries": [{seq, time, threadId, kind: "answer"\|"effect", principal, roles, interruptId, decision, payloadHash, runId, effectKey?, replayed?, idempotencyKey?, attempt?, prevHash, hash}], "nextCursor"}`, newest first, across the tenant's threads (by time) or one (in chain order, reading that thread's entries only); an effect's entry is written when an attempt starts, so one left in doubt is listed too; one entry per line with `Accept: application/x-ndjson` (the next cursor in `x-handoff-next-cursor`); `since` is an ISO-8601 time or Unix ms |
//! | `GET /webhooks/deliveries?limit=` | feature `webhooks` (default): role `admin` (403 `FORBIDDEN` otherwise): the tenant's webhook events, newest first (see [`webhooks`]): `{"deliveries": [{id, type, threadId, runId, status: "pending"\|"delivered"\|"failed", attempts, createdAt, nextAttemptAt?, servedEndpoints?, lastError?}]}` (Unix ms); `limit` 1-100 (default 20); each is kept a week |
//! | `POST /schedules` | feature `schedules` (default): `{cron (5 fields, UTC) \| everySeconds, agentId, messages, thread: "new" \| threadId}`: 201 with the schedule `{id, cron\|everySeconds, agentId, messages, thread, createdBy, createdAt, nextDueAt, ticks, lastRun?}`; each tick runs once across instances as a background run of the creator's (see [`schedules`]); 400 `INVALID_SCHEDULE`, 404 `AGENT_NOT_FOUND`, 409 `SCHEDULE_LIMIT` (100 a tenant) |
//! | `GET /schedules` | feature `schedules`: `{"schedules": [...]}`: the caller's, every one of the tenant's for role `admin` |
//! | `DELETE /schedules/{id}` | feature `schedules`: `{"id", "deleted": true}`; the creator's or an admin's to do, 404 `SCHEDULE_NOT_FOUND` for anyone else |
//! | `GET /audit/verify?threadId=` | role `auditor`: `{"intact", "entries", "firstBroken"?, "threadId"?}`, whether the thread's hash chain (every chain of the tenant without `threadId`) is whole |
//! | `POST /agent` with `Prefer: respond-async` | a background run (RFC 7240; other preferences in the header are ignored): once the run is claimed, `202 {"threadId","runId"}` with `Location: /threads/{threadId}/runs/{runId}` and `Preference-Applied: respond-async`, and the run goes on with nobody connected; bad input is the same 4xx as without it. Only on hosts that offer background work ([`handoff_core::Runtime::background`]: the dev server); Lambda and Workers ignore the preference for now and stream as usual (no `Preference-Applied`). Under `HANDOFF_DOUBLE_TEXT` `interrupt` or `enqueue`, a run sent to a busy thread is answered 202 before it is claimed, and its status is 404 `RUN_NOT_FOUND` until it is |
//! | `GET /threads/{threadId}/runs/{runId}` | where a run stands, background or streamed ([`handoff_core::RunStatusView`]): `{"threadId", "runId", "status": "running"\|"interrupted"\|"succeeded"\|"failed"\|"cancelled", "outcome"?: "success"\|"interrupt"\|"cancelled", "usage"?, "interrupts"?, "error"?: {code, message}, "startedAt", "finishedAt"?}` (Unix ms); a run whose instance went away is `failed` with `RUN_ABANDONED` once its lease lapses; who may read it as for its events; 404 `RUN_NOT_FOUND` for a run the thread never had |
//! | `GET /threads/{threadId}/runs/{runId}/events` | the run's frames as SSE; with `Last-Event-ID: n` a client that dropped rejoins after frame `n` (a join prelude, then the rest); a run still running is followed to its end on any instance (see [Reconnecting](#reconnecting)) |
//! | `POST /threads/{threadId}/runs/{runId}/stop` | stop a running run on whichever instance runs it: 202 `{"status":"stopping"}`, the run ends `RUN_FINISHED{outcome: cancelled}` at its next checkpoint (at once on the same instance, else within `HANDOFF_STOP_POLL_MS`, default 1 s) and releases the thread; 200 with the final status for a run that already ended. A dropped connection is not a stop. |
//! | `POST /api/v1/chat/stream`, `POST /api/v1/chat/resume` | Superagent-compatible chat: legacy framing, or A2UI on request |
//! | `GET {base}/info`, `POST {base}/agent/{agentId}/run`, `…/connect`, `…/stop/{threadId}`, `{base}/threads…`, `POST {base}` (envelope) | the CopilotKit runtime protocol, `{base}` = [`HttpConfig::copilotkit_base`]: see [CopilotKit runtime protocol](#copilotkit-runtime-protocol) |
//! | `GET /.well-known/agent-card.json` | feature `a2a-server` (default): the agent's A2A 1.0 card, readable without credentials: see [A2A](#a2a) |
//! | `POST /a2a` (and `/a2a/`) | feature `a2a-server` (default): the agent over A2A 1.0's JSON-RPC binding: see [A2A](#a2a) |
//! | `GET /healthz` | liveness |
//! | `GET /` | the web console (public page, served next to this router by the hosts from `handoff-console`; see docs/console.md); `HANDOFF_CONSOLE=off` removes it |
//! | `POST /mcp` | feature `mcp-server` (default): the agent as an MCP server (Streamable HTTP, JSON responses; revisions 2026-07-28, 2025-11-25, 2025-06-18): one tool named after the agent, `{message, threadId?}`; an interrupt is a 2026-07-28 `input_required` result (elicitation + a sealed `requestState`, answered exactly once by the retry) or, on the session revisions, a server-initiated `elicitation/create` on the call's stream when the client declared elicitation (its answer, POSTed to any instance, resumes the run once; the call answers when that run ends, within `HANDOFF_MCP_ELICIT_WAIT_MS`), else a result saying the run waits, polled with `threadId` (see `routes/mcp`) |
//! | `GET /.well-known/oauth-protected-resource` (and `…/mcp`) | feature `mcp-server`, with `HANDOFF_AUTH=jwt` only: OAuth protected-resource metadata for MCP clients (`resource` = `{base}/mcp`, `authorization_servers` = the JWT issuer); a 401 from `/mcp` names it in `WWW-Authenticate` (`resource_metadata`) |
//! | `GET /demo/orders/{orderId}` | the demo ledger (a host route of `handoff-demo`'s, behind the authenticator) |
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
//! Every code, with its status and meaning: [`handoff_core::codes`].
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
//!
//! # Settings
//!
//! Hosts read these from the environment, the same variables on every host
//! ([`HttpConfig::for_host`], [`Host::engine_config`], [`check_limits`]); each host's
//! own table (the module docs of `handoff::server`, `handoff::lambda`, `handoff::worker`)
//! lists its defaults next to its other variables.
//!
//! | variable | default | what |
//! |---|---|---|
//! | `HANDOFF_BODY_LIMIT` | follows the host: 8 MiB on the dev server and on Workers, 6,000,000 on Lambda, whose own request limit is 6 MB | the largest request body, in bytes; AG-UI clients resend the whole history on every run |
//! | `HANDOFF_KEEP_ALIVE_MS` | 15000 | quiet time before an SSE keep-alive comment |
//! | `HANDOFF_THREAD_TTL_SECS` | 30 days, every host | how long an untouched thread lives; its effect records live as long: past it the thread is gone whole, `GET /threads/{id}` is a 404, and a new run on the id starts a fresh thread, the old one's leftover records, history pages and A2A task snapshots included, erased first |
//! | `HANDOFF_LEASE_MS` | 15 min, 60 s on Workers | how long a run holds its thread between renewals: a live run renews it halfway through, so it bounds only how long a dead process blocks the thread |
//! | `HANDOFF_STOP_POLL_MS` | 1000 | how often a running run reads its `stop#{runId}` item for a stop sent to another instance: one small read; 0 = only stops sent to the same instance |
//! | `HANDOFF_LIVE_FLUSH_MS` | 250 | how often a running run journals its new events for clients reconnecting on another instance, and how often they poll; 0 = none |
//! | `HANDOFF_DOUBLE_TEXT` | `reject` | what a new message does while a run is running on its thread: `reject` answers 409 `THREAD_BUSY`; `interrupt` stops the running run at its next checkpoint, which ends `cancelled`, then runs the new one; `enqueue` runs it once the running one finishes; under both the new stream starts at once and sends keep-alives while it waits, up to the host's deadline, then ends `RUN_ERROR` `THREAD_BUSY`, and the new message is merged after the running run's reply instead of being refused as stale; an agent may choose for itself with `Agent::double_text`, `LlmAgent::double_text` |
//! | `HANDOFF_RATE_LIMIT` | unset: no limit | runs a principal may start, `COUNT/WINDOW` with WINDOW `s`, `min`, `h` or `day`, optionally with a number: `60/min`, `3/10s`; a token bucket of COUNT refilled evenly over WINDOW, kept in the store so it holds across instances; over it, 429 `RATE_LIMITED` before anything is claimed, an answer included, which stays pending |
//! | `HANDOFF_TOKEN_BUDGET` | unset: no budget | model tokens, input plus output, a tenant may use per window aligned to the Unix epoch, a `day` being a UTC day, e.g. `200000/day`; spent, a new run is 429 `BUDGET_EXCEEDED` and a running one ends at its next model call with `RUN_ERROR` `BUDGET_EXCEEDED` and its usage; agents other than `LlmAgent` check it with `ctx.check_budget()` before each model call |
//! | `HANDOFF_COPILOTKIT_BASE` | `/copilotkit` | where the [CopilotKit runtime protocol](#copilotkit-runtime-protocol) is served |
//! | `HANDOFF_CORS_ORIGINS` | no CORS | see [Cross-site requests, DNS rebinding and CORS](#cross-site-requests-dns-rebinding-and-cors) |
//! | `HANDOFF_PUBLIC_URL` | the request's origin | the deployment's base URL, for the links it publishes (the A2A card's endpoint) |
//! | `HANDOFF_A2A_ALLOW_LOOPBACK` | `false` | `true`: A2A push-notification webhooks may be `http://` and loopback (tests only) |
//! | `HANDOFF_MCP_ELICIT_WAIT_MS` | 45000 | how long an MCP session call that sent an `elicitation/create` waits for the answer's run to end (never past the host deadline) before it answers that the run waits for an approver; below the official SDKs' 60 s request timeout, so such a client gets that answer rather than a timeout |
//! | `HANDOFF_ALLOWED_HOSTS` | loopback names only | with `HANDOFF_AUTH=none`, the other `Host` names answered: see the same section |
//!
//! | `HANDOFF_SCHEDULE_POLL_MS` | 1000 (dev server) | feature `schedules`: how often due schedule ticks are looked for; Lambda and Workers tick on their triggers (see [`schedules`]) |
//! | `HANDOFF_WEBHOOK_URLS`, `HANDOFF_WEBHOOK_SECRETS`, `HANDOFF_WEBHOOK_FORMAT`, `HANDOFF_WEBHOOK_ALLOW_LOOPBACK` | no webhooks | feature `webhooks` (a build without it refuses to start when they are set): the operator's endpoints told about every run's end, signed as Standard Webhooks says: see [`webhooks`] |
//!
//! A malformed `HANDOFF_RATE_LIMIT` or `HANDOFF_TOKEN_BUDGET` refuses to start with a
//! message naming it. Their store cost: a run start 2 round trips for the rate limit and 1
//! for the budget, a model call 2, the run's end 2.
//!
//! # A2A
//!
//! Any agent is served over A2A 1.0 (JSON-RPC binding; `A2A-Version` 1.x, or none): its card
//! at `GET /.well-known/agent-card.json` (URLs from `HANDOFF_PUBLIC_URL`, else the request's
//! origin; the security scheme of `HANDOFF_AUTH`), and `POST /a2a` with `SendMessage`,
//! `SendStreamingMessage`, `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask` and the
//! push-notification-config methods. Errors are the spec's JSON-RPC codes; a Handoff refusal
//! names its code in `error.data[0].reason` (`-32602` for bad input, `-32050` for the rest).
//!
//! | A2A | Handoff |
//! |---|---|
//! | `contextId` | the thread (a new one when the message names none) |
//! | a task | the chain of runs serving one request: the first message's run, then each run that answers its interrupts, by whatever path (A2A, AG-UI, the console) |
//! | a message's text parts (data parts as JSON) | the turn's user message, its id the `messageId` |
//! | an assistant text message | an artifact (id = the message id) with a text part; `CUSTOM a2a.artifact` (value: an A2A `Artifact`) is that artifact |
//! | the final state, when not empty | artifact `state` with a data part |
//! | `CUSTOM a2a.message` (value: an A2A `Message`) | the answer is that message, not a task |
//! | `RUN_FINISHED` success | `TASK_STATE_COMPLETED` with its artifacts |
//! | `RUN_FINISHED` interrupt | `TASK_STATE_INPUT_REQUIRED`; the status message has each interrupt's message as text and `{interruptId, reason, message?, toolCallId?, responseSchema?, expiresAt?}` as data |
//! | a `SendMessage` on that task with data `{interruptId, payload}` (or `{interruptId, cancelled: true}`; with one interrupt, a bare data part, or text for an interrupt without `responseSchema`) | the resume, through the engine's claim: exactly once, under the interrupt's approval policy |
//! | `RUN_ERROR` | `TASK_STATE_FAILED` (`TASK_STATE_REJECTED` for code `REJECTED`) |
//! | a stop, or `CancelTask` | `TASK_STATE_CANCELED` (an input-required task's interrupts are cancelled through a resume) |
//!
//! A task's state is never stored: it is read from its runs' records each time, so it cannot
//! disagree with the thread. The same `messageId` with the same parts is a replay (the same
//! task and run; the engine replays the run); a new `messageId`, or other parts, is a new
//! message. Tasks are the tenant's, visible to whoever may read their thread; `ListTasks`
//! lists the caller's own (the 1,000 most recent). `SubscribeToTask` stays open while the task
//! is not terminal and follows whichever run continues it.
//!
//! **Push notifications** go out from the store's outbox (`handoff_core::outbox`): the end of
//! each run serving a task writes a `statusUpdate` notice in the same commit, delivered to each
//! of the task's webhooks with its token (`X-A2A-Notification-Token`) and its credentials
//! (`Authorization`), retried with backoff, a served webhook never sent twice. Webhook URLs pass
//! the outbound URL guard ([`handoff_auth::url_guard`]).
//!
//! # Reconnecting
//!
//! Every AG-UI frame carries `id: n`, its position in the run (clients that do not reconnect ignore
//! it). A client that loses its connection sends `GET /threads/{threadId}/runs/{runId}/events` with
//! `Last-Event-ID: n` (the id of the last frame it has), on any instance. It gets a **join
//! prelude**, the frames it already saw that a consumer starting here needs (`RUN_STARTED`, the
//! state and messages snapshots as they stood with the state deltas since, the start of every
//! message, tool call, step or reasoning block still open), under their original ids, then every
//! frame after `n`. Dropping the ids it has seen gives exactly the uninterrupted stream; a consumer
//! that starts fresh (the official client) sees a valid stream from its first frame. A finished run
//! is answered from its record (stored compacted, with where each merged delta was cut, so the
//! frames are the ones it streamed). A running run journals its new events every
//! `HANDOFF_LIVE_FLUSH_MS` (250 ms: at most four small writes a second while it streams, none for a
//! run that ends sooner); the reader gets the journal, then polls at the same interval until the
//! run's record is final and sends the remainder and the terminal event. A run whose instance died
//! ends the reader's stream with `RUN_ERROR{code:"RUN_ABANDONED"}` once its lease lapses.
//!
//! # Cross-site requests, DNS rebinding and CORS
//!
//! A state-changing request (POST, PUT, PATCH, DELETE, any route) from a browser page of
//! another origin is 403 `ORIGIN_NOT_ALLOWED` unless its origin is listed in
//! `HANDOFF_CORS_ORIGINS`; requests without `Origin` (curl, SDKs) are unaffected.
//! With `HANDOFF_AUTH=none`, only `Host` names `localhost`, `127.0.0.1`, `[::1]` and those in
//! `HANDOFF_ALLOWED_HOSTS` (comma-separated) are answered (403 `HOST_NOT_ALLOWED`; without
//! `Host` the URI's authority is the name, and a request with neither is refused once names are
//! listed). A host's own routes go behind the authenticator with the builders'
//! `protected_routes(...)` (the demo's ledger route does); `routes(...)` stays for routes that
//! check their callers themselves (the A2A receiver).
//!
//! `HANDOFF_CORS_ORIGINS` (comma-separated origins, or `*`): preflights are answered 204
//! for `content-type`, `authorization`, `x-a2ui`, `last-event-id`, `accept` and `prefer`;
//! `x-handoff-run-id`, and a background run's `location` and `preference-applied`, are
//! exposed; credentials are never allowed with `*`; other origins get no CORS headers. On Lambda,
//! use the template's `CorsOrigins` parameter (the Function URL's CORS) instead.
//!
//! # CopilotKit runtime protocol
//!
//! A CopilotKit front end (v1.50+) talks to Handoff directly, with no Node CopilotKit
//! runtime in between: every host serves this protocol under `HANDOFF_COPILOTKIT_BASE`
//! (`{base}`, default `/copilotkit`), behind the same authentication as `/agent`.
//!
//! | route | what |
//! |---|---|
//! | `GET {base}/info` | `{version, agents: {id: {name, description?, capabilities}}, mode: "sse", …}`: the agents CopilotKit registers |
//! | `POST {base}/agent/{agentId}/run` | body `RunAgentInput`: the run as AG-UI SSE, same contract and errors as `POST /agent` (a resume carries `resume: [...]`) |
//! | `POST {base}/agent/{agentId}/connect` | body `RunAgentInput` (its `threadId`): the stored thread as one run (`RUN_STARTED`, `STATE_SNAPSHOT`, `MESSAGES_SNAPSHOT`, `RUN_FINISHED` whose `outcome` re-presents pending interrupts, so the approval card comes back after a reload), then a run in progress followed live to its end; empty for a thread that never ran |
//! | `POST {base}/agent/{agentId}/stop/{threadId}` | body `{runId?}` (default: the thread's running run): `{stopped: true, threadId, runId}` once asked (the run ends `cancelled`), else `{stopped: false, threadId, message}` |
//! | `GET {base}/threads?agentId=&includeArchived=&limit=&cursor=` | the caller's threads as CopilotKit's `ThreadRecord`s (`{id, organizationId, agentId, createdById, name, archived, createdAt, updatedAt, lastRunAt}`, `organizationId` = the tenant), `{threads, nextCursor}`; `agentId` keeps the threads that agent last ran |
//! | `PATCH {base}/threads/{id}`, `POST {base}/threads/{id}/archive`, `DELETE {base}/threads/{id}` | rename / unarchive, archive, delete, as CopilotKit's thread store sends them |
//! | `GET {base}/threads/{id}/messages\|state\|events` | the thread's messages (tool calls as `{id, name, args}`), state, and the events `connect` replays |
//! | `POST {base}` | single-route transport: `{method: "info" \| "agent/run" \| "agent/connect" \| "agent/stop" \| "resource/request", params: {agentId, threadId?} or {path, httpMethod}, body}` |

pub mod auth;
mod body;
mod config;
mod cors;
mod drain;
mod error;
mod guard;
mod request_log;
mod routes;
#[cfg(feature = "schedules")]
pub mod schedules;
mod trace_context;
#[cfg(feature = "webhooks")]
pub mod webhooks;

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use futures::future::BoxFuture;
use handoff_core::Engine;

pub use auth::{AuthError, AuthHook, Authenticator, NoAuth, Principal};
pub use body::{Encoding, sse_response, sse_response_numbered};
pub use config::{
    BackgroundMode, COPILOTKIT_BASE, Host, HostDeadline, HttpConfig, RATE_LIMIT_VAR,
    TOKEN_BUDGET_VAR, check_limits,
};
pub use cors::{CORS_MAX_AGE, CORS_ORIGINS_VAR, CorsConfigError, CorsOrigins, finish_preflight};
pub use drain::read_unread_bodies;
pub use error::ApiError;
pub use guard::ALLOWED_HOSTS_VAR;
pub use request_log::{RequestId, TraceId};
#[cfg(feature = "a2a-server")]
pub use routes::a2a::push::{A2A_PUSH_KIND, A2aPush, A2aPushNotifier};
pub use trace_context::parse_traceparent;

/// The role that manages a tenant's operations: it reads `GET /webhooks/deliveries` and
/// lists and deletes every schedule of its tenant.
pub const ADMIN_ROLE: &str = "admin";

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
    /// Signs the A2A pushes and publishes its key at `/.well-known/jwks.json`.
    pub push_signer: Option<Arc<dyn handoff_auth::PushSigner>>,
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
                push_signer: None,
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

    /// Publishes `signer`'s key at `GET /.well-known/jwks.json` (the A2A pushes it signs).
    #[must_use]
    pub fn push_signer(mut self, signer: Arc<dyn handoff_auth::PushSigner>) -> Self {
        self.state.push_signer = Some(signer);
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
        let runtime = self.state.engine.runtime().clone();
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
            .route(
                "/approvals/waiting",
                get(routes::thread_list::waiting_approvals),
            )
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
                "/threads/{thread_id}/runs/{run_id}",
                get(routes::runs::run_status),
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
            .route("/api/v1/chat/resume", post(routes::superagent::chat_resume));
        #[cfg(feature = "webhooks")]
        let protected = protected.route(
            "/webhooks/deliveries",
            get(routes::webhooks::list_deliveries),
        );
        #[cfg(feature = "schedules")]
        let protected = protected
            .route(
                "/schedules",
                get(routes::schedules::list_schedules).post(routes::schedules::create_schedule),
            )
            .route(
                "/schedules/{schedule_id}",
                axum::routing::delete(routes::schedules::delete_schedule),
            );
        #[cfg(feature = "a2a-server")]
        let protected = protected
            .route("/a2a", post(routes::a2a::jsonrpc))
            // Clients that join the card's URL and "/" (the TCK's) post here.
            .route("/a2a/", post(routes::a2a::jsonrpc));
        #[cfg(feature = "mcp-server")]
        let protected = protected.route(
            "/mcp",
            post(routes::mcp::jsonrpc)
                .get(routes::mcp::not_served)
                .delete(routes::mcp::not_served),
        );
        let protected = protected.route_layer(axum::middleware::from_fn_with_state(
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
        let app = protected.route("/healthz", get(routes::threads::health));
        #[cfg(feature = "a2a-server")]
        let app = app
            .route("/.well-known/agent-card.json", get(routes::a2a::agent_card))
            .route("/.well-known/jwks.json", get(routes::a2a::push_jwks));
        // OAuth protected-resource metadata, for MCP clients (RFC 9728).
        #[cfg(feature = "mcp-server")]
        let oauth = !state.auth.0.authorization_servers().is_empty();
        #[cfg(feature = "mcp-server")]
        let app = match oauth {
            true => {
                let metadata = routes::mcp::resource::METADATA_PATH;
                app.route(metadata, get(routes::mcp::resource::metadata))
                    .route(
                        &format!("{metadata}/mcp"),
                        get(routes::mcp::resource::metadata),
                    )
            }
            false => app,
        };
        // In an Arc: axum clones the state for every request (and a route layer again).
        let state = Arc::new(state);
        let app = app.with_state(state.clone());
        #[cfg(feature = "mcp-server")]
        let app = match oauth {
            true => app.layer(axum::middleware::from_fn_with_state(
                state,
                routes::mcp::resource::challenge,
            )),
            false => app,
        };
        let app = app.merge(self.extra).merge(own);
        let app = match self.fallback {
            Some(fallback) => app.fallback_service(fallback),
            None => app,
        };
        // Around every route, the host's and the fallback included.
        let app = app.layer(axum::middleware::from_fn_with_state(guard, guard::guard));
        // Outside the guard, so its refusals are logged too (per route: the template is known).
        let app = app.layer(axum::middleware::from_fn_with_state(
            runtime,
            request_log::log_request,
        ));
        read_unread_bodies(app, sleep, body_limit)
    }
}
