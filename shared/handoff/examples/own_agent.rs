//! Your own agent (the README's): asks before it refunds, then refunds once.
use handoff::{Agent, AgentError, ApprovalPolicy, Finish, Interrupt, RunContext, WithApproval};
use serde_json::json;

struct Refunds;

#[handoff::async_trait]
impl Agent for Refunds {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        // Run 2: the answer (`answer.payload_as::<T>()` reads all of it as your type).
        if let Some(answer) = ctx.decisions().first().cloned() {
            if answer.approved() {
                // At most once per key and thread, however often the answer is replayed.
                let receipt = ctx.effect("refund", refund).await?;
                ctx.say(&receipt);
            }
            return Ok(Finish::done());
        }
        // Run 1: propose the call, then end the run with a question. Nothing waits in memory.
        let call = ctx.tool_call("refund", &json!({ "amount": 12 }));
        let schema =
            json!({ "type": "object", "properties": { "approved": { "type": "boolean" } } });
        let ask = Interrupt::new(ctx.new_id("int"), "tool_call")
            .with_tool_call(call)
            .with_response_schema(schema)
            // Who may answer, and which arguments an edit may change: the engine enforces it.
            .with_approval(&ApprovalPolicy::new().fixed("amount"));
        Ok(Finish::interrupt(ask))
    }
}

/// Your side effect; pass `idempotency_key` on to the API it calls.
async fn refund(idempotency_key: String) -> Result<String, String> {
    Ok(format!("Refunded 12.00 ({idempotency_key})."))
}

#[tokio::main]
async fn main() -> Result<(), handoff::server::Error> {
    handoff::server::serve(Refunds).await // on PORT (8080), state in .handoff
}
