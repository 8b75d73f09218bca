//! The demo agent served by every Handoff host.
//!
//! **Refund flow** (`"Refund order A1024"`): backend tool `get_order` (START, ARGS,
//! END and RESULT) → state snapshot and delta (`order`, `step`) → text → a
//! `refund_order` call with streamed arguments → interrupt `reason:"tool_call"`
//! bound to that call, `responseSchema {approved: boolean, editedArgs?: object}`,
//! `expiresAt` = now + `interrupt_ttl_secs`. On approval the refund executes once
//! through [`handoff_core::RunContext::effect`] against the simulated [`Ledger`],
//! then `TOOL_CALL_RESULT` answers the original call (no new START/ARGS/END).
//! `editedArgs` replace the arguments but may only lower the amount of the same
//! order: the interrupt carries [`refund_policy`], which the engine enforces on every
//! route and host (a wider edit is a 422 `RESUME_PAYLOAD_INVALID`, nothing written), and
//! the schema bounds it too. Above `DEMO_APPROVER_ABOVE_CENTS` the same policy asks
//! for the role `approver` and someone other than the requester (403 `FORBIDDEN`).
//! A denial or a cancel executes nothing.
//!
//! **Fraud review variant** (hosts call [`DemoAgent::with_fraud_review`], the dev
//! server when `DEMO_FRAUD_AGENT_URL` is set): the refund flow first delegates
//! a review to a remote A2A agent and ends with an interrupt `reason:"a2a:task"`;
//! see [`FraudReview`] for how it resumes.
//!
//! **Return flow** (`"Return order A1024"`): `get_order`, then an
//! `input_required` interrupt asking for a reason from an enum; the answer is
//! recorded once in the ledger.
//!
//! The simulated [`Ledger`] behaves like a payment API: a repeated idempotency key moves no
//! money, and a refund beyond what the order has left is refused (422 before the run).
//! `GET /demo/orders/{orderId}` shows how many refunds really executed.
//!
//! # Settings
//!
//! Every host builds the demo with [`DemoSettings::demo`] from its own environment lookup,
//! so the dev server, Lambda and the Worker read these the same way; an empty variable is
//! unset:
//!
//! | variable | default | what |
//! |---|---|---|
//! | `DEMO_INTERRUPT_TTL_SECS` | 300 | how long an interrupt waits for its answer (`expiresAt`) |
//! | `DEMO_APPROVER_ABOVE_CENTS` | unset: never | refunds above it need the role `approver` and not the requester |
//! | `DEMO_LLM=openai\|anthropic` | unset: the scripted demo | a model drives the refund flow: it looks the order up and proposes the refund, which still waits for approval; with `OPENAI_API_KEY` / `OPENAI_BASE_URL` (any OpenAI-compatible server, e.g. a local `http://127.0.0.1:11434/v1`), `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL`, `DEMO_LLM_MODEL`; without a key the scripted demo runs; the same on Lambda and the Worker |
//! | `DEMO_FRAUD_AGENT_URL` | unset: no review | the refund first delegates a fraud review to this remote A2A agent ([`FraudReview`]) |
//! | `DEMO_FRAUD_AGENT_JWKS_URL` | unset | every push must also carry a JWT signed with the agent's published keys |
//! | `HANDOFF_PUBLIC_URL` | the host's own URL | dev server and Worker: the base URL the fraud agent pushes to ([`PushUrl`]) |
//! | `HANDOFF_A2A_WEBHOOK_URL` | unset | Lambda: the webhook function's URL the fraud agent pushes to (needed with `DEMO_FRAUD_AGENT_URL`) |
//! | `HANDOFF_TEST_FAULT` | unset | tests only, debug builds only: `hang-after-refund` makes the refund hang after the ledger moved the money (the kill -9 test); `error-after-refund` makes it move the money and then fail, as a payment API's timeout after sending does (the effect stays in doubt); `hang-before-lookup` makes the LLM mode's `get_order` hang before it reads the ledger (the crash-resume test) |
//!
//! ```
//! use std::sync::Arc;
//! use handoff_core::{Engine, runtime::{ManualClock, NeverSleep, Runtime, SequentialIds}, store::memory::MemoryStore};
//! use handoff_demo::{DemoAgent, DemoConfig};
//!
//! let store: Arc<dyn handoff_core::Store> = Arc::new(MemoryStore::new());
//! let agent = DemoAgent::new(store.clone(), DemoConfig::default());
//! let engine = Engine::new(agent, store, Runtime::new(ManualClock::new(0), SequentialIds::new("doc"), NeverSleep));
//! assert_eq!(engine.agent_name(), "refund-demo");
//! ```

mod flows;
mod fraud;
#[cfg(feature = "http")]
pub mod http;
mod ledger;
pub mod llm;
pub mod mcp;
mod orders;
mod policy;
mod proposal;
pub mod settings;

use std::sync::Arc;

use async_trait::async_trait;
use handoff_core::{Agent, AgentError, CoreError, Decision, Finish, Readiness, RunContext, Store};

pub use fraud::{A2A_TASK_REASON, FraudReview};
pub use ledger::{ACCOUNT_TTL_MS, Ledger, OrderAccount, RefundError};
pub use orders::{Order, Request, format_cents, parse_request};
pub use policy::refund_policy;
pub use settings::{DemoHost, DemoSettings, PushUrl, ServedDemo};

/// Demo settings.
#[derive(Debug, Clone)]
pub struct DemoConfig {
    /// Seconds an approval stays answerable (`DEMO_INTERRUPT_TTL_SECS`, default 300).
    pub interrupt_ttl_secs: u64,
    /// Pause between streamed words, like a model's token latency (`DEMO_TOKEN_DELAY_MS`, default 0).
    pub token_delay_ms: u64,
    /// Test fault point, debug builds only (`HANDOFF_TEST_FAULT=hang-after-refund`): the
    /// refund effect never returns after the ledger moved the money, so a test can kill
    /// the process inside the effect.
    pub hang_after_refund: bool,
    /// Test fault point, debug builds only (`HANDOFF_TEST_FAULT=error-after-refund`): the
    /// refund effect fails after the ledger moved the money, as a payment API's timeout
    /// after the request was sent does; the effect stays in doubt.
    pub error_after_refund: bool,
    /// Test fault point, debug builds only (`HANDOFF_TEST_FAULT=hang-before-lookup`): the
    /// LLM mode's `get_order` hangs before it reads the ledger, after the model's answer
    /// was journaled, so a test can kill the process between a model call and its tool.
    pub hang_before_lookup: bool,
    /// Refunds above this many cents need a second person (`DEMO_APPROVER_ABOVE_CENTS`,
    /// unset = never): their approval asks for the role `approver`, not the requester.
    pub approver_above_cents: Option<u64>,
}

impl Default for DemoConfig {
    fn default() -> Self {
        DemoConfig {
            interrupt_ttl_secs: 300,
            token_delay_ms: 0,
            hang_after_refund: false,
            error_after_refund: false,
            hang_before_lookup: false,
            approver_above_cents: None,
        }
    }
}

impl DemoConfig {
    /// Reads `DEMO_INTERRUPT_TTL_SECS` from a lookup function (hosts pass their env).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let interrupt_ttl_secs = lookup("DEMO_INTERRUPT_TTL_SECS")
            .and_then(|v| v.parse().ok())
            .unwrap_or(300);
        let token_delay_ms = lookup("DEMO_TOKEN_DELAY_MS")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let fault = lookup("HANDOFF_TEST_FAULT").filter(|_| cfg!(debug_assertions));
        let hang_after_refund = fault.as_deref() == Some("hang-after-refund");
        let error_after_refund = fault.as_deref() == Some("error-after-refund");
        DemoConfig {
            interrupt_ttl_secs,
            token_delay_ms,
            hang_after_refund,
            error_after_refund,
            hang_before_lookup: fault.as_deref() == Some("hang-before-lookup"),
            approver_above_cents: lookup("DEMO_APPROVER_ABOVE_CENTS").and_then(|v| v.parse().ok()),
        }
    }
}

/// The refund / return agent.
#[derive(Debug, Clone)]
pub struct DemoAgent {
    ledger: Ledger,
    config: DemoConfig,
    fraud: Option<Arc<FraudReview>>,
}

impl DemoAgent {
    /// A demo agent whose ledger lives in `store`.
    pub fn new(store: Arc<dyn Store>, config: DemoConfig) -> Self {
        DemoAgent {
            ledger: Ledger::new(store),
            config,
            fraud: None,
        }
    }

    /// Its settings.
    pub fn config(&self) -> &DemoConfig {
        &self.config
    }

    /// Refunds first delegate a fraud review to a remote A2A agent (see [`FraudReview`]).
    pub fn with_fraud_review(mut self, fraud: FraudReview) -> Self {
        self.fraud = Some(Arc::new(fraud));
        self
    }

    /// The demo as hosts serve it: [`DemoConfig::from_lookup`], with `fraud` when
    /// given (see [`FraudReview::from_lookup`]).
    pub fn from_lookup(
        store: Arc<dyn Store>,
        lookup: impl Fn(&str) -> Option<String>,
        fraud: Option<FraudReview>,
    ) -> Self {
        let agent = DemoAgent::new(store, DemoConfig::from_lookup(lookup));
        match fraud {
            Some(fraud) => agent.with_fraud_review(fraud),
            None => agent,
        }
    }

    /// The ledger (for `GET /demo/orders/{orderId}`).
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }
}

#[async_trait]
impl Agent for DemoAgent {
    fn name(&self) -> &str {
        "refund-demo"
    }

    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        if ctx.is_resume() {
            return flows::resume(self, ctx).await;
        }
        match ctx.last_user_text().map(|t| parse_request(&t)) {
            Some(Request::Refund(order_id)) => flows::start_refund(self, ctx, &order_id).await,
            Some(Request::Return(order_id)) => flows::start_return(self, ctx, &order_id).await,
            _ => {
                proposal::stream_text(
                    self, ctx,
                    "I can refund or return an order. Try \"Refund order A1024\" or \"Return order A1024\".",
                ).await;
                Ok(Finish::done())
            }
        }
    }

    async fn readiness(
        &self,
        thread_id: &str,
        decision: &Decision,
    ) -> Result<Readiness, CoreError> {
        if let Readiness::NotReady(why) = flows::refund_readiness(&self.ledger, decision).await? {
            return Ok(Readiness::NotReady(why));
        }
        fraud::readiness(self, thread_id, decision).await
    }
}
