//! `make dev`: the demo agent on the embedded store at http://127.0.0.1:${PORT:-8080}.
//!
//! Environment: `PORT` (0 picks a free port), `HANDOFF_DATA_DIR` (default
//! `.handoff`), `HANDOFF_STORE=memory`, `HANDOFF_BODY_LIMIT` (default 8 MiB),
//! `HANDOFF_KEEP_ALIVE_MS`, `DEMO_INTERRUPT_TTL_SECS`, `RUST_LOG`.
//!
//! A2A: the push-notification receiver is served at `POST|GET /a2a/push/{configId}`
//! and `GET /threads/{id}` lists the thread's A2A task snapshots as `a2aTasks`.
//! `DEMO_FRAUD_AGENT_URL` makes refunds delegate a fraud review to that A2A agent
//! (webhook base `HANDOFF_PUBLIC_URL`, default the listening URL).
//! `DEMO_FRAUD_AGENT_JWKS_URL` makes that agent's pushes need a JWT signed with
//! its published keys as well as the token.
//! `HANDOFF_A2A_ALLOW_LOOPBACK=true` lets outbound A2A calls reach loopback
//! (tests only); `HANDOFF_A2A_BODY_LIMIT`, `HANDOFF_A2A_DEDUPE_TTL_SECS`,
//! `HANDOFF_A2A_ALLOW_INSECURE_JWKS` tune the receiver.

use axum::serve::ListenerExt;
use handoff_a2a::{A2aClient, CachedJwks, Receiver, ReceiverConfig};
use handoff_demo::{DemoConfig, FraudReview};
use handoff_http::{Host, HttpConfig};
use handoff_native::StoreChoice;
use handoff_native::a2a::{NetPolicy, RandomTokens, UreqHttp, ureq_jwks};
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let env = |key: &str| std::env::var(key).ok();
    let choice = StoreChoice::from_lookup(env)?;
    let store = choice.open()?;
    let runtime = handoff_native::runtime();
    let policy = NetPolicy::from_lookup(env);
    let receiver = Receiver::new(
        store.clone(),
        runtime.clone(),
        Arc::new(CachedJwks::new(ureq_jwks(policy))),
        ReceiverConfig::from_lookup(env),
    );

    let port: u16 = env("PORT").and_then(|p| p.parse().ok()).unwrap_or(8080);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let url = format!("http://{}", listener.local_addr()?);

    let fraud = env("DEMO_FRAUD_AGENT_URL")
        .filter(|u| !u.is_empty())
        .map(|agent_url| {
            tracing::info!(%agent_url, "refunds delegate a fraud review over A2A");
            FraudReview {
                receiver: receiver.clone(),
                client: A2aClient::new(
                    Arc::new(UreqHttp::new(policy)),
                    Arc::new(RandomTokens),
                    policy.allow_loopback,
                ),
                agent_url,
                callback_base_url: env("HANDOFF_PUBLIC_URL").unwrap_or_else(|| url.clone()),
                sender_jwks_url: env("DEMO_FRAUD_AGENT_JWKS_URL").filter(|u| !u.is_empty()),
            }
        });
    let app = handoff_demo::http::app(
        store,
        runtime,
        receiver.clone(),
        DemoConfig::from_lookup(env),
        fraud,
        HttpConfig::for_host(Host::DevServer, env),
        Host::DevServer.engine_config(env),
    )
    .merge(handoff_a2a::http::routes(receiver));

    // SSE frames are small writes that must leave at once, not wait for Nagle.
    let listener = listener.tap_io(|tcp| {
        if let Err(err) = tcp.set_nodelay(true) {
            tracing::warn!(%err, "could not set TCP_NODELAY");
        }
    });
    print_banner(&url, &choice);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown())
        .await?;
    Ok(())
}

/// Prints the URL and a two-step example. Write errors (a closed stdout) are ignored:
/// the server must keep serving whoever started it.
fn print_banner(url: &str, store: &StoreChoice) {
    use std::io::Write;
    let store = match store {
        StoreChoice::Memory => "in-memory store".to_owned(),
        StoreChoice::Sqlite(dir) => format!("embedded store in {}", dir.display()),
    };
    let refund = r#"{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"Refund order A1024"}]}"#;
    let approve = r#"{"threadId":"t1","runId":"r2","messages":[],"resume":[{"interruptId":"<id>","status":"resolved","payload":{"approved":true}}]}"#;
    let banner = format!(
        "Handoff dev server listening on {url} (demo agent, {store})\n\n\
         1. Ask for a refund (the run ends with an approval interrupt):\n   \
         curl -N {url}/agent -H 'content-type: application/json' -d '{refund}'\n\
         2. Approve it with the interrupt id from step 1 (also in `curl {url}/threads/t1`):\n   \
         curl -N {url}/agent -H 'content-type: application/json' -d '{approve}'\n   \
         then: curl {url}/demo/orders/A1024\n"
    );
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
}

async fn shutdown() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { () = ctrl_c => {}, () = term => {} }
}
