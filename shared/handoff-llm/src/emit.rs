//! Streaming a model's turn into a run as it arrives.

use agui_protocol::event::{
    ReasoningEnd, ReasoningMessageContent, ReasoningMessageEnd, ReasoningMessageStart,
    ReasoningStart,
};
use agui_protocol::{MessageId, TokenUsage, ToolCallId};
use handoff_core::RunContext;

use crate::delta::{FinishReason, ModelDelta};
use crate::error::ModelError;

/// One tool call the model made this turn, with its AG-UI id.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ModelToolCall {
    /// The AG-UI tool call id (also what the next request to the model uses).
    pub id: ToolCallId,
    /// The tool.
    pub name: String,
    /// The JSON arguments as the model wrote them.
    pub arguments: String,
}

/// A whole turn, once its stream ended (journaled as it is: see [`crate::LlmAgent`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ModelTurn {
    /// The assistant text message, if the model said anything.
    pub message_id: Option<MessageId>,
    /// Its text.
    pub text: String,
    /// The calls, in the model's order.
    pub tool_calls: Vec<ModelToolCall>,
    /// Why it stopped (`None`: the stream ended without saying).
    pub finish_reason: Option<FinishReason>,
    /// Token counts, unlabelled; `totalTokens` when both totals are known.
    pub usage: TokenUsage,
}

struct OpenCall {
    index: u32,
    call: ModelToolCall,
}

/// Applies a turn's deltas to a run: `TEXT_MESSAGE_*`, `TOOL_CALL_*` (arguments
/// forwarded fragment by fragment) and `REASONING_*`, every item closed by [`finish`].
///
/// [`finish`]: TurnEmitter::finish
#[derive(Default)]
pub struct TurnEmitter {
    text: Option<MessageId>,
    said: String,
    said_before_calls: Option<MessageId>,
    reasoning: Option<(MessageId, MessageId)>,
    calls: Vec<OpenCall>,
    finish_reason: Option<FinishReason>,
    usage: TokenUsage,
}

impl TurnEmitter {
    /// A turn with nothing streamed yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Streams one delta into the run.
    pub fn apply(&mut self, ctx: &mut RunContext, delta: ModelDelta) -> Result<(), ModelError> {
        match delta {
            ModelDelta::Text(text) => {
                self.end_reasoning(ctx);
                let id = match &self.text {
                    Some(id) => id.clone(),
                    None => {
                        let id = ctx.text_start();
                        self.text = Some(id.clone());
                        id
                    }
                };
                ctx.text_delta(&id, &text);
                self.said.push_str(&text);
            }
            ModelDelta::Reasoning(text) => {
                let (_, message) = match &self.reasoning {
                    Some(ids) => ids.clone(),
                    None => {
                        let span = MessageId::new(ctx.new_id("reasoning"));
                        let message = MessageId::new(ctx.new_id("msg"));
                        ctx.emit(ReasoningStart::new(span.clone()));
                        ctx.emit(ReasoningMessageStart::new(message.clone()));
                        self.reasoning = Some((span.clone(), message.clone()));
                        (span, message)
                    }
                };
                ctx.emit(ReasoningMessageContent::new(message, text));
            }
            ModelDelta::ToolCallStart { index, name, .. } => {
                self.end_reasoning(ctx);
                // Calls follow the text they belong to: the message ends, they point at it.
                if let Some(text) = self.text.take() {
                    ctx.text_end(&text);
                    self.said_before_calls = Some(text);
                }
                let id = ctx.tool_call_start(&name, self.said_before_calls.as_ref());
                self.calls.push(OpenCall {
                    index,
                    call: ModelToolCall {
                        id,
                        name,
                        arguments: String::new(),
                    },
                });
            }
            ModelDelta::ToolCallArgs { index, fragment } => {
                let Some(open) = self.calls.iter_mut().find(|c| c.index == index) else {
                    return Err(ModelError::Malformed {
                        detail: format!("arguments for tool call {index}, which never started"),
                    });
                };
                ctx.tool_call_args(&open.call.id, &fragment);
                open.call.arguments.push_str(&fragment);
            }
            ModelDelta::Finish(reason) => self.finish_reason = Some(reason),
            ModelDelta::Usage(usage) => self.usage.add(&usage),
        }
        Ok(())
    }

    /// Closes whatever is open and returns the turn.
    pub fn finish(mut self, ctx: &mut RunContext) -> ModelTurn {
        self.end_reasoning(ctx);
        let message_id = match self.text.take() {
            Some(text) => {
                ctx.text_end(&text);
                Some(text)
            }
            None => self.said_before_calls.take(),
        };
        let tool_calls: Vec<ModelToolCall> = self.calls.into_iter().map(|c| c.call).collect();
        for call in &tool_calls {
            ctx.tool_call_end(&call.id);
        }
        let mut usage = self.usage;
        if usage.total_tokens.is_none() {
            usage.total_tokens = usage
                .input_tokens
                .zip(usage.output_tokens)
                .map(|(i, o)| i.saturating_add(o));
        }
        ModelTurn {
            message_id,
            text: self.said,
            tool_calls,
            finish_reason: self.finish_reason,
            usage,
        }
    }

    fn end_reasoning(&mut self, ctx: &mut RunContext) {
        if let Some((span, message)) = self.reasoning.take() {
            ctx.emit(ReasoningMessageEnd::new(message));
            ctx.emit(ReasoningEnd::new(span));
        }
    }
}
