//! The fraud-review variant of the refund flow: delegation to a remote A2A agent.

use a2a_types::{Message, Part, Role, TaskState};
use agui_protocol::{Interrupt, PatchOp};
use handoff_a2a::a2a_types;
use handoff_a2a::{A2aClient, Delegate, JwtAuth, Receiver, ReceiverError};
use handoff_core::{AgentError, CoreError, Decision, Finish, Readiness, RunContext, StoreError};
use serde_json::{Value, json};

use crate::DemoAgent;
use crate::orders::Order;
use crate::proposal::{propose_refund, stream_text};

/// `Interrupt.reason` of a run waiting on a delegated A2A task.
pub const A2A_TASK_REASON: &str = "a2a:task";

/// Delegates a fraud review of each refund to a remote A2A agent.
///
/// **Run 1** (`"Refund order X"`): `get_order`, then — once, through
/// `RunContext::effect` — a push subscription is registered with `receiver`
/// and the order is sent to `agent_url` with `SendMessage` (`returnImmediately`,
/// `taskPushNotificationConfig` → `{callback_base_url}/a2a/push/{configId}`).
/// The run ends with an interrupt `reason:"a2a:task"` whose metadata carries
/// `a2a.taskId`, `a2a.configId` and `handoff.demo.orderId`.
///
/// **Waiting**: the remote agent pushes task updates; `GET /threads/{id}` lists
/// the snapshots in `a2aTasks` (hosts wire the receiver in). The task is done
/// when its state is terminal, `input-required` or `auth-required`.
///
/// **Resume**: `resume:[{interruptId, status:"resolved", payload:{}}]`. The
/// agent reads the task snapshot from the receiver (status and artifacts,
/// published as `state.fraudReview` and in a text message) and, if the review
/// completed, continues to the usual `tool_call` approval interrupt; any other
/// end state ends the run without a proposal. A `resolved` answer **before**
/// the task is done is refused by [`readiness`] (the engine answers 409
/// `INTERRUPT_NOT_READY` and nothing changes; answer again once
/// `GET /threads/{id}` shows the task done). `status:"cancelled"` abandons the
/// review at any time.
#[derive(Debug, Clone)]
pub struct FraudReview {
    /// The push receiver sharing the engine's store.
    pub receiver: Receiver,
    /// The outbound client.
    pub client: A2aClient,
    /// Base URL of the fraud-review agent.
    pub agent_url: String,
    /// Our public base URL (for the webhook).
    pub callback_base_url: String,
    /// The fraud agent's key-set URL, when it signs its pushes: each push must
    /// then carry a JWT signed with those keys as well as the token.
    pub sender_jwks_url: Option<String>,
}

impl FraudReview {
    /// The review `DEMO_FRAUD_AGENT_URL` asks for (none when unset or empty), with
    /// `DEMO_FRAUD_AGENT_JWKS_URL` as the sender's key set. The agent's pushes go to
    /// `callback_base_url`, which a host must give when the review is asked for.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
        receiver: Receiver,
        client: A2aClient,
        callback_base_url: Option<String>,
    ) -> Result<Option<Self>, String> {
        let Some(agent_url) = lookup("DEMO_FRAUD_AGENT_URL").filter(|u| !u.is_empty()) else {
            return Ok(None);
        };
        let callback_base_url = callback_base_url.ok_or(
            "DEMO_FRAUD_AGENT_URL needs a public URL for the A2A webhook \
             (on Lambda: HANDOFF_A2A_WEBHOOK_URL, the webhook function's URL)",
        )?;
        Ok(Some(FraudReview {
            receiver,
            client,
            agent_url,
            callback_base_url,
            sender_jwks_url: lookup("DEMO_FRAUD_AGENT_JWKS_URL").filter(|u| !u.is_empty()),
        }))
    }
}

fn wait_interrupt(ctx: &RunContext, order_id: &str, task_id: &str, config_id: &str) -> Finish {
    let mut metadata = serde_json::Map::new();
    metadata.insert("a2a.taskId".to_owned(), json!(task_id));
    metadata.insert("a2a.configId".to_owned(), json!(config_id));
    metadata.insert("handoff.demo.orderId".to_owned(), json!(order_id));
    Finish::interrupt(
        Interrupt::new(ctx.new_id("int"), A2A_TASK_REASON)
            .with_message(format!(
                "Waiting for the fraud review of order {order_id} (A2A task {task_id})"
            ))
            .with_response_schema(json!({"type": "object"}))
            .with_metadata(metadata),
    )
}

pub(crate) async fn start(
    agent: &DemoAgent,
    ctx: &mut RunContext,
    fraud: &FraudReview,
    order: &Order,
) -> Result<Finish, AgentError> {
    stream_text(
        agent,
        ctx,
        &format!(
            "Before refunding order {}, I asked the fraud review agent to check it.",
            order.order_id
        ),
    )
    .await;
    // The receiver keeps task records in the thread's (tenant-scoped) partition.
    let thread_id = ctx.partition().to_owned();
    let message = Message::new(
        // The client sets the messageId from the effect's idempotency key.
        String::new(),
        Role::User,
        vec![
            Part::text(format!(
                "Fraud review for order {}: refund of {} {}",
                order.order_id,
                order.amount(),
                order.currency
            )),
            Part::data(
                json!({"orderId": order.order_id, "amountCents": order.amount_cents, "currency": order.currency}),
            ),
        ],
    );
    let request = |idempotency_key| Delegate {
        thread_id,
        agent_url: fraud.agent_url.clone(),
        callback_base_url: fraud.callback_base_url.clone(),
        message,
        idempotency_key,
        ttl_ms: None,
        sender_jwt: fraud.sender_jwks_url.clone().map(JwtAuth::new),
    };
    // One review per refund: keyed by the order and how many refunds of it the ledger
    // has executed, so a retry (a lost answer, the same request asked again) re-drives the
    // same delegation, and a later refund of the same order is reviewed afresh. The
    // ledger, not the client's state, says which refund this is.
    let refunds = agent
        .ledger
        .account(&order.order_id, ctx.now_ms())
        .await
        .map_err(AgentError::new)?
        .refunds;
    let review_key = format!("a2a:fraud:{}:{refunds}", order.order_id);
    let (client, receiver) = (fraud.client.clone(), fraud.receiver.clone());
    let delegation: Value = ctx
        .effect(
            &review_key,
            // A retry of this effect (in doubt) resends the same key, so the agent sees the same message.
            |key| async move {
                client.delegate(&receiver, request(key)).await.map(|d| {
                json!({"taskId": d.task_id, "configId": d.config_id, "state": d.task.status.state})
            })
            },
        )
        .await?;
    let task_id = delegation["taskId"].as_str().unwrap_or_default().to_owned();
    let config_id = delegation["configId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    ctx.patch_state(vec![
        PatchOp::replace("/step", json!("fraud_review")),
        PatchOp::add(
            "/fraudReview",
            json!({"taskId": task_id, "state": delegation["state"]}),
        ),
    ])?;
    Ok(wait_interrupt(ctx, &order.order_id, &task_id, &config_id))
}

fn meta<'a>(decision: &'a Decision, key: &str) -> Result<&'a str, AgentError> {
    decision
        .interrupt
        .metadata
        .as_ref()
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .ok_or_else(|| AgentError(format!("a2a:task interrupt without {key}")))
}

/// Whether the task an `a2a:task` interrupt waits on has reached a terminal,
/// input-required or auth-required state, read from the receiver's snapshot.
/// Other interrupts (and a demo without a fraud agent) are always ready; an
/// interrupt without task metadata is left to the run to report.
pub(crate) async fn readiness(
    agent: &DemoAgent,
    thread_id: &str,
    decision: &Decision,
) -> Result<Readiness, CoreError> {
    let (Some(fraud), A2A_TASK_REASON) = (&agent.fraud, decision.interrupt.reason.as_str()) else {
        return Ok(Readiness::Ready);
    };
    let Ok(task_id) = meta(decision, "a2a.taskId") else {
        return Ok(Readiness::Ready);
    };
    let snapshot = fraud
        .receiver
        .task(thread_id, task_id)
        .await
        .map_err(store_error)?;
    let state = snapshot.map_or(TaskState::Unspecified, |s| s.task.status.state);
    Ok(if state.is_terminal() || state.is_interrupted() {
        Readiness::Ready
    } else {
        Readiness::NotReady(format!(
            "the fraud review (A2A task {task_id}) is {state}; answer once it is done"
        ))
    })
}

fn store_error(err: ReceiverError) -> CoreError {
    match err {
        ReceiverError::Unavailable(detail) => StoreError::Unavailable(detail).into(),
        other => StoreError::Backend(other.to_string()).into(),
    }
}

pub(crate) async fn resume(
    agent: &DemoAgent,
    ctx: &mut RunContext,
    decision: &Decision,
) -> Result<Finish, AgentError> {
    let fraud = agent
        .fraud
        .clone()
        .ok_or("a2a:task interrupt but no fraud review agent is configured")?;
    let order_id = meta(decision, "handoff.demo.orderId")?.to_owned();
    let task_id = meta(decision, "a2a.taskId")?.to_owned();
    if decision.is_cancelled() {
        ctx.patch_state(vec![PatchOp::replace("/step", json!("cancelled"))])?;
        stream_text(
            agent,
            ctx,
            "The fraud review was abandoned; no refund was proposed.",
        )
        .await;
        return Ok(Finish::done());
    }
    // The receiver keeps task records in the thread's (tenant-scoped) partition.
    let thread_id = ctx.partition().to_owned();
    let snapshot = fraud
        .receiver
        .task(&thread_id, &task_id)
        .await
        .map_err(AgentError::new)?;
    let state = snapshot
        .as_ref()
        .map_or(TaskState::Unspecified, |s| s.task.status.state);
    if !(state.is_terminal() || state.is_interrupted()) {
        // `readiness` refused such answers before the claim, and task states never go back.
        return Err(AgentError(format!(
            "A2A task {task_id} is not done ({state})"
        )));
    }
    let task = snapshot.map(|s| s.task).ok_or("missing task snapshot")?;
    for wake in fraud
        .receiver
        .wakes(&thread_id)
        .await
        .map_err(AgentError::new)?
    {
        if wake.task_id == task_id {
            fraud
                .receiver
                .clear_wake(&thread_id, &task_id, wake.seq)
                .await
                .map_err(AgentError::new)?;
        }
    }
    let findings: Vec<String> = task
        .artifacts
        .iter()
        .flat_map(|a| a.parts.iter().filter_map(Part::as_text).map(str::to_owned))
        .collect();
    ctx.patch_state(vec![PatchOp::replace(
        "/fraudReview",
        json!({"taskId": task_id, "state": state, "artifacts": task.artifacts}),
    )])?;
    let summary = if findings.is_empty() {
        "no findings".to_owned()
    } else {
        findings.join(" ")
    };
    stream_text(agent, ctx, &format!("Fraud review {state}: {summary}")).await;
    if state != TaskState::Completed {
        ctx.patch_state(vec![PatchOp::replace("/step", json!("fraud_blocked"))])?;
        stream_text(agent, ctx, "I will not propose a refund for this order.").await;
        return Ok(Finish::done());
    }
    ctx.patch_state(vec![PatchOp::replace("/step", json!("await_decision"))])?;
    propose_refund(agent, ctx, &Order::lookup(&order_id)).await
}
