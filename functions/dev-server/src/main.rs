//! `make dev`: the demo agent on the embedded store at http://127.0.0.1:${PORT:-8080}.
//!
//! Environment: `PORT` (0 picks a free port), `HANDOFF_DATA_DIR` (default
//! `.handoff`), `HANDOFF_STORE=memory`, `HANDOFF_BODY_LIMIT`,
//! `HANDOFF_KEEP_ALIVE_MS`, `DEMO_INTERRUPT_TTL_SECS`, `RUST_LOG`.

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
    print_banner(&url, &choice);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown())
        .await?;
    Ok(())
}

#[allow(clippy::print_stdout)] // The banner is the dev server's user interface.
fn print_banner(url: &str, store: &StoreChoice) {
    let store = match store {
        StoreChoice::Memory => "in-memory store".to_owned(),
        StoreChoice::Sqlite(dir) => format!("embedded store in {}", dir.display()),
    };
    println!("Handoff dev server listening on {url} (demo agent, {store})");
    println!();
    println!("1. Ask for a refund (the run ends with an approval interrupt):");
    println!(
        "   curl -N {url}/agent -H 'content-type: application/json' -d '{{\"threadId\":\"t1\",\"runId\":\"r1\",\"messages\":[{{\"id\":\"m1\",\"role\":\"user\",\"content\":\"Refund order A1024\"}}]}}'"
    );
    println!("2. Approve it with the interrupt id from step 1 (see `curl {url}/threads/t1`):");
    println!(
        "   curl -N {url}/agent -H 'content-type: application/json' -d '{{\"threadId\":\"t1\",\"runId\":\"r2\",\"messages\":[],\"resume\":[{{\"interruptId\":\"<id>\",\"status\":\"resolved\",\"payload\":{{\"approved\":true}}}}]}}'"
    );
    println!("   then: curl {url}/demo/orders/A1024");
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
