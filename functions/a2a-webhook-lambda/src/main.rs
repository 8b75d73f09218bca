//! Handoff's A2A push-notification receiver on AWS Lambda: `POST /a2a/push/{configId}` and
//! the `GET` validation challenge, behind its own Function URL (`AuthType: NONE`: senders
//! authenticate with the per-subscription token or a JWT, checked by the receiver).
//!
//! It shares the agent function's DynamoDB table: the agent registers a subscription when it
//! delegates, this function verifies, de-duplicates and orders the pushes into the thread's
//! partition, and the agent's resume run reads them. Answers are small JSON, so the function
//! is invoked in the default buffered mode.
//!
//! Environment: `HANDOFF_TABLE` (required; the store is chosen as for the agent function, see
//! `handoff::lambda::store_from_env`), `HANDOFF_A2A_*` receiver settings (see
//! `handoff_a2a::ReceiverConfig`), `HANDOFF_A2A_ALLOW_LOOPBACK` (key-set fetches to loopback,
//! tests only), `RUST_LOG`. `AWS_ENDPOINT_URL_DYNAMODB` and `HANDOFF_CREATE_TABLE=true`
//! (debug builds) point it at a local moto_server, as for the agent function.

use axum::routing::get;
use handoff::a2a::receiver_from_env;

#[tokio::main]
async fn main() -> Result<(), handoff::lambda::Error> {
    handoff::lambda::init_logs();
    let store = handoff::lambda::store_from_env().await?;
    let receiver = receiver_from_env(store, handoff::lambda::runtime());
    let routes = handoff::a2a::routes(receiver).route("/healthz", get(|| async { "ok" }));
    handoff::lambda::run_buffered(routes).await
}
