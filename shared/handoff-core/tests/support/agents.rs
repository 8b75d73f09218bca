//! The test agents.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agui_protocol::{Event, Interrupt, PatchOp};
use async_trait::async_trait;
use handoff_core::time_fmt::format_ms;
use handoff_core::{
    Agent, AgentError, ApprovalPolicy, Finish, RunContext, RunStream, WithApproval,
};
use serde_json::{Value, json};

use super::*;

/// What a resumed run of [`RefundAgent`] saw, per decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub interrupt_id: String,
    pub approved: bool,
    pub denied: bool,
    pub cancelled: bool,
    pub edited_args: Option<Value>,
}

/// Observations shared between a test and its agents.
#[derive(Default)]
pub struct Probe {
    /// How many times a side effect's closure ran.
    pub effect_calls: AtomicUsize,
    /// The idempotency keys handed to the closures, in order.
    pub keys: Mutex<Vec<String>>,
    /// `ctx.state()` at the start of each run.
    pub states: Mutex<Vec<Value>>,
    /// Decisions seen by resumed runs.
    pub seen: Mutex<Vec<Seen>>,
    /// Runs started (agent entered).
    pub runs: AtomicUsize,
    /// Monotonic counter for minted side-effect results.
    pub minted: AtomicU64,
    /// When set, the next resumed run fails (after its effects) and clears it.
    pub fail_next_resume: AtomicBool,
}

impl Probe {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }
    pub fn calls(&self) -> usize {
        self.effect_calls.load(Ordering::SeqCst)
    }
    pub fn keys(&self) -> Vec<String> {
        lock(&self.keys).clone()
    }
    pub fn seen(&self) -> Vec<Seen> {
        lock(&self.seen).clone()
    }
    pub fn states(&self) -> Vec<Value> {
        lock(&self.states).clone()
    }
}

/// The schema every [`RefundAgent`] interrupt asks its answer to satisfy.
pub fn approval_schema() -> Value {
    json!({
        "type": "object",
        "required": ["approved"],
        "properties": {
            "approved": { "type": "boolean" },
            "editedArgs": { "type": "object" }
        }
    })
}

/// The approval flow: a new run streams text, patches state, calls `refund`
/// `interrupts` times and stops with one `tool_call` interrupt per call. A
/// resumed run executes each approved refund as an exactly-once effect (with
/// `editedArgs` replacing the amount), reports denials and cancellations, and
/// finishes with success.
pub struct RefundAgent {
    pub probe: Arc<Probe>,
    pub interrupts: usize,
    /// Interrupts expire this long after they are raised.
    pub expires_in_ms: Option<u64>,
    /// Interrupts need the role `approver`, and not the thread's owner, to be resolved.
    pub four_eyes: bool,
}

impl RefundAgent {
    pub fn new(probe: Arc<Probe>) -> Self {
        RefundAgent {
            probe,
            interrupts: 1,
            expires_in_ms: None,
            four_eyes: false,
        }
    }
    pub fn four_eyes(mut self) -> Self {
        self.four_eyes = true;
        self
    }
    pub fn with_interrupts(mut self, n: usize) -> Self {
        self.interrupts = n;
        self
    }
    pub fn expiring_in(mut self, millis: u64) -> Self {
        self.expires_in_ms = Some(millis);
        self
    }
}

#[async_trait]
impl Agent for RefundAgent {
    fn name(&self) -> &str {
        "refunds"
    }

    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        self.probe.runs.fetch_add(1, Ordering::SeqCst);
        lock(&self.probe.states).push(ctx.state().clone());
        if !ctx.is_resume() {
            let msg = ctx.text_start();
            ctx.text_delta(&msg, "Let me ");
            ctx.text_delta(&msg, "check that ");
            ctx.text_delta(&msg, "refund.");
            ctx.text_end(&msg);
            ctx.patch_state(vec![PatchOp::add("/stage", json!("awaiting_approval"))])?;
            let mut raised = Vec::new();
            for i in 0..self.interrupts {
                let amount = 40 + i as u64;
                let call = ctx.tool_call("refund", &json!({ "amount": amount }));
                let mut metadata = serde_json::Map::new();
                metadata.insert("amount".to_owned(), json!(amount));
                let mut interrupt = Interrupt::new(format!("int-{call}"), "tool_call")
                    .with_tool_call(call)
                    .with_message(format!("Refund {amount} EUR?"))
                    .with_response_schema(approval_schema())
                    .with_metadata(metadata);
                if let Some(ttl) = self.expires_in_ms {
                    interrupt = interrupt.with_expires_at(format_ms(ctx.now_ms() + ttl));
                }
                raised.push(if self.four_eyes {
                    let policy = ApprovalPolicy::new()
                        .role("approver")
                        .not_requester()
                        .editable("amount");
                    interrupt.with_approval(&policy)
                } else {
                    interrupt.into()
                });
            }
            return Ok(Finish::Interrupt(raised));
        }

        for decision in ctx.decisions().to_vec() {
            lock(&self.probe.seen).push(Seen {
                interrupt_id: decision.id().to_string(),
                approved: decision.approved(),
                denied: decision.denied(),
                cancelled: decision.is_cancelled(),
                edited_args: decision.edited_args().cloned(),
            });
            let call = decision
                .tool_call_id()
                .cloned()
                .ok_or("decision without a tool call")?;
            if decision.is_cancelled() {
                ctx.tool_result(&call, "cancelled");
            } else if decision.approved() {
                let original = decision
                    .interrupt
                    .metadata
                    .as_ref()
                    .and_then(|m| m.get("amount"))
                    .cloned();
                let amount = decision
                    .edited_args()
                    .and_then(|a| a.get("amount").cloned())
                    .or(original)
                    .unwrap_or(Value::Null);
                let probe = self.probe.clone();
                let receipt: Value = ctx
                    .effect(&format!("refund-{call}"), move |key| async move {
                        probe.effect_calls.fetch_add(1, Ordering::SeqCst);
                        lock(&probe.keys).push(key);
                        let n = probe.minted.fetch_add(1, Ordering::SeqCst) + 1;
                        Ok::<_, String>(json!({ "refundId": format!("rf-{n}"), "amount": amount }))
                    })
                    .await?;
                ctx.tool_result(&call, receipt.to_string());
            } else {
                ctx.tool_result(&call, "denied");
            }
        }
        if self.probe.fail_next_resume.swap(false, Ordering::SeqCst) {
            return Err(AgentError::new(
                "downstream ledger exploded: password=hunter2",
            ));
        }
        ctx.patch_state(vec![PatchOp::replace("/stage", json!("done"))])?;
        ctx.say("Done.");
        Ok(Finish::done())
    }
}

/// The body of a [`Scripted`] agent.
pub type Script = fn(&mut RunContext) -> Result<Finish, AgentError>;

/// An agent from a plain function (no awaits).
pub struct Scripted(pub Script);

#[async_trait]
impl Agent for Scripted {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        (self.0)(ctx)
    }
}

/// Says one sentence, streamed in several deltas, and succeeds.
pub struct Chatty;

#[async_trait]
impl Agent for Chatty {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        let last = ctx.last_user_text().unwrap_or_default();
        let msg = ctx.text_start();
        for part in ["You ", "said: ", last.as_str()] {
            ctx.text_delta(&msg, part);
        }
        ctx.text_end(&msg);
        Ok(Finish::done_with(json!({ "echo": last })))
    }
}

/// Emits a `CUSTOM "blocked"` marker, waits for its gate, then says "released".
/// Before the marker it optionally opens a text message and a tool call it never
/// closes itself.
pub struct Blocking {
    pub gate: Gate,
    pub leave_open: bool,
    pub probe: Arc<Probe>,
}

impl Blocking {
    pub fn new(gate: Gate) -> Self {
        Blocking {
            gate,
            leave_open: false,
            probe: Probe::new(),
        }
    }
}

#[async_trait]
impl Agent for Blocking {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        self.probe.runs.fetch_add(1, Ordering::SeqCst);
        if self.leave_open {
            let msg = ctx.text_start();
            ctx.text_delta(&msg, "Working on it");
            let call = ctx.tool_call_start("lookup", Some(&msg));
            ctx.tool_call_args(&call, "{\"q\":");
        }
        ctx.custom("test:blocked", Value::Null);
        self.gate.wait().await;
        if !self.leave_open {
            ctx.say("released");
        }
        Ok(Finish::done())
    }
}

/// Everything the stream reached before the first `Pending`; asserts the agent
/// got to its `CUSTOM "test:blocked"` marker.
pub fn until_blocked(stream: &mut RunStream) -> Vec<Event> {
    let (events, ended) = drain_ready(stream);
    assert!(
        !ended,
        "the run ended instead of blocking\n{}",
        dump(&events)
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Custom(c) if c.name == "test:blocked")),
        "the agent did not reach its gate\n{}",
        dump(&events)
    );
    events
}

/// Boxes a future for a `'static` spawn.
pub type Task<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// The refund approval of the one-refund agents: a first run asks (the interrupt is the
/// finish), a denied answer is acknowledged (the finish); an approval gives the call to
/// refund.
pub fn ask_or_take_approval(
    ctx: &mut RunContext,
) -> Result<Result<agui_protocol::ToolCallId, Finish>, AgentError> {
    if !ctx.is_resume() {
        let call = ctx.tool_call("refund", &json!({ "amount": 40 }));
        let interrupt = Interrupt::new(format!("int-{call}"), "tool_call")
            .with_tool_call(call)
            .with_response_schema(approval_schema());
        return Ok(Err(Finish::interrupt(interrupt)));
    }
    let decision = ctx.decisions()[0].clone();
    let call = decision.tool_call_id().cloned().ok_or("no tool call")?;
    if !decision.approved() {
        ctx.tool_result(&call, "denied");
        return Ok(Err(Finish::done()));
    }
    Ok(Ok(call))
}

/// Asks for approval of a refund; the approved resume refunds through `ctx.effect`,
/// whose first downstream call waits for `hold` (a slow payment API).
pub struct SlowRefund {
    pub probe: Arc<Probe>,
    pub hold: Gate,
}

#[async_trait]
impl Agent for SlowRefund {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        let call = match ask_or_take_approval(ctx)? {
            Ok(call) => call,
            Err(finish) => return Ok(finish),
        };
        let (probe, hold) = (self.probe.clone(), self.hold.clone());
        let receipt: Value = ctx
            .effect(&format!("refund-{call}"), move |key| async move {
                let n = probe.effect_calls.fetch_add(1, Ordering::SeqCst) + 1;
                lock(&probe.keys).push(key);
                if n == 1 {
                    hold.wait().await;
                }
                Ok::<_, String>(json!({ "refundId": format!("rf-{n}") }))
            })
            .await?;
        ctx.tool_result(&call, receipt.to_string());
        Ok(Finish::done())
    }
}
