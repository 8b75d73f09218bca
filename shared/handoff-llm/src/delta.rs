//! The one vocabulary both provider dialects are parsed into.

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
    /// Token counts (may come more than once; later counts add to earlier ones).
    Usage(Usage),
}

/// Why a model stopped its turn.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// Token counts of a turn, as AG-UI's `TokenUsage` counts them: the parts (reasoning,
/// cached and cache-write input) are included in the totals, and a count the provider did
/// not report stays `None` (never 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Prompt tokens, cached ones included.
    pub input_tokens: Option<u64>,
    /// Generated tokens, reasoning included.
    pub output_tokens: Option<u64>,
    /// Of the output, tokens spent reasoning.
    pub reasoning_tokens: Option<u64>,
    /// Of the input, tokens read from the provider's cache.
    pub cached_input_tokens: Option<u64>,
    /// Of the input, tokens written to the provider's cache.
    pub cache_write_input_tokens: Option<u64>,
}

impl Usage {
    /// Adds `other` (providers report input and output in separate frames).
    pub fn add(&mut self, other: Usage) {
        let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
        };
        self.input_tokens = sum(self.input_tokens, other.input_tokens);
        self.output_tokens = sum(self.output_tokens, other.output_tokens);
        self.reasoning_tokens = sum(self.reasoning_tokens, other.reasoning_tokens);
        self.cached_input_tokens = sum(self.cached_input_tokens, other.cached_input_tokens);
        self.cache_write_input_tokens = sum(
            self.cache_write_input_tokens,
            other.cache_write_input_tokens,
        );
    }

    /// Whether any count was reported.
    pub fn is_reported(&self) -> bool {
        *self != Usage::default()
    }

    /// As AG-UI reports it, labelled with the provider and model; `totalTokens` when both
    /// totals are known.
    pub fn to_token_usage(&self, provider: &str, model: &str) -> agui_protocol::TokenUsage {
        agui_protocol::TokenUsage {
            provider: Some(provider.to_owned()),
            model: Some(model.to_owned()),
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            total_tokens: self
                .input_tokens
                .zip(self.output_tokens)
                .map(|(i, o)| i.saturating_add(o)),
            reasoning_tokens: self.reasoning_tokens,
            cached_input_tokens: self.cached_input_tokens,
            cache_write_input_tokens: self.cache_write_input_tokens,
        }
    }
}

/// What a parser returns for one frame.
pub(crate) type Parsed = Result<Vec<ModelDelta>, ModelError>;
