//! Handoff's A2A push-notification receiver on AWS Lambda: `POST /a2a/push/{configId}` and
//! the `GET` validation challenge, behind its own Function URL (`AuthType: NONE`: senders
//! authenticate with the per-subscription token or a JWT, checked by the receiver).
//!
//! It shares the agent function's DynamoDB table: the agent registers a subscription when it
//! delegates, this function verifies, de-duplicates and orders the pushes into the thread's
//! partition, and the agent's resume run reads them. Answers are small JSON, so the function
//! is invoked in the default buffered mode.
//!
//! Environment: `HANDOFF_TABLE` (required), `HANDOFF_A2A_*` receiver settings (see
//! `handoff_a2a::ReceiverConfig`), `HANDOFF_A2A_ALLOW_LOOPBACK` (key-set fetches to loopback,
//! tests only), `RUST_LOG`. `AWS_ENDPOINT_URL_DYNAMODB` and `HANDOFF_CREATE_TABLE=true` point
//! it at a local moto_server, as for the agent function.

use std::sync::Arc;

use axum::routing::get;
use handoff_a2a::{CachedJwks, Receiver, ReceiverConfig};
use handoff_native::a2a::{NetPolicy, ureq_jwks};
use handoff_store_dynamodb::DynamoStore;
use lambda_http::{Error, run};

#[tokio::main]
async fn main() -> Result<(), Error> {
    handoff_native::init_lambda_logs();
    let env = |key: &str| std::env::var(key).ok();
    let table = env("HANDOFF_TABLE").ok_or("HANDOFF_TABLE is not set")?;
    let config = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
    let client = aws_sdk_dynamodb::Client::new(&config);
    // Local development only: in AWS the SAM template owns the table.
    if env("HANDOFF_CREATE_TABLE").as_deref() == Some("true") {
        DynamoStore::create_table(&client, &table).await?;
    }
    let store: Arc<dyn handoff_core::Store> = Arc::new(DynamoStore::new(client, table));
    let receiver = Receiver::new(
        store,
        handoff_native::runtime(),
        Arc::new(CachedJwks::new(ureq_jwks(NetPolicy::from_lookup(env)))),
        ReceiverConfig::from_lookup(env),
    );
    let app = handoff_a2a::http::routes(receiver).route("/healthz", get(|| async { "ok" }));
    run(app).await
}
