//! Handoff on AWS Lambda: every route of the shared router, streamed through a
//! Function URL with `InvokeMode: RESPONSE_STREAM`.
//!
//! Environment: `HANDOFF_TABLE` (DynamoDB table, required unless
//! `HANDOFF_STORE=memory|sqlite`, which is refused unless `HANDOFF_ALLOW_LOCAL_STORE=true`:
//! state inside one instance breaks resume on any other), `HANDOFF_BODY_LIMIT` (default
//! 6 MB, Lambda's request limit), `HANDOFF_KEEP_ALIVE_MS`,
//! `DEMO_INTERRUPT_TTL_SECS`, `DEMO_TOKEN_DELAY_MS`, `RUST_LOG`.
//! `AWS_ENDPOINT_URL_DYNAMODB` points the SDK at a local DynamoDB-compatible
//! server (moto) and `HANDOFF_CREATE_TABLE=true` creates the table, for `make dev-lambda`.
//!
//! With `DEMO_FRAUD_AGENT_URL` set, refunds first delegate a fraud review over A2A
//! (`HANDOFF_A2A_ALLOW_LOOPBACK`, `DEMO_FRAUD_AGENT_JWKS_URL` as on the dev server); the
//! pushes go to the webhook function (`functions/a2a-webhook-lambda`) at
//! `HANDOFF_A2A_WEBHOOK_URL`, which writes them into the same table.
//!
//! The invocation deadline from the Lambda context becomes the engine's host
//! deadline: a run that would outlive the function is stopped a few seconds
//! before, closes what it opened and ends with `RUN_FINISHED{cancelled}`, and
//! its lease expires with the invocation instead of blocking the thread.

use std::sync::Arc;

use handoff_a2a::{A2aClient, CachedJwks, Receiver, ReceiverConfig};
use handoff_core::{Clock, Store};
use handoff_demo::{DemoConfig, FraudReview};
use handoff_http::{Host, HostDeadline, HttpConfig};
use handoff_native::a2a::{NetPolicy, RandomTokens, UreqHttp, ureq_jwks};
use handoff_store_dynamodb::DynamoStore;
use lambda_http::{Error, Request, RequestExt, run_with_streaming_response};
use tower::ServiceExt;

#[tokio::main]
async fn main() -> Result<(), Error> {
    handoff_native::init_lambda_logs();
    let env = |key: &str| std::env::var(key).ok();
    let store = open_store(env).await?;
    let runtime = handoff_native::runtime();
    let policy = NetPolicy::from_lookup(env);
    // Registers subscriptions and reads task snapshots; the webhook function receives the pushes.
    let receiver = Receiver::new(
        store.clone(),
        runtime.clone(),
        Arc::new(CachedJwks::new(ureq_jwks(policy))),
        ReceiverConfig::from_lookup(env),
    );
    let fraud = match env("DEMO_FRAUD_AGENT_URL").filter(|u| !u.is_empty()) {
        Some(agent_url) => Some(fraud_review(env, receiver.clone(), policy, agent_url)?),
        None => None,
    };
    let app = handoff_demo::http::app(
        store,
        runtime.clone(),
        receiver,
        DemoConfig::from_lookup(env),
        fraud,
        HttpConfig::for_host(Host::Lambda, env),
        Host::Lambda.engine_config(env),
    );

    // Lambda requests carry a `lambda_http::Body`; the router takes axum bodies and
    // the invocation deadline as an extension.
    let clock = handoff_native::SystemClock;
    let service = app.map_request(move |request: Request| {
        let deadline = request
            .lambda_context_ref()
            .map(|context| absolute_deadline(context.deadline, clock.now_ms()));
        let (mut parts, body) = request.into_parts();
        parts.extensions.insert(HostDeadline(deadline));
        axum::http::Request::from_parts(parts, axum::body::Body::from(body.to_vec()))
    });
    run_with_streaming_response(service).await
}

/// The A2A delegation of the demo's refunds.
fn fraud_review(
    env: impl Fn(&str) -> Option<String> + Copy,
    receiver: Receiver,
    policy: NetPolicy,
    agent_url: String,
) -> Result<FraudReview, Error> {
    let callback_base_url = env("HANDOFF_A2A_WEBHOOK_URL")
        .filter(|u| !u.is_empty())
        .ok_or("DEMO_FRAUD_AGENT_URL needs HANDOFF_A2A_WEBHOOK_URL (the webhook function's URL)")?;
    let client = A2aClient::new(
        Arc::new(UreqHttp::new(policy)),
        Arc::new(RandomTokens),
        policy.allow_loopback,
    );
    Ok(FraudReview {
        receiver,
        client,
        agent_url,
        callback_base_url,
        sender_jwks_url: env("DEMO_FRAUD_AGENT_JWKS_URL").filter(|u| !u.is_empty()),
    })
}

/// Lambda's deadline is Unix milliseconds. The local emulator (`cargo lambda
/// watch`) sends the timeout itself (e.g. 600000); a value that small cannot be an
/// instant in this century, so it is read as "this many ms from now".
fn absolute_deadline(raw: u64, now_ms: u64) -> u64 {
    const YEAR_2001_MS: u64 = 978_307_200_000;
    if raw < YEAR_2001_MS {
        now_ms.saturating_add(raw)
    } else {
        raw
    }
}

/// Where the function keeps its state.
#[derive(Debug, PartialEq, Eq)]
enum StoreKind {
    /// DynamoDB (`HANDOFF_TABLE`): shared by every instance.
    Dynamo,
    /// `HANDOFF_STORE=memory|sqlite`: inside this instance only.
    Local,
}

/// The store `HANDOFF_STORE` asks for. A local store is refused unless
/// `HANDOFF_ALLOW_LOCAL_STORE=true`: Lambda routes each request to any instance,
/// so a resume would miss the thread its interrupt was raised on.
fn store_kind(env: impl Fn(&str) -> Option<String>) -> Result<StoreKind, String> {
    let store = env("HANDOFF_STORE");
    let Some(local @ ("memory" | "sqlite")) = store.as_deref() else {
        return Ok(StoreKind::Dynamo);
    };
    if env("HANDOFF_ALLOW_LOCAL_STORE").as_deref() == Some("true") {
        return Ok(StoreKind::Local);
    }
    Err(format!(
        "HANDOFF_STORE={local} keeps state inside one Lambda instance, so a resume served by \
         another instance would not find its thread; use DynamoDB (unset HANDOFF_STORE, set \
         HANDOFF_TABLE), or set HANDOFF_ALLOW_LOCAL_STORE=true for a single-instance test"
    ))
}

async fn open_store(env: impl Fn(&str) -> Option<String> + Copy) -> Result<Arc<dyn Store>, Error> {
    if store_kind(env)? == StoreKind::Local {
        return Ok(handoff_native::store_from_env(env)?);
    }
    let table = env("HANDOFF_TABLE").ok_or("HANDOFF_TABLE is not set")?;
    let config = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
    let client = aws_sdk_dynamodb::Client::new(&config);
    // Local development only (`make dev-lambda`): in AWS the SAM template owns the table.
    if env("HANDOFF_CREATE_TABLE").as_deref() == Some("true") {
        DynamoStore::create_table(&client, &table).await?;
    }
    Ok(Arc::new(DynamoStore::new(client, table)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |key| {
            vars.iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn dynamodb_unless_a_local_store_is_named() {
        assert_eq!(store_kind(env(&[])), Ok(StoreKind::Dynamo));
        let other = [("HANDOFF_STORE", "dynamodb")];
        assert_eq!(store_kind(env(&other)), Ok(StoreKind::Dynamo));
    }

    #[test]
    fn local_stores_are_refused_unless_allowed() {
        for local in ["memory", "sqlite"] {
            let err = store_kind(env(&[("HANDOFF_STORE", local)])).unwrap_err();
            assert!(err.contains(&format!("HANDOFF_STORE={local}")), "{err}");
            assert!(err.contains("HANDOFF_ALLOW_LOCAL_STORE=true"), "{err}");
            let not_true = [("HANDOFF_STORE", local), ("HANDOFF_ALLOW_LOCAL_STORE", "1")];
            assert!(store_kind(env(&not_true)).is_err());
            let allowed = [
                ("HANDOFF_STORE", local),
                ("HANDOFF_ALLOW_LOCAL_STORE", "true"),
            ];
            assert_eq!(store_kind(env(&allowed)), Ok(StoreKind::Local));
        }
    }
}
