//! The one vocabulary both provider dialects are parsed into.

use agui_protocol::TokenUsage;

use crate::error::ModelError;

/// One increment of a model's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelDelta {
    /// Answer text.
    Text(String),
    /// Reasoning ("thinking") text.
    Reasoning(String),
    /// A tool call begins: `index` keys its later argument fragments.
    ToolCallStart {
        /// The provider's index (OpenAI `tool_calls[].index`, Anthropic block index).
        index: u32,
        /// The provider's call id.
        id: String,
        /// The tool.
        name: String,
    },
    /// A fragment of a tool call's JSON arguments.
    ToolCallArgs {
        /// Which call.
        index: u32,
        /// The fragment, as sent.
        fragment: String,
    },
    /// Why the model stopped.
    Finish(FinishReason),
    /// Token counts, unlabelled (may come more than once; later counts add to earlier
    /// ones). As AG-UI counts them: the parts (reasoning, cached and cache-write input)
    /// are included in the totals, and a count the provider did not report stays `None`
    /// (never 0).
    Usage(TokenUsage),
}

/// Why a model stopped its turn.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FinishReason {
    /// Done talking.
    Stop,
    /// It wants its tool calls executed.
    ToolCalls,
    /// It hit the output token limit.
    Length,
    /// A content filter stopped it.
    ContentFilter,
    /// Anything else the provider said.
    Other(String),
}

impl FinishReason {
    /// From OpenAI's `finish_reason` or Anthropic's `stop_reason`.
    pub fn parse(reason: &str) -> Self {
        match reason {
            "stop" | "end_turn" | "stop_sequence" => FinishReason::Stop,
            "tool_calls" | "tool_use" | "function_call" => FinishReason::ToolCalls,
            "length" | "max_tokens" => FinishReason::Length,
            "content_filter" | "refusal" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_owned()),
        }
    }
}

/// What a parser returns for one frame.
pub(crate) type Parsed = Result<Vec<ModelDelta>, ModelError>;
