//! The two flows, split into the run that asks and the run that resumes.

use agui_protocol::{Interrupt, PatchOp};
use handoff_core::time_fmt::format_ms;
use handoff_core::{AgentError, CoreError, Decision, Finish, Readiness, RunContext, StoreError};
use serde_json::{Value, json};

use crate::orders::{Order, format_cents};
use crate::proposal::{propose_refund, stream_text};
use crate::{DemoAgent, Ledger, RefundError};

/// Refund reasons offered by the return flow.
pub(crate) const RETURN_REASONS: [&str; 4] = ["damaged", "late", "wrong_item", "changed_mind"];

pub(crate) fn look_up(ctx: &mut RunContext, order_id: &str) -> Result<Order, AgentError> {
    ctx.set_state(json!({"order": null, "step": "lookup"}));
    ctx.step_start("lookup");
    let call = ctx.tool_call("get_order", &json!({"orderId": order_id}));
    let order = Order::lookup(order_id);
    ctx.tool_result(&call, serde_json::to_string(&order)?);
    ctx.step_end("lookup");
    ctx.patch_state(vec![
        PatchOp::replace("/order", serde_json::to_value(&order)?),
        PatchOp::replace("/step", json!("await_decision")),
    ])?;
    Ok(order)
}

pub(crate) async fn start_refund(
    agent: &DemoAgent,
    ctx: &mut RunContext,
    order_id: &str,
) -> Result<Finish, AgentError> {
    let order = look_up(ctx, order_id)?;
    if let Some(fraud) = agent.fraud.clone() {
        return crate::fraud::start(agent, ctx, &fraud, &order).await;
    }
    propose_refund(agent, ctx, &order).await
}

/// A refund approval asking for more than the order has left to refund is refused
/// before its run (422 `RESUME_PAYLOAD_INVALID`, nothing written), in both demo modes.
pub(crate) async fn refund_readiness(
    ledger: &Ledger,
    decision: &Decision,
) -> Result<Readiness, CoreError> {
    if decision.interrupt.reason != "tool_call" || !decision.approved() {
        return Ok(Readiness::Ready);
    }
    let Some(args) = decision.args() else {
        return Ok(Readiness::Ready);
    };
    let (Some(order_id), Some(cents)) = (args["orderId"].as_str(), args["amountCents"].as_u64())
    else {
        return Ok(Readiness::Ready);
    };
    // The ledger's clock does not matter for a read of an account that exists.
    let remaining = ledger.refundable(order_id, 0).await?;
    if cents > remaining {
        return Err(CoreError::ResumePayloadInvalid {
            id: decision.id().to_string(),
            reason: format!(
                "a refund of {cents} cents exceeds the {remaining} cents order {order_id} has left to refund"
            ),
        });
    }
    Ok(Readiness::Ready)
}

pub(crate) async fn start_return(
    agent: &DemoAgent,
    ctx: &mut RunContext,
    order_id: &str,
) -> Result<Finish, AgentError> {
    let order = look_up(ctx, order_id)?;
    stream_text(
        agent,
        ctx,
        &format!(
            "I can register a return for order {}. Why is it coming back?",
            order.order_id
        ),
    )
    .await;
    let mut metadata = serde_json::Map::new();
    metadata.insert("handoff.demo.orderId".to_owned(), json!(order.order_id));
    let interrupt = Interrupt::new(ctx.new_id("int"), "input_required")
        .with_message(format!(
            "Choose a return reason for order {}",
            order.order_id
        ))
        .with_response_schema(json!({
            "type": "object",
            "properties": {
                "reason": {"type": "string", "enum": RETURN_REASONS, "title": "Return reason"},
                "note": {"type": "string", "maxLength": 500}
            },
            "required": ["reason"]
        }))
        .with_metadata(metadata)
        .with_expires_at(format_ms(
            ctx.now_ms() + agent.config.interrupt_ttl_secs * 1000,
        ));
    Ok(Finish::interrupt(interrupt))
}

pub(crate) async fn resume(agent: &DemoAgent, ctx: &mut RunContext) -> Result<Finish, AgentError> {
    let decisions: Vec<Decision> = ctx.decisions().to_vec();
    for decision in &decisions {
        match decision.interrupt.reason.as_str() {
            crate::fraud::A2A_TASK_REASON => {
                return crate::fraud::resume(agent, ctx, decision).await;
            }
            "tool_call" => resume_refund(agent, ctx, decision).await?,
            "input_required" => resume_return(agent, ctx, decision).await?,
            other => return Err(AgentError(format!("unexpected interrupt reason {other}"))),
        }
    }
    Ok(Finish::done())
}

async fn resume_refund(
    agent: &DemoAgent,
    ctx: &mut RunContext,
    decision: &Decision,
) -> Result<(), AgentError> {
    let call = decision
        .tool_call_id()
        .cloned()
        .ok_or("refund interrupt without toolCallId")?;
    if decision.is_cancelled() || !decision.approved() {
        let word = if decision.is_cancelled() {
            "cancelled"
        } else {
            "declined"
        };
        ctx.patch_state(vec![PatchOp::replace("/step", json!(word))])?;
        stream_text(
            agent,
            ctx,
            &format!("Understood, the refund was {word}. Nothing was charged back."),
        )
        .await;
        return Ok(());
    }
    // The edit (held to the interrupt's policy before this run was claimed), else the
    // arguments stored with the interrupt; interrupts stored before that keep them in the
    // history only.
    let args = match decision.args() {
        Some(args) => args.clone(),
        None => ctx
            .find_tool_call(&call)
            .and_then(|c| serde_json::from_str(&c.function.arguments).ok())
            .ok_or("the proposed refund arguments are missing")?,
    };
    let order_id = args
        .get("orderId")
        .and_then(Value::as_str)
        .ok_or("refund arguments need orderId")?
        .to_owned();
    let cents = args
        .get("amountCents")
        .and_then(Value::as_u64)
        .ok_or("refund arguments need amountCents")?;
    let ledger = agent.ledger.clone();
    let now = ctx.now_ms();
    let refund_id = format!("rf-{}", call.as_str());
    let (hang, fail) = (
        agent.config.hang_after_refund,
        agent.config.error_after_refund,
    );
    let receipt: Value = ctx
        .effect(&format!("refund:{call}"), |idempotency_key| async move {
            let account = ledger.refund(&order_id, cents, &idempotency_key, now).await?;
            if hang {
                // Test fault point: the money moved, the outcome is not recorded yet.
                std::future::pending::<()>().await;
            }
            // Test fault point: the money moved, the answer is lost (a timeout after
            // sending). A repeat of the key returns the first result, so it passes.
            if fail && account.idempotency_keys.iter().filter(|k| **k == idempotency_key).count() == 1 {
                return Err(RefundError::Store(CoreError::Store(StoreError::Unavailable(
                    "the payment API timed out after the request was sent".to_owned(),
                ))));
            }
            Ok(json!({"refundId": refund_id, "orderId": order_id, "amountCents": cents, "status": "refunded", "idempotencyKey": idempotency_key}))
        })
        .await?;
    ctx.tool_result(&call, serde_json::to_string(&receipt)?);
    ctx.patch_state(vec![PatchOp::replace("/step", json!("refunded"))])?;
    let amount = format_cents(cents);
    let order = receipt
        .get("orderId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    stream_text(
        agent,
        ctx,
        &format!("Done: {amount} was refunded for order {order}."),
    )
    .await;
    Ok(())
}

async fn resume_return(
    agent: &DemoAgent,
    ctx: &mut RunContext,
    decision: &Decision,
) -> Result<(), AgentError> {
    if decision.is_cancelled() {
        stream_text(agent, ctx, "No return was registered.").await;
        return Ok(());
    }
    let order_id = decision
        .interrupt
        .metadata
        .as_ref()
        .and_then(|m| m.get("handoff.demo.orderId"))
        .and_then(Value::as_str)
        .ok_or("return interrupt without order id")?
        .to_owned();
    let reason = decision
        .field("reason")
        .and_then(Value::as_str)
        .ok_or("missing reason")?
        .to_owned();
    let ledger = agent.ledger.clone();
    let now = ctx.now_ms();
    let (order, why) = (order_id.clone(), reason.clone());
    ctx.effect(
        &format!("return:{}", decision.id()),
        |idempotency_key| async move {
            ledger
                .record_return(&order, &why, &idempotency_key, now)
                .await
                .map(|_| ())
        },
    )
    .await?;
    ctx.patch_state(vec![PatchOp::replace("/step", json!("returned"))])?;
    stream_text(
        agent,
        ctx,
        &format!("The return of order {order_id} is registered (reason: {reason})."),
    )
    .await;
    Ok(())
}
