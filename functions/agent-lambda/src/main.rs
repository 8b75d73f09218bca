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
use handoff_demo::{DemoHost, DemoSettings, PushUrl};

#[tokio::main]
async fn main() -> Result<(), handoff::lambda::Error> {
    handoff::lambda::init_logs();
    let (store, runtime) = (
        handoff::lambda::store_from_env().await?,
        handoff::lambda::runtime(),
    );
    // Registers subscriptions and reads task snapshots; the webhook function receives the pushes.
    let receiver = receiver_from_env(store.clone(), runtime.clone());
    let host = DemoHost {
        store: store.clone(),
        runtime: runtime.clone(),
        receiver: receiver.clone(),
        a2a_client: client_from_env(),
        push_url: PushUrl::WebhookFunction,
    };
    let served = DemoSettings::from_lookup(|key| std::env::var(key).ok()).demo(
        host,
        || Arc::new(UreqOutbound::operator()),
        |allow_loopback| Arc::new(UreqOutbound::guarded(NetPolicy { allow_loopback })),
    )?;
    let routes = handoff_demo::http::routes(served.ledger, runtime.clone());
    Lambda::new(served.agent)
        .store(store)
        .runtime(runtime)
        .protected_routes(routes)
        .thread_extras(Arc::new(TaskSnapshots(receiver)))
        .run()
        .await
}
