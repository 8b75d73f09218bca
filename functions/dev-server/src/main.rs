//! `make dev`: the demo agent on the embedded store at http://127.0.0.1:${PORT:-8080}.
//!
//! Environment: `PORT` (0 picks a free port), `HANDOFF_DATA_DIR` (default
//! `.handoff`), `HANDOFF_STORE=memory`, `HANDOFF_BODY_LIMIT`,
//! `HANDOFF_KEEP_ALIVE_MS`, `DEMO_INTERRUPT_TTL_SECS`, `RUST_LOG`.

use axum::serve::ListenerExt;
use handoff_core::{Engine, EngineConfig};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_http::HttpConfig;
use handoff_native::StoreChoice;
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
    let agent = DemoAgent::new(store.clone(), DemoConfig::from_lookup(env));
    let ledger = agent.ledger().clone();
    let engine = Engine::with_config(
        Arc::new(agent),
        store,
        runtime.clone(),
        EngineConfig::default(),
    );
    let app = handoff_http::router(engine, HttpConfig::from_lookup(env))
        .merge(handoff_demo::http::routes(ledger, runtime));

    let port: u16 = env("PORT").and_then(|p| p.parse().ok()).unwrap_or(8080);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let url = format!("http://{}", listener.local_addr()?);
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
