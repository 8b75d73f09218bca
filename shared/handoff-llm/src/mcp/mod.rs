//! Tools from remote MCP servers over Streamable HTTP, without I/O.
//!
//! ```
//! use std::sync::Arc;
//! use handoff_core::ApprovalPolicy;
//! use handoff_core::outbound::Outbound;
//! use handoff_llm::mcp::{ClientCredentials, McpServer};
//! use handoff_llm::{LlmAgent, Provider};
//!
//! fn agent(provider: Provider, models: Arc<dyn Outbound>, mcp: Arc<dyn Outbound>) -> LlmAgent {
//!     LlmAgent::new("support", provider, models)
//!         // natively handoff::outbound::UreqOutbound::guarded, on Workers FetchOutbound::guarded
//!         .mcp_http(mcp)
//!         .mcp(McpServer::streamable_http("docs", "https://mcp.example.com/mcp").bearer("s3cr3t"))
//!         .mcp(
//!             McpServer::streamable_http("crm", "https://crm.example.com/mcp").client_credentials(
//!                 ClientCredentials::new("https://auth.example.com/oauth/token", "agent", "s3cr3t")
//!                     .audience("https://crm.example.com"),
//!             ),
//!         )
//!         .mcp(
//!             McpServer::streamable_http("billing", "https://billing.example.com/mcp")
//!                 .tool_requiring_approval("refund", ApprovalPolicy::new().role("approver").not_requester()),
//!         )
//! }
//! ```
//!
//! **Revisions.** A connection speaks 2026-07-28 when the server lists it in
//! `server/discover` (asked first): no session, every request's `_meta` carrying the
//! protocol version, this client's capabilities (form and URL elicitation) and identity,
//! every POST the `Mcp-Method` header (and `Mcp-Name` for a call), results read by their
//! `resultType`. A server that refuses the probe (a JSON-RPC error, an HTTP 400, a result
//! without that revision) gets the session revisions: `initialize` (asking for
//! 2025-11-25), `notifications/initialized`, `Mcp-Session-Id`. An SSE answer the server
//! closes before the response is resumed with a GET and `Last-Event-ID` ([`resume`]).
//!
//! At the start of each run the agent lists every server's tools (`tools/list` page by
//! page) and offers them to the model as `{server}__{tool}` ([`offered_name`])
//! with their `inputSchema`. The list is cached per instance, until the server sends
//! `notifications/tools/list_changed` or refuses a call; a listing that fails leaves
//! that server out of the run (one log line naming it and the error) and is tried again
//! at the next run. Listing waits at most [`LIST_TIMEOUT_MS`], a call [`CALL_TIMEOUT_MS`]
//! or what is left of the host's deadline.
//!
//! **A tool that asks** (2026-07-28 `resultType: "input_required"`): the call ends the run
//! with `mcp_input` interrupts, one per elicitation, under the tool's approval policy (the
//! thread's owner when it has none); the human's answer retries the call once, with the
//! `inputResponses` and the `requestState` recorded server-side ([`input`]).
//!
//! A model's call is a backend tool call: checked against the schema, a `tool_call`
//! interrupt first when the server or tool requires approval, then `tools/call` inside
//! `ctx.effect` under `tool-{toolCallId}` (also sent as `_meta.idempotencyKey`). The
//! interrupt's `metadata.mcp` (`{"server", "tool"}`, stored with the pending interrupt)
//! names the tool, so an approval answered on an instance that cannot list the server at
//! that moment still makes the approved call instead of calling the tool unknown. Its
//! `TOOL_CALL_RESULT` is the result's text ([`result::render`]: structured content as
//! JSON text, else the text parts joined), cut at [`MAX_RESULT_BYTES`] with
//! `[truncated: N bytes]`, and so is a JSON-RPC error's message. An `isError` result, and any failure the model hears about
//! (below), is the tool message's `error` ([`handoff_core::RunContext::tool_error`]: its
//! text as the content too, then a `MESSAGES_SNAPSHOT` carrying `error`, which
//! `TOOL_CALL_RESULT` has no field for); Anthropic gets `is_error`. What a failure means
//! for exactly-once:
//!
//! | failure | the model hears | effect |
//! |---|---|---|
//! | refused URL, connection refused, JSON-RPC error | the error | not executed |
//! | HTTP error, garbage, over 8 MiB | the error | done (the server answered) |
//! | timeout or broken answer after sending | nothing: the run fails | in doubt, re-driven under the same key |
//!
//! **Security.** Each server gets its own credential: a bearer token
//! ([`McpServer::bearer`]) or an access token from its authorization server
//! ([`McpServer::client_credentials`]: OAuth client credentials with the server's URL as
//! `resource` and the audience as `audience`, HTTP Basic client authentication, the token
//! kept per instance until 30 s before it expires and replaced when the server answers
//! 401, the refused request then sent once more); the caller's token is never forwarded.
//! A token endpoint that fails is a call not sent. The token endpoint passes the same
//! outbound guard as the server. Hosts send through their outbound guard (https,
//! no private, loopback or link-local addresses unless loopback is allowed for tests,
//! no redirects, no proxy, capped bodies). Tool descriptions and results are the
//! server's text: they reach the model as tool descriptions and tool messages, never as
//! part of the system prompt.
//!
//! **Why a client of our own rather than `rmcp`.** The client is the few messages an
//! agent needs (`server/discover` or `initialize` and `notifications/initialized`,
//! `tools/list`, `tools/call`)
//! over the host's one outbound client ([`handoff_core::outbound::Outbound`]), so the
//! same code runs on every host: natively over the `ureq` client and guarded resolver
//! the A2A client uses, on Workers over `fetch`. `rmcp` (3.11, the official SDK) needs tokio's runtime in any build
//! (`rt`, `time`, `macros`): its Streamable HTTP client runs as a task started with
//! `tokio::spawn` and times requests with `tokio::time`, which a Worker does not have,
//! and its ready-made HTTP side is `reqwest`, a second HTTP and TLS stack beside `ureq`
//! on native hosts. The Worker's wasm is already about 1.35 MB gzipped, so it gets
//! the same small client, over `fetch`. What this client leaves out (sampling and roots,
//! a session revision's elicitation sent on the call's stream, the standalone GET stream,
//! resources, prompts, the tasks extension) an agent's tool loop does not use.

mod http;
pub mod input;
pub mod jsonrpc;
pub mod names;
mod oauth;
pub mod protocol;
pub mod result;
pub mod resume;
mod server;
mod session;
mod tools;

pub use http::MAX_ANSWER_BYTES;
pub use input::METADATA_KEY;
pub use names::offered_name;
pub use oauth::{ClientCredentials, EXPIRY_MARGIN_MS};
pub use protocol::{PROTOCOL_VERSION, SESSION_PROTOCOL_VERSION};
pub use result::{CallOutcome, Called, InputAnswers, InputRequired, MAX_RESULT_BYTES};
pub use server::McpServer;
pub use session::{ListedTool, McpConnection, McpError};
pub use tools::{CALL_TIMEOUT_MS, LIST_TIMEOUT_MS};
pub(crate) use tools::{from_interrupt, offered};
