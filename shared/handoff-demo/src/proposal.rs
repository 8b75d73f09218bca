//! What both refund paths end in (the plain flow at once, the fraud-review flow after its
//! review): the streamed refund proposal and its approval interrupt; and [`stream_text`],
//! how every reply of the demo is written. A leaf of both flows, so neither imports the
//! other's helpers.

use agui_protocol::Interrupt;
use handoff_core::time_fmt::format_ms;
use handoff_core::{AgentError, Finish, RunContext, WithApproval};
use serde_json::{Value, json};

use crate::DemoAgent;
use crate::orders::Order;

/// Streams text word by word, the way a model would (with `token_delay_ms` between words).
pub(crate) async fn stream_text(agent: &DemoAgent, ctx: &mut RunContext, text: &str) {
    let id = ctx.text_start();
    for (index, piece) in text.split_inclusive(' ').enumerate() {
        if index > 0 && agent.config.token_delay_ms > 0 {
            ctx.runtime().sleep.sleep(agent.config.token_delay_ms).await;
        }
        ctx.text_delta(&id, piece);
    }
    ctx.text_end(&id);
}

/// The refund proposal: text, the streamed `refund_order` call, and its approval interrupt.
pub(crate) async fn propose_refund(
    agent: &DemoAgent,
    ctx: &mut RunContext,
    order: &Order,
) -> Result<Finish, AgentError> {
    stream_text(
        agent,
        ctx,
        &format!(
            "Order {} ({}) was paid {} {}. I can refund it in full once you approve.",
            order.order_id,
            order.item,
            order.amount(),
            order.currency
        ),
    )
    .await;

    // serde_json::to_string, not Display: the same compact text, without the formatter.
    let args = serde_json::to_string(
        &json!({"orderId": order.order_id, "amountCents": order.amount_cents, "currency": order.currency}),
    )?;
    let call = ctx.tool_call_start("refund_order", None);
    // Streamed the way a model emits arguments: in small fragments.
    for fragment in args.as_bytes().chunks(12) {
        ctx.tool_call_args(&call, &String::from_utf8_lossy(fragment));
    }
    ctx.tool_call_end(&call);

    let expires = format_ms(ctx.now_ms() + agent.config.interrupt_ttl_secs * 1000);
    let interrupt = Interrupt::new(ctx.new_id("int"), "tool_call")
        .with_message(format!(
            "Refund {} {} for order {}?",
            order.amount(),
            order.currency,
            order.order_id
        ))
        .with_tool_call(call)
        .with_response_schema(refund_response_schema())
        .with_expires_at(expires)
        .with_approval(&crate::refund_policy(&agent.config, order.amount_cents));
    Ok(Finish::interrupt(interrupt))
}

/// The approval's `responseSchema`: the shape of an answer (`approved`, and `editedArgs`
/// with the refund's argument types). It is the same for every refund, so a host compiles
/// it once; how far an edit may go (same order, a lower amount) is [`crate::refund_policy`]'s,
/// which the engine enforces on every route. A schema bounded by each order's data cost a
/// schema compilation per answer: about a tenth of a refund pair's CPU (issue 38).
/// `editedArgs` replaces the arguments; missing fields are refused in the run.
pub(crate) fn refund_response_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "approved": {"type": "boolean"},
            "editedArgs": {
                "type": "object",
                "properties": {
                    "orderId": {"type": "string"},
                    "amountCents": {"type": "integer", "minimum": 1},
                    "currency": {"type": "string"}
                }
            }
        },
        "required": ["approved"]
    })
}
