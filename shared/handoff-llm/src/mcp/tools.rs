//! A run's MCP tools as [`BackendTool`]s, so they go through the same loop as the
//! agent's own: arguments checked against the listed `inputSchema`, approvals as
//! `tool_call` interrupts under the server's [`handoff_core::ApprovalPolicy`], and each call
//! inside `ctx.effect` under the key `tool-{toolCallId}`, so a replayed, retried or
//! re-driven run never calls the server twice for one tool call.

use std::sync::Arc;

use agui_protocol::{Interrupt, Metadata};
use futures::future::join_all;
use handoff_core::{ApprovalSource, RunContext, Runtime};
use serde_json::{Value, json};

use super::input::{self, METADATA_KEY};
use super::names::offered_name;
use super::result::{Called, InputAnswers};
use super::session::{ListedTool, McpConnection, McpError};
use crate::tool::RetryHandler;
use crate::{BackendTool, ToolError};
use handoff_core::outbound::Outbound;

/// Longest wait for a server's tool list.
pub const LIST_TIMEOUT_MS: u64 = 10_000;
/// Longest wait for a tool call (less when the run's host deadline is sooner).
pub const CALL_TIMEOUT_MS: u64 = 60_000;

/// At most `cap` ms, and not past `deadline`; `None` when the deadline has passed.
fn budget(now_ms: u64, deadline_ms: Option<u64>, cap: u64) -> Option<u64> {
    match deadline_ms {
        Some(deadline) if deadline <= now_ms => None,
        Some(deadline) => Some(cap.min(deadline - now_ms)),
        None => Some(cap),
    }
}

/// The tools of every server that listed them, named `{server}__{tool}`; a server that
/// failed is left out of this run with one log line (its name and the error, never its
/// token), and listed again at the next run. Names already `taken` are not offered twice.
pub(crate) async fn offered(
    connections: &[Arc<McpConnection>],
    http: Option<&Arc<dyn Outbound>>,
    ctx: &RunContext,
    taken: &[BackendTool],
) -> Vec<BackendTool> {
    if connections.is_empty() {
        return Vec::new();
    }
    let Some(http) = http else {
        tracing::warn!(
            "MCP servers are set but the agent has no MCP transport (LlmAgent::mcp_http)"
        );
        return Vec::new();
    };
    let deadline = ctx.deadline_ms();
    let Some(timeout) = budget(ctx.now_ms(), deadline, LIST_TIMEOUT_MS) else {
        return Vec::new();
    };
    for connection in connections {
        connection.set_sleep(ctx.runtime().sleep.clone());
    }
    let listings = join_all(
        connections
            .iter()
            .map(|c| async move { (c, c.tools(http.as_ref(), ctx.now_ms(), timeout).await) }),
    )
    .await;
    let mut offered: Vec<BackendTool> = Vec::new();
    for (connection, listing) in listings {
        let server = connection.server().name().to_owned();
        let tools = match listing {
            Ok(tools) => tools,
            Err(error) => {
                tracing::warn!(server = %server, %error, "MCP server's tools not offered in this run: listing failed");
                continue;
            }
        };
        for tool in tools {
            let name = offered_name(&server, &tool.name);
            if taken.iter().chain(&offered).any(|t| t.name() == name) {
                tracing::warn!(server = %server, tool = %tool.name, offered = %name, "MCP tool not offered: its name is taken");
                continue;
            }
            offered.push(backend_tool(
                &name,
                connection.clone(),
                http.clone(),
                tool,
                ctx.runtime().clone(),
                deadline,
            ));
        }
    }
    offered
}

/// The MCP tool an approval interrupt was raised for (its `metadata`, stored with the
/// pending interrupt on the server), as a backend tool, for an answer that arrives while
/// its server cannot be listed. The answer was checked already: the engine held
/// `editedArgs` to the interrupt's `responseSchema` (the tool's schema then) and policy.
pub(crate) fn from_interrupt(
    connections: &[Arc<McpConnection>],
    http: Option<&Arc<dyn Outbound>>,
    ctx: &RunContext,
    interrupt: &Interrupt,
    offered: &str,
) -> Option<BackendTool> {
    let named = interrupt.metadata.as_ref()?.get(METADATA_KEY)?;
    let (server, tool) = (named.get("server")?.as_str()?, named.get("tool")?.as_str()?);
    let connection = connections.iter().find(|c| c.server().name() == server)?;
    // The offered name must still be this tool's (a renamed server is not this tool).
    if offered_name(server, tool) != offered {
        return None;
    }
    let input_schema = interrupt
        .response_schema
        .as_deref()
        .and_then(|s| s.pointer("/properties/editedArgs"))
        .cloned()
        .unwrap_or_else(|| json!({ "type": "object" }));
    let listed = ListedTool {
        name: tool.to_owned(),
        description: String::new(),
        input_schema,
    };
    Some(backend_tool(
        offered,
        connection.clone(),
        http?.clone(),
        listed,
        ctx.runtime().clone(),
        ctx.deadline_ms(),
    ))
}

/// One call of `tool` (a retry when `answers` are given), as the value its effect
/// records: the result's text, `{"error": …}` when it failed but the server answered,
/// or the server's question ([`super::input::recorded`]).
#[allow(clippy::too_many_arguments)]
async fn invoke(
    connection: Arc<McpConnection>,
    http: Arc<dyn Outbound>,
    runtime: Runtime,
    deadline: Option<u64>,
    tool: String,
    args: Value,
    answers: Option<InputAnswers>,
    key: String,
) -> Result<Value, ToolError> {
    let now_ms = runtime.now_ms();
    let timeout = budget(now_ms, deadline, CALL_TIMEOUT_MS).ok_or_else(|| {
        ToolError::NotExecuted("no time left in this run for the call".to_owned())
    })?;
    let outcome = connection
        .call(
            http.as_ref(),
            &tool,
            args.clone(),
            &key,
            answers.as_ref(),
            now_ms,
            timeout,
        )
        .await;
    match outcome {
        Ok(Called::Complete(result)) if result.is_error => Ok(json!({ "error": result.text })),
        Ok(Called::Complete(result)) => Ok(Value::String(result.text)),
        Ok(Called::InputRequired(question)) => Ok(input::recorded(&question, &args)),
        Err(error @ (McpError::NotSent(_) | McpError::Rpc(..))) => {
            Err(ToolError::NotExecuted(error.to_string()))
        }
        Err(McpError::InDoubt(why)) => Err(ToolError::InDoubt(why)),
        // It answered, so it is done with the call: the model hears what came.
        Err(McpError::Unusable(why)) => Ok(json!({ "error": why })),
    }
}

fn backend_tool(
    name: &str,
    connection: Arc<McpConnection>,
    http: Arc<dyn Outbound>,
    tool: ListedTool,
    runtime: Runtime,
    deadline: Option<u64>,
) -> BackendTool {
    let approval = connection.server().approval_for(&tool.name);
    let connection_name = connection.server().name().to_owned();
    let mcp_name = tool.name.clone();
    let (c, h, r, n) = (
        connection.clone(),
        http.clone(),
        runtime.clone(),
        mcp_name.clone(),
    );
    let handler = move |args: Value, key: String| {
        invoke(
            c.clone(),
            h.clone(),
            r.clone(),
            deadline,
            n.clone(),
            args,
            None,
            key,
        )
    };
    let retry: RetryHandler = Arc::new(move |args, answers, key| {
        Box::pin(invoke(
            connection.clone(),
            http.clone(),
            runtime.clone(),
            deadline,
            mcp_name.clone(),
            args,
            Some(answers),
            key,
        ))
    });
    let mut metadata = Metadata::new();
    metadata.insert(
        METADATA_KEY.to_owned(),
        json!({ "server": connection_name, "tool": tool.name }),
    );
    let backend = BackendTool::new(name, &tool.description, tool.input_schema, handler)
        .text_result()
        .interrupt_metadata(metadata)
        .retrying(retry);
    match approval {
        Some(policy) => backend.requiring_approval_as(policy, ApprovalSource::McpTool),
        None => backend,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_stop_at_the_cap_or_the_deadline() {
        assert_eq!(budget(1_000, None, CALL_TIMEOUT_MS), Some(CALL_TIMEOUT_MS));
        assert_eq!(budget(1_000, Some(6_000), CALL_TIMEOUT_MS), Some(5_000));
        assert_eq!(
            budget(1_000, Some(900_000), LIST_TIMEOUT_MS),
            Some(LIST_TIMEOUT_MS)
        );
        assert_eq!(budget(6_000, Some(6_000), CALL_TIMEOUT_MS), None);
    }
}
