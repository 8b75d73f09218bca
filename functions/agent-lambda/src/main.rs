//! The demo agent on AWS Lambda, streamed through a Function URL with
//! `InvokeMode: RESPONSE_STREAM`, state in DynamoDB.
//!
//! Host settings (`HANDOFF_TABLE`, `HANDOFF_CREATE_TABLE`, `HANDOFF_STORE`,
//! `HANDOFF_ALLOW_LOCAL_STORE`, `HANDOFF_BODY_LIMIT`, `HANDOFF_KEEP_ALIVE_MS`,
//! `HANDOFF_LEASE_MS`, `RUST_LOG`) and the deadline: see `handoff::lambda`.
//! Demo settings: `DEMO_INTERRUPT_TTL_SECS`, `DEMO_TOKEN_DELAY_MS`; with
//! `DEMO_FRAUD_AGENT_URL` set, refunds first delegate a fraud review over A2A
//! (`DEMO_FRAUD_AGENT_JWKS_URL`, `HANDOFF_A2A_ALLOW_LOOPBACK` as on the dev server),
//! whose pushes go to the webhook function (`functions/a2a-webhook-lambda`) at
//! `HANDOFF_A2A_WEBHOOK_URL`, which writes them into the same table.
//! `DEMO_LLM=openai|anthropic` (+ `OPENAI_*` / `ANTHROPIC_*`, `DEMO_LLM_MODEL`) lets a model
//! drive the refund flow, with the tools of `HANDOFF_MCP_SERVERS` too (`handoff_demo::mcp`).

use std::sync::Arc;

use handoff::a2a::{TaskSnapshots, client_from_env, receiver_from_env};
use handoff::lambda::Lambda;
use handoff::outbound::{NetPolicy, UreqOutbound};
use handoff_demo::llm::choose;
use handoff_demo::{DemoAgent, FraudReview};

#[tokio::main]
async fn main() -> Result<(), handoff::lambda::Error> {
    handoff::lambda::init_logs();
    let env = |key: &str| std::env::var(key).ok().filter(|v| !v.is_empty());
    let (store, runtime) = (
        handoff::lambda::store_from_env().await?,
        handoff::lambda::runtime(),
    );
    // Registers subscriptions and reads task snapshots; the webhook function receives the pushes.
    let receiver = receiver_from_env(store.clone(), runtime.clone());
    let webhook_url = env("HANDOFF_A2A_WEBHOOK_URL");
    let fraud = FraudReview::from_lookup(env, receiver.clone(), client_from_env(), webhook_url)?;
    let scripted = DemoAgent::from_lookup(store.clone(), env, fraud);
    let ledger = scripted.ledger().clone();
    let agent = choose(
        scripted,
        runtime.clone(),
        env,
        || Arc::new(UreqOutbound::operator()),
        |allow_loopback| Arc::new(UreqOutbound::guarded(NetPolicy { allow_loopback })),
    )?;
    let routes = handoff_demo::http::routes(ledger, runtime.clone());
    Lambda::new(agent)
        .store(store)
        .runtime(runtime)
        .protected_routes(routes)
        .thread_extras(Arc::new(TaskSnapshots(receiver)))
        .run()
        .await
}
