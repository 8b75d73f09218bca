//! The demo's LLM mode (`DEMO_LLM=openai|anthropic`): the same refund flow, but a model
//! chooses the tools. `get_order` runs on its own; `refund_order` needs an approval (the
//! interrupt comes from the tool's policy, not from the model), and the approved refund
//! moves the ledger exactly once.

use std::sync::Arc;

use async_trait::async_trait;
use handoff_core::EffectFailure;
use handoff_core::outbound::Outbound;
use handoff_core::{
    Agent, AgentError, CoreError, Decision, Finish, Readiness, RunContext, Runtime,
};
use handoff_llm::{BackendTool, LlmAgent, Provider, ToolError};
use serde_json::{Value, json};

use crate::mcp::McpSettings;
use crate::{DemoAgent, DemoConfig, Ledger, Order, refund_policy};

const SYSTEM: &str = "You are the refund desk of an online shop. Look an order up with \
get_order before you propose anything; to refund, call refund_order with the order id and \
the amount in cents (a human approves it). Be brief.";

/// The provider `DEMO_LLM` names (`OPENAI_*` / `ANTHROPIC_*` settings, `DEMO_LLM_MODEL`),
/// or `None` (unset, or no key): the scripted demo.
pub fn provider_from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Option<Provider> {
    let kind = lookup("DEMO_LLM")?;
    Provider::from_lookup(kind.trim(), lookup("DEMO_LLM_MODEL"), lookup)
}

/// The refund flow as a model with two tools over `ledger`; `refund_order` waits for an
/// approval under the scripted demo's [`refund_policy`] (the same rule in both modes).
pub fn refund_agent(
    ledger: Ledger,
    config: &DemoConfig,
    runtime: Runtime,
    provider: Provider,
    client: Arc<dyn Outbound>,
) -> LlmAgent {
    let order_id = json!({ "type": "object", "properties": { "orderId": { "type": "string" } }, "required": ["orderId"] });
    let refund = json!({
        "type": "object",
        "properties": { "orderId": { "type": "string" }, "amountCents": { "type": "integer", "minimum": 1 } },
        "required": ["orderId", "amountCents"]
    });
    let lookup_ledger = ledger.clone();
    let lookup_runtime = runtime.clone();
    let hang = config.hang_before_lookup;
    LlmAgent::new("refund-demo", provider, client)
        .system(SYSTEM)
        .tool(BackendTool::new("get_order", "Look an order up (item, amount, refunds so far)", order_id, move |args, _key| {
            let (ledger, runtime) = (lookup_ledger.clone(), lookup_runtime.clone());
            async move {
                if hang {
                    std::future::pending::<()>().await;
                }
                // A lookup changes nothing: every failure is one the model may hear.
                let id = order_arg(&args).map_err(ToolError::NotExecuted)?;
                let account = ledger.account(&id, runtime.now_ms()).await.map_err(|e| ToolError::NotExecuted(e.to_string()))?;
                Ok::<_, ToolError>(json!({ "order": Order::lookup(&id), "refundedCents": account.refunded_cents }))
            }
        }))
        .tool(
            BackendTool::new("refund_order", "Refund an order (needs a human's approval)", refund, move |args, key| {
                let (ledger, runtime) = (ledger.clone(), runtime.clone());
                async move {
                    let id = order_arg(&args).map_err(ToolError::NotExecuted)?;
                    let cents = args["amountCents"].as_u64().ok_or_else(|| ToolError::NotExecuted("amountCents must be a positive integer".into()))?;
                    // Refused before any money moved, or a store failure after which it may have.
                    let account = ledger.refund(&id, cents, &key, runtime.now_ms()).await.map_err(|e| match e {
                        e if e.not_executed() => ToolError::NotExecuted(e.to_string()),
                        e => ToolError::InDoubt(e.to_string()),
                    })?;
                    Ok::<_, ToolError>(json!({ "status": "refunded", "orderId": id, "amountCents": cents, "refunds": account.refunds }))
                }
            })
            .requiring_approval_by({
                let config = config.clone();
                move |args| refund_policy(&config, args["amountCents"].as_u64().unwrap_or(u64::MAX))
            }),
        )
}

fn order_arg(args: &Value) -> Result<String, String> {
    args["orderId"]
        .as_str()
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| "orderId is required".to_owned())
}

/// The demo a host serves: model-driven when `DEMO_LLM` names a provider with a key
/// (`client` then reaches the model), else `scripted`. In LLM mode the agent also
/// offers the tools of the `HANDOFF_MCP_SERVERS` ([`crate::mcp`]), reached through
/// `mcp(allow_loopback)`, the host's guarded transport. A malformed `HANDOFF_MCP_*`
/// variable is an error naming it (the host refuses to start).
pub fn choose(
    scripted: DemoAgent,
    runtime: Runtime,
    lookup: impl Fn(&str) -> Option<String>,
    client: impl FnOnce() -> Arc<dyn Outbound>,
    mcp: impl FnOnce(bool) -> Arc<dyn Outbound>,
) -> Result<Demo, String> {
    let settings = McpSettings::from_lookup(&lookup)?;
    Ok(match provider_from_lookup(lookup) {
        Some(provider) => {
            let ledger = scripted.ledger().clone();
            let mut agent = refund_agent(ledger, scripted.config(), runtime, provider, client());
            if !settings.servers.is_empty() {
                agent = agent.mcp_http(mcp(settings.allow_loopback));
                // Shared: the Worker builds this agent per request, and an isolate keeps
                // its MCP sessions, tool lists and tokens across them.
                for server in settings.servers {
                    agent = agent.mcp_shared(server);
                }
            }
            Demo::Llm(Box::new(agent))
        }
        None => Demo::Scripted(scripted),
    })
}

/// The demo a host serves: scripted, or model-driven when `DEMO_LLM` names a provider.
pub enum Demo {
    /// The scripted refund / return agent.
    Scripted(DemoAgent),
    /// The model-driven refund agent.
    Llm(Box<LlmAgent>),
}

#[async_trait]
impl Agent for Demo {
    fn name(&self) -> &str {
        match self {
            Demo::Scripted(agent) => agent.name(),
            Demo::Llm(agent) => agent.name(),
        }
    }

    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        match self {
            Demo::Scripted(agent) => agent.run(ctx).await,
            Demo::Llm(agent) => agent.run(ctx).await,
        }
    }

    async fn readiness(
        &self,
        thread_id: &str,
        decision: &Decision,
    ) -> Result<Readiness, CoreError> {
        match self {
            Demo::Scripted(agent) => agent.readiness(thread_id, decision).await,
            Demo::Llm(agent) => agent.readiness(thread_id, decision).await,
        }
    }
}
