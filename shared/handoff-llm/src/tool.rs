//! Backend tools: what the model may call on the server, and how a call that needs a
//! human's approval becomes an interrupt (see the crate docs of [`crate::LlmAgent`]).

use std::future::Future;
use std::sync::Arc;

use agui_protocol::{Interrupt, Metadata, Tool, ToolCallId};
use futures::future::BoxFuture;
use handoff_core::{ApprovalPolicy, ApprovalSource, EffectFailure, RaisedInterrupt, RunContext};
use serde_json::{Value, json};

use crate::mcp::InputAnswers;

type Handler =
    Arc<dyn Fn(Value, String) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync>;

/// The retry of a call that asked for input (MCP tools): the arguments first sent, the
/// answers, the idempotency key.
pub(crate) type RetryHandler = Arc<
    dyn Fn(Value, InputAnswers, String) -> BoxFuture<'static, Result<Value, ToolError>>
        + Send
        + Sync,
>;

/// Why a backend tool's handler failed, as far as exactly-once is concerned.
///
/// A plain `String` (or `&str`) error converts to [`ToolError::InDoubt`]: the call may
/// have acted, so an approval that ran it stays pinned and its retry calls again under
/// the same idempotency key. Say [`ToolError::NotExecuted`] when nothing was done (bad
/// arguments, a refusal before any request): the model hears the error as the tool's
/// result and the run goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolError {
    /// Nothing was done.
    NotExecuted(String),
    /// It may have acted (a timeout after sending, an unknown outcome).
    InDoubt(String),
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolError::NotExecuted(m) | ToolError::InDoubt(m) => f.write_str(m),
        }
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::InDoubt(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::InDoubt(message.to_owned())
    }
}

impl EffectFailure for ToolError {
    fn not_executed(&self) -> bool {
        matches!(self, ToolError::NotExecuted(_))
    }
}

/// The approval policy of one call, from its arguments.
type PolicyFor = Arc<dyn Fn(&Value) -> ApprovalPolicy + Send + Sync>;

/// How a backend tool's calls are approved.
#[derive(Clone)]
pub(crate) enum Approval {
    /// The same policy for every call.
    Fixed(ApprovalPolicy, ApprovalSource),
    /// A policy per call, from its arguments (asked again for edited arguments).
    ByArgs(PolicyFor),
}

impl Approval {
    fn policy(&self, args: &Value) -> ApprovalPolicy {
        match self {
            Approval::Fixed(policy, _) => policy.clone(),
            Approval::ByArgs(policy) => policy(args),
        }
    }
    fn source(&self) -> ApprovalSource {
        match self {
            Approval::Fixed(_, source) => *source,
            Approval::ByArgs(_) => ApprovalSource::BackendToolByArgs,
        }
    }
}

/// A tool the agent executes itself.
#[derive(Clone)]
pub struct BackendTool {
    pub(crate) spec: Tool,
    pub(crate) approval: Option<Approval>,
    pub(crate) handler: Handler,
    /// A string result is the tool message's text as is, not a JSON string (MCP tools).
    pub(crate) text_result: bool,
    /// Stored with its approval interrupts (an MCP tool's server and name, so an approved
    /// call runs even when the server cannot be listed at the answer).
    pub(crate) interrupt_metadata: Option<Metadata>,
    /// Retries a call whose answer asked for input (an MCP tool's `input_required`).
    pub(crate) retry: Option<RetryHandler>,
}

impl BackendTool {
    /// A tool named `name` whose arguments follow the JSON Schema `parameters`;
    /// `handler` gets the arguments and the idempotency key to hand downstream, and fails
    /// with a [`ToolError`] (`?` on a `String` error gives an in-doubt one).
    pub fn new<F, Fut>(name: &str, description: &str, parameters: Value, handler: F) -> Self
    where
        F: Fn(Value, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        let spec = serde_json::from_value(json!({
            "name": name, "description": description, "parameters": parameters,
        }))
        .expect("a tool spec always deserializes");
        BackendTool {
            spec,
            approval: None,
            handler: Arc::new(move |args, key| Box::pin(handler(args, key))),
            text_result: false,
            interrupt_metadata: None,
            retry: None,
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// A string result goes out as the text itself (an MCP result already is text).
    pub(crate) fn text_result(mut self) -> Self {
        self.text_result = true;
        self
    }

    /// How a call that asked for input is retried.
    pub(crate) fn retrying(mut self, retry: RetryHandler) -> Self {
        self.retry = Some(retry);
        self
    }

    /// Metadata its approval interrupts carry (stored with the pending interrupt; merged
    /// into theirs, never in place of their approval policy, which is a typed field).
    pub(crate) fn interrupt_metadata(mut self, metadata: Metadata) -> Self {
        self.interrupt_metadata = Some(metadata);
        self
    }

    /// The approval interrupt for `call` with `args` (the only place a model's tool call
    /// becomes one): its policy, chosen for these arguments, is the raised interrupt's
    /// typed field, so nothing added after it (metadata) can drop it.
    pub(crate) fn approval_interrupt(
        &self,
        approval: &Approval,
        call: &ToolCallId,
        raw_args: &str,
        args: &Value,
    ) -> RaisedInterrupt {
        let mut interrupt = Interrupt::new(format!("int-{call}"), "tool_call")
            .with_message(format!("Allow {} with {raw_args}?", self.spec.name))
            .with_tool_call(call.clone())
            .with_response_schema(approval_schema(self.parameters()));
        if let Some(metadata) = &self.interrupt_metadata {
            interrupt = interrupt.with_metadata(metadata.clone());
        }
        RaisedInterrupt::approval_from(approval.source(), interrupt, approval.policy(args))
    }

    /// The policy a call of this tool with `args` is raised under, when it needs approval.
    pub(crate) fn policy_for(&self, args: &Value) -> Option<ApprovalPolicy> {
        self.approval.as_ref().map(|a| a.policy(args))
    }

    /// Like [`BackendTool::requiring_approval`], naming what kind of tool it is.
    pub(crate) fn requiring_approval_as(
        mut self,
        policy: ApprovalPolicy,
        source: ApprovalSource,
    ) -> Self {
        self.approval = Some(Approval::Fixed(policy, source));
        self
    }

    /// The tool message's content for `result`.
    pub(crate) fn content(&self, result: &Value) -> String {
        match result {
            Value::String(text) if self.text_result => text.clone(),
            other => other.to_string(),
        }
    }

    /// Sends `result` of call `call` as its tool message. A text-result tool (MCP) answers
    /// with text on success and `{"error": text}` when it failed: that is the tool
    /// message's `error` (and its content), not JSON for the model to read.
    pub(crate) fn report(&self, ctx: &mut RunContext, call: &ToolCallId, result: &Value) {
        let failed = result.get("error").and_then(Value::as_str);
        match failed {
            Some(error) if self.text_result => {
                ctx.tool_error(call, error.to_owned(), error);
            }
            _ => {
                ctx.tool_result(call, self.content(result));
            }
        }
    }

    /// Each call waits for a human's approval (an interrupt) under `policy`: who may
    /// approve, and which arguments an `editedArgs` answer may change and how. The
    /// engine enforces it on every route before the answer is accepted; with
    /// `ApprovalPolicy::new()` the thread's owner approves and no edit is allowed.
    #[must_use]
    pub fn requiring_approval(self, policy: ApprovalPolicy) -> Self {
        self.requiring_approval_as(policy, ApprovalSource::BackendTool)
    }

    /// Like [`BackendTool::requiring_approval`], with the policy chosen per call from
    /// its arguments (e.g. a second approver above an amount). An answer's `editedArgs`
    /// are held to the policy for the edited arguments as well as the one the call was
    /// raised under (the stricter applies), so an edit cannot cross into a more lenient
    /// policy.
    #[must_use]
    pub fn requiring_approval_by(
        mut self,
        policy: impl Fn(&Value) -> ApprovalPolicy + Send + Sync + 'static,
    ) -> Self {
        self.approval = Some(Approval::ByArgs(Arc::new(policy)));
        self
    }

    /// The tool's parameters schema (`{"type":"object"}` when it names none).
    pub(crate) fn parameters(&self) -> Value {
        self.spec
            .parameters
            .clone()
            .unwrap_or_else(|| json!({ "type": "object" }))
    }
}

/// What an approval answer for `tool` may carry: `editedArgs`, when present, must fit the
/// tool's own schema (checked before anything is written, like the approval policy).
pub fn approval_schema(parameters: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "approved": { "type": "boolean" },
            "editedArgs": parameters
        },
        "required": ["approved"]
    })
}
