//! Model providers for Handoff agents, without I/O.
//!
//! A model answers a turn as a stream of server-sent events in its provider's dialect.
//! This crate turns both dialects into one vocabulary and that into AG-UI:
//!
//! - [`openai`]: OpenAI-compatible Chat Completions with `stream: true` (OpenAI, Azure
//!   OpenAI, Groq, vLLM, Ollama, LM Studio, Workers AI): the request body and a
//!   [`openai::ChunkParser`] for `data:` chunks (text, index-keyed tool call fragments,
//!   reasoning, `finish_reason`, usage, error frames).
//! - [`anthropic`]: Anthropic Messages streaming: the request body and an
//!   [`anthropic::EventParser`] (`message_start`, `content_block_*` with text, input JSON
//!   and thinking deltas, `message_delta`, `ping`, `error`).
//! - [`mcp`]: tools from remote MCP servers over Streamable HTTP
//!   (`LlmAgent::mcp(McpServer::streamable_http(name, url).bearer(token))`), offered as
//!   `{server}__{tool}`, approved and run exactly once like backend tools.
//! - [`ModelDelta`]: what both parsers produce.
//! - [`TurnEmitter`]: streams deltas into a run as they arrive (`TEXT_MESSAGE_*`,
//!   `TOOL_CALL_*` with arguments forwarded as they come, `REASONING_*`) and returns the
//!   assembled turn.
//! - [`ModelError`]: provider and HTTP failures with the stable codes a run ends with
//!   (`MODEL_RATE_LIMITED`, `MODEL_UNAVAILABLE`, `MODEL_ERROR`); the provider's own text
//!   is logged, never sent to the client.
//!
//! An agent that is a model with tools, served by any host (hand it the host's one
//! outbound client, [`handoff_core::outbound::Outbound`], for the operator's endpoints:
//! `handoff::outbound::UreqOutbound::operator()` natively,
//! `handoff::outbound::FetchOutbound::operator()` on Workers):
//!
//! ```
//! use std::sync::Arc;
//! use handoff_core::ApprovalPolicy;
//! use handoff_core::outbound::Outbound;
//! use handoff_llm::{BackendTool, LlmAgent, Provider};
//! use serde_json::json;
//!
//! fn support_agent(client: Arc<dyn Outbound>) -> Option<LlmAgent> {
//!     // OPENAI_API_KEY / OPENAI_BASE_URL, as the provider's own SDK reads them.
//!     let provider = Provider::from_lookup("openai", None, |k| std::env::var(k).ok())?;
//!     let order = json!({ "type": "object", "properties": { "orderId": { "type": "string" } },
//!                         "required": ["orderId"] });
//!     Some(
//!         LlmAgent::new("support", provider, client)
//!             .system("You handle refunds. Look the order up first.")
//!             .tool(BackendTool::new("get_order", "Look an order up", order.clone(),
//!                 |args, _key| async move { Ok(json!({ "orderId": args["orderId"], "cents": 1200 })) }))
//!             // Runs once, and only after someone with the role `approver` other than
//!             // the requester approved it (a `tool_call` interrupt); an edit may not
//!             // change the order.
//!             .tool(BackendTool::new("refund_order", "Refund an order", order,
//!                 |args, idempotency_key| async move {
//!                     Ok(json!({ "refunded": args["orderId"], "key": idempotency_key }))
//!                 })
//!                 .requiring_approval(
//!                     ApprovalPolicy::new().role("approver").not_requester().fixed("orderId"),
//!                 )),
//!     )
//! }
//! ```
//!
//! Token usage goes out on the run's `RUN_FINISHED` (or `RUN_ERROR`) as AG-UI's `usage`:
//! one entry per provider and model (`{provider, model, inputTokens, outputTokens,
//! totalTokens, reasoningTokens?, cachedInputTokens?, cacheWriteInputTokens?}`), counting
//! every model call of the run, those before a failure included.
//!
//! ```
//! use handoff_llm::{ModelDelta, openai::ChunkParser};
//!
//! let mut parser = ChunkParser::default();
//! let deltas = parser
//!     .parse(r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#)
//!     .unwrap();
//! assert_eq!(deltas, vec![ModelDelta::Text("Hel".into())]);
//! assert!(parser.parse("[DONE]").unwrap().is_empty());
//! ```

mod agent;
mod answers;
pub mod anthropic;
mod call;
mod client;
mod delta;
mod emit;
mod error;
pub mod mcp;
pub mod openai;
pub mod sse;
mod telemetry;
mod tool;

pub use agent::LlmAgent;
pub use client::{ModelStream, Provider, stream};
pub use delta::{FinishReason, ModelDelta};
pub use emit::{ModelToolCall, ModelTurn, TurnEmitter};
pub use error::ModelError;
pub use sse::ProviderStream;
pub use telemetry::content::{
    CAPTURE_MESSAGE_CONTENT, capture_message_content, capture_setting, set_capture_message_content,
};
pub use tool::{BackendTool, ToolError, approval_schema};
