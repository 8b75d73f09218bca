//! The model ↔ tool loop as an [`Agent`].
//!
//! Each step sends the thread's stored history (not the client's copy: a resumed run on
//! another instance continues the same conversation) and the tools to the model, streams
//! its turn into the run, then acts on its tool calls:
//! - a **backend tool**'s arguments are checked against its JSON Schema (a mismatch goes
//!   back to the model, nothing runs), then it runs through `ctx.effect` (once across
//!   retries and instances),
//!   its result goes out as `TOOL_CALL_RESULT` and back to the model;
//! - an **approval-required** backend tool becomes an interrupt (`reason: "tool_call"`,
//!   its `toolCallId`, a `responseSchema` for approve / deny / edited arguments that fit
//!   the tool's schema, and the tool's [`ApprovalPolicy`], which the engine enforces
//!   before the answer is accepted: roles, not the requester, which arguments an edit may
//!   change); the resume runs it once (or not) with the arguments checked against the
//!   tool's schema again, then the loop goes on;
//! - a **frontend tool** (from `RunAgentInput.tools`) ends the run with
//!   `pendingToolCallIds`; the client's next run carries its result.
//!
//! A step limit ends a runaway loop `cancelled`.
//!
//! Each model answer is journaled with the events it streamed (one store write,
//! [`RunContext::record_step`]): a run whose instance dies is finished by another
//! ([`handoff_core::Engine::redrive_due`]), which replays the recorded answers and the
//! recorded tool results instead of calling the model or the tools again.

use std::sync::Arc;

use agui_protocol::{TokenUsage, Tool};
use async_trait::async_trait;
use futures::StreamExt;
use handoff_core::codes::ErrorCode;
use handoff_core::outbound::Outbound;
use handoff_core::schema::SchemaFailure;
use handoff_core::{
    Agent, AgentError, ApprovalPolicy, DoubleText, Finish, RaisedInterrupt, RunContext,
};
use serde_json::{Value, json};

use crate::ModelError;
use crate::client::{self, Provider};
use crate::emit::{ModelTurn, TurnEmitter};
use crate::mcp::{self, McpConnection, McpServer};
use crate::sse::ProviderStream;
use crate::telemetry;
use crate::tool::BackendTool;
use crate::{answers, call};
use tracing::Instrument;

/// An agent that is a model with tools.
pub struct LlmAgent {
    name: String,
    provider: Provider,
    client: Arc<dyn Outbound>,
    system: Option<String>,
    tools: Vec<BackendTool>,
    mcp: Vec<Arc<McpConnection>>,
    mcp_http: Option<Arc<dyn Outbound>>,
    max_steps: usize,
    double_text: Option<DoubleText>,
}

impl LlmAgent {
    /// `name` served by `provider` through the host's outbound `client` (for the
    /// operator's own endpoints: a model's base URL may be a local server).
    pub fn new(name: &str, provider: Provider, client: Arc<dyn Outbound>) -> Self {
        LlmAgent {
            name: name.to_owned(),
            provider,
            client,
            system: None,
            tools: Vec::new(),
            mcp: Vec::new(),
            mcp_http: None,
            max_steps: 8,
            double_text: None,
        }
    }
    /// The system prompt.
    #[must_use]
    pub fn system(mut self, prompt: &str) -> Self {
        self.system = Some(prompt.to_owned());
        self
    }
    /// A backend tool.
    #[must_use]
    pub fn tool(mut self, tool: BackendTool) -> Self {
        self.tools.push(tool);
        self
    }
    /// An MCP server whose tools this agent offers (see [`crate::mcp`]); several may be
    /// added. Needs the host's transport, [`LlmAgent::mcp_http`].
    #[must_use]
    pub fn mcp(mut self, server: McpServer) -> Self {
        self.mcp.push(Arc::new(McpConnection::new(server)));
        self
    }
    /// Like [`LlmAgent::mcp`] for an agent built per request (Workers): the server's
    /// session, tool list and access token are kept by the process (the isolate) and
    /// shared with every agent naming the same server, URL and credential
    /// ([`McpConnection::shared`]).
    #[must_use]
    pub fn mcp_shared(mut self, server: McpServer) -> Self {
        self.mcp.push(Arc::new(McpConnection::shared(server)));
        self
    }
    /// The host's outbound client for MCP servers, behind the outbound guard
    /// (`handoff::outbound::UreqOutbound::guarded` natively,
    /// `handoff::outbound::FetchOutbound::guarded` on Workers).
    #[must_use]
    pub fn mcp_http(mut self, http: Arc<dyn Outbound>) -> Self {
        self.mcp_http = Some(http);
        self
    }
    /// What a message sent while one of this agent's runs is running does (default: the
    /// host's `HANDOFF_DOUBLE_TEXT`, itself reject by default).
    #[must_use]
    pub fn double_text(mut self, policy: DoubleText) -> Self {
        self.double_text = Some(policy);
        self
    }
    /// Model turns per run before the run ends `cancelled` (default 8).
    #[must_use]
    pub fn max_steps(mut self, steps: usize) -> Self {
        self.max_steps = steps.max(1);
        self
    }

    /// One model call, traced as `chat {model}`, and journaled: a re-drive of the run
    /// (its instance died before its end) replays the recorded answer and its events
    /// instead of asking the model again.
    async fn turn(
        &self,
        ctx: &mut RunContext,
        request: Result<http::Request<Vec<u8>>, ModelError>,
    ) -> Result<ModelTurn, AgentError> {
        if let Some(recorded) = ctx.replay_step().await? {
            let turn: ModelTurn = serde_json::from_value(recorded)?;
            self.record_usage(ctx, turn.usage.clone());
            return Ok(turn);
        }
        let mark = ctx.step_mark();
        let turn = self.call_model(ctx, request).await?;
        ctx.record_step(mark, &turn).await?;
        Ok(turn)
    }

    async fn call_model(
        &self,
        ctx: &mut RunContext,
        request: Result<http::Request<Vec<u8>>, ModelError>,
    ) -> Result<ModelTurn, AgentError> {
        let span = telemetry::chat_span(&self.provider, ctx);
        telemetry::chat_input(&span, self.system.as_deref(), ctx.messages());
        let result = self
            .stream_turn(ctx, request, &span)
            .instrument(span.clone())
            .await;
        match &result {
            Ok(turn) => telemetry::chat_ended(&span, turn),
            Err(error) => telemetry::failed(&span, error.code().name),
        }
        result.map_err(|error| error.fail_run(ctx))
    }

    async fn stream_turn(
        &self,
        ctx: &mut RunContext,
        request: Result<http::Request<Vec<u8>>, ModelError>,
        span: &tracing::Span,
    ) -> Result<ModelTurn, ModelError> {
        let started_ms = ctx.now_ms();
        let mut body = client::stream(self.client.as_ref(), request?).await?;
        let mut stream = ProviderStream::new(self.provider.parser());
        let mut emitter = TurnEmitter::new();
        let mut first = true;
        while let Some(chunk) = body.next().await {
            if std::mem::take(&mut first) {
                telemetry::first_chunk(span, started_ms, ctx.now_ms());
            }
            let deltas = chunk.and_then(|bytes| stream.feed(&bytes));
            let applied = deltas
                .and_then(|deltas| deltas.into_iter().try_for_each(|d| emitter.apply(ctx, d)));
            if let Err(error) = applied {
                // What the provider counted before failing is still the run's usage.
                let partial = emitter.finish(ctx);
                self.record_usage(ctx, partial.usage);
                return Err(error);
            }
        }
        let turn = emitter.finish(ctx);
        self.record_usage(ctx, turn.usage.clone());
        Ok(turn)
    }

    /// Adds a model call's usage to the run's, call by call, so a run that fails later
    /// still reports it on its `RUN_ERROR`.
    fn record_usage(&self, ctx: &mut RunContext, mut usage: TokenUsage) {
        if usage != TokenUsage::default() {
            usage.provider = Some(self.provider.name().to_owned());
            usage.model = Some(self.provider.model().to_owned());
            ctx.record_usage(usage);
        }
    }

    /// Acts on the answers to approval interrupts this run resumes; the interrupts of
    /// calls whose server asks for input are returned (the run ends with them).
    async fn apply_answers(
        &self,
        ctx: &mut RunContext,
        tools: &[BackendTool],
    ) -> Result<Vec<RaisedInterrupt>, AgentError> {
        let decisions = ctx.decisions().to_vec();
        let mut raised = Vec::new();
        let (mcp, http) = (&self.mcp, self.mcp_http.as_ref());
        answers::answer_inputs(mcp, http, ctx, tools, &decisions, &mut raised).await?;
        for decision in decisions {
            if mcp::input::attempt_of(&decision.interrupt).is_some() {
                continue;
            }
            let Some(call) = decision.tool_call_id().cloned() else {
                continue;
            };
            let Some((name, arguments)) = ctx
                .find_tool_call(&call)
                .map(|c| (c.function.name.clone(), c.function.arguments.clone()))
            else {
                continue;
            };
            // An MCP tool whose server cannot be listed now is rebuilt from its interrupt.
            let rebuilt = match tools.iter().any(|t| t.spec.name == name) {
                true => None,
                false => mcp::from_interrupt(
                    &self.mcp,
                    self.mcp_http.as_ref(),
                    ctx,
                    &decision.interrupt,
                    &name,
                ),
            };
            let tool = tools
                .iter()
                .find(|t| t.spec.name == name)
                .or(rebuilt.as_ref());
            let content = match tool {
                _ if decision.is_cancelled() => json!({ "status": "cancelled" }),
                _ if !decision.approved() => {
                    json!({ "status": "denied", "message": "the user declined this call" })
                }
                None => json!({ "error": format!("unknown tool {name}") }),
                Some(tool) => {
                    let raw = match decision.edited_args() {
                        Some(edited) => edited.to_string(),
                        None => arguments,
                    };
                    match checked_args(ctx, tool, &raw) {
                        Ok(args) => {
                            let result = call::execute(ctx, &call, tool, args, None).await?;
                            answers::settle(ctx, &call, tool, &result, 0, &mut raised);
                            continue;
                        }
                        Err(problem) => json!({ "error": problem }),
                    }
                }
            };
            ctx.tool_result(&call, content.to_string());
        }
        Ok(raised)
    }
}

#[async_trait]
impl Agent for LlmAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn double_text(&self) -> Option<DoubleText> {
        self.double_text
    }

    fn approval_policy_for(&self, tool: &str, args: &Value) -> Option<ApprovalPolicy> {
        // The agent's own tools: an MCP tool's policy is fixed, and stored with the call.
        self.tools
            .iter()
            .find(|t| t.spec.name == tool)
            .and_then(|t| t.policy_for(args))
    }

    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        // The agent's own tools, then this run's MCP tools (listed, or cached).
        let mut tools = self.tools.clone();
        let listed = mcp::offered(&self.mcp, self.mcp_http.as_ref(), ctx, &tools).await;
        tools.extend(listed);
        let asked = self.apply_answers(ctx, &tools).await?;
        if !asked.is_empty() {
            // A server asks again: the run waits on the human before the model goes on.
            return Ok(Finish::Interrupt(asked));
        }
        let frontend: Vec<Tool> = ctx.input().tool_list().to_vec();
        let mut specs: Vec<Tool> = tools.iter().map(|t| t.spec.clone()).collect();
        specs.extend(frontend.iter().cloned());
        for _ in 0..self.max_steps {
            // A spent token budget ends the run here, with the usage so far.
            ctx.check_budget().await?;
            // The model call may take what is left of the invocation, not more.
            let timeout = ctx
                .deadline_ms()
                .map(|d| d.saturating_sub(ctx.now_ms()).max(1));
            let request =
                self.provider
                    .request(self.system.as_deref(), ctx.messages(), &specs, timeout);
            let turn = self.turn(ctx, request).await?;
            let mut interrupts = Vec::new();
            let mut client_calls = false;
            for call in &turn.tool_calls {
                match tools.iter().find(|t| t.spec.name == call.name) {
                    Some(tool) => {
                        // Arguments that do not fit the tool's schema neither run nor reach a
                        // human: the model hears why and may fix them.
                        let args = match checked_args(ctx, tool, &call.arguments) {
                            Ok(args) => args,
                            Err(problem) => {
                                ctx.tool_result(&call.id, json!({ "error": problem }).to_string());
                                continue;
                            }
                        };
                        if let Some(approval) = &tool.approval {
                            interrupts.push(tool.approval_interrupt(
                                approval,
                                &call.id,
                                &call.arguments,
                                &args,
                            ));
                        } else {
                            let result = call::execute(ctx, &call.id, tool, args, None).await?;
                            answers::settle(ctx, &call.id, tool, &result, 0, &mut interrupts);
                        }
                    }
                    None if frontend.iter().any(|t| t.name == call.name) => client_calls = true,
                    None => {
                        let error = json!({ "error": format!("unknown tool {}", call.name) });
                        ctx.tool_result(&call.id, error.to_string());
                    }
                }
            }
            let done = turn.tool_calls.is_empty() || client_calls || !interrupts.is_empty();
            if done {
                return Ok(if interrupts.is_empty() {
                    Finish::done()
                } else {
                    Finish::Interrupt(interrupts)
                });
            }
        }
        tracing::warn!(agent = %self.name, steps = self.max_steps, "step limit reached; cancelling the run");
        Ok(Finish::Cancelled)
    }
}

/// The model's arguments for `tool`, parsed and checked against its schema.
fn checked_args(ctx: &RunContext, tool: &BackendTool, raw: &str) -> Result<Value, String> {
    let args: Value =
        serde_json::from_str(raw).map_err(|e| format!("arguments are not JSON: {e}"))?;
    ctx.check_schema(&tool.parameters(), &args)
        .map_err(|failure| match failure {
            SchemaFailure::Invalid(why) => {
                format!("arguments do not match the tool's schema: {why}")
            }
            SchemaFailure::Unusable(why) => format!("arguments could not be checked: {why}"),
        })?;
    Ok(args)
}
