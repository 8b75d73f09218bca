//! A tool call's outcome when its MCP server asks for input, and the human's answers to
//! it (see [`crate::mcp::input`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use agui_protocol::ToolCallId;
use handoff_core::outbound::Outbound;
use handoff_core::{AgentError, Decision, RaisedInterrupt, RunContext};
use serde_json::{Value, json};

use crate::call;
use crate::mcp::{self, McpConnection, input};
use crate::tool::{BackendTool, ToolError};

/// Reports `result` of attempt `attempt` of `call`, or, when the server asked for input,
/// adds the interrupts asking it to `raised` (nothing is reported yet: the call is open).
pub(crate) fn settle(
    ctx: &mut RunContext,
    call: &ToolCallId,
    tool: &BackendTool,
    result: &Value,
    attempt: u64,
    raised: &mut Vec<RaisedInterrupt>,
) {
    let Some(pending) = input::pending(result) else {
        tool.report(ctx, call, result);
        return;
    };
    let named = tool
        .interrupt_metadata
        .as_ref()
        .and_then(|m| m.get(mcp::METADATA_KEY))
        .cloned()
        .unwrap_or_else(|| json!({}));
    // Typed and closed by default: the tool's own policy, else the thread's owner.
    let policy = tool.policy_for(&pending.arguments).unwrap_or_default();
    match input::interrupts(&pending, call, &named, attempt, &policy) {
        Ok(interrupts) => raised.extend(interrupts),
        Err(why) => tool.report(ctx, call, &json!({ "error": why })),
    }
}

/// Retries each call whose questions `decisions` answer, once per round: the question is
/// read back from the call's record (a replay, nothing is sent), the retry runs inside
/// the next attempt's effect. What it answers is settled like a first call.
pub(crate) async fn answer_inputs(
    connections: &[Arc<McpConnection>],
    http: Option<&Arc<dyn Outbound>>,
    ctx: &mut RunContext,
    tools: &[BackendTool],
    decisions: &[Decision],
    raised: &mut Vec<RaisedInterrupt>,
) -> Result<(), AgentError> {
    let mut rounds: BTreeMap<(String, u64), Vec<&Decision>> = BTreeMap::new();
    for decision in decisions {
        let attempt = input::attempt_of(&decision.interrupt);
        if let (Some(attempt), Some(call)) = (attempt, decision.tool_call_id()) {
            let round = (call.to_string(), attempt);
            rounds.entry(round).or_default().push(decision);
        }
    }
    for ((call, attempt), answered) in rounds {
        let call = ToolCallId::from(call.as_str());
        let Some(name) = ctx.find_tool_call(&call).map(|c| c.function.name.clone()) else {
            continue;
        };
        // A tool whose server cannot be listed now is rebuilt from its interrupt.
        let rebuilt = match tools.iter().any(|t| t.name() == name) {
            true => None,
            false => mcp::from_interrupt(connections, http, ctx, &answered[0].interrupt, &name),
        };
        let Some(tool) = tools.iter().find(|t| t.name() == name).or(rebuilt.as_ref()) else {
            let error = json!({ "error": format!("unknown tool {name}") });
            ctx.tool_result(&call, error.to_string());
            continue;
        };
        let key = input::effect_key(&call, attempt);
        let on_record = ctx
            .effect::<Value, ToolError, _, _>(&key, |_| async {
                Err(ToolError::NotExecuted("no such question".to_owned()))
            })
            .await;
        let Some(pending) = on_record.ok().as_ref().and_then(input::pending) else {
            let gone = "the server's question is no longer on record; the call was not retried";
            tool.report(ctx, &call, &json!({ "error": gone }));
            continue;
        };
        let answers = input::answers(&answered, &pending);
        let next = attempt + 1;
        let args = pending.arguments.clone();
        let result = call::execute(ctx, &call, tool, args, Some((next, answers))).await?;
        settle(ctx, &call, tool, &result, next, raised);
    }
    Ok(())
}
