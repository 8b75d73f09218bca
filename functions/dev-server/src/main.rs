//! `make dev`: the demo agent on the embedded store at http://127.0.0.1:${PORT:-8080}.
//!
//! Host settings (`PORT`, `HANDOFF_STORE`, `HANDOFF_DATA_DIR`, `HANDOFF_BODY_LIMIT`,
//! `HANDOFF_KEEP_ALIVE_MS`, `HANDOFF_LEASE_MS`, `RUST_LOG`): see `handoff::server`.
//! Demo settings: `DEMO_INTERRUPT_TTL_SECS`, `DEMO_TOKEN_DELAY_MS`; `DEMO_FRAUD_AGENT_URL`
//! (+ `DEMO_FRAUD_AGENT_JWKS_URL`) makes refunds delegate a fraud review over A2A, whose
//! pushes come to `POST|GET /a2a/push/{configId}` under `HANDOFF_PUBLIC_URL` (default: the
//! listening URL); `GET /threads/{id}` lists the thread's A2A tasks as `a2aTasks`.
//! `HANDOFF_A2A_*` tune the receiver and outbound calls (see `handoff::a2a`).
//! `DEMO_LLM=openai|anthropic` lets a model drive the refund flow (`OPENAI_API_KEY` /
//! `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL`, `DEMO_LLM_MODEL`); without
//! a key the scripted demo runs. With a model, `HANDOFF_MCP_SERVERS=name=url[,…]` (+
//! `HANDOFF_MCP_TOKENS`, `HANDOFF_MCP_REQUIRE_APPROVAL`, `HANDOFF_MCP_ALLOW_LOOPBACK`; see
//! `handoff_demo::mcp`) adds remote MCP servers' tools as `{name}__{tool}`.

use std::sync::Arc;

use handoff::a2a::{TaskSnapshots, client_from_env, receiver_from_env};
use handoff::outbound::{NetPolicy, UreqOutbound};
use handoff::server::{EnvStore, Server};
use handoff_demo::{DemoHost, DemoSettings, PushUrl, http::curl_example};

/// mimalloc: a run allocates many small, short-lived values (events, records, frames); under
/// the issue-16 load it takes server CPU per pair from about 246 to 183 µs against glibc's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> Result<(), handoff::server::Error> {
    handoff::server::init_logs();
    let (store, runtime) = (EnvStore::open()?, handoff::server::runtime());
    let listener = handoff::server::bind_from_env().await?;
    let url = format!("http://{}", listener.local_addr()?);
    let receiver = receiver_from_env(store.shared(), runtime.clone());
    let host = DemoHost {
        store: store.shared(),
        runtime: runtime.clone(),
        receiver: receiver.clone(),
        a2a_client: client_from_env(),
        push_url: PushUrl::ThisHost(url.clone()),
    };
    let served = DemoSettings::from_lookup(|key| std::env::var(key).ok()).demo(
        host,
        || Arc::new(UreqOutbound::operator()),
        |allow_loopback| Arc::new(UreqOutbound::guarded(NetPolicy { allow_loopback })),
    )?;
    let demo = handoff_demo::http::routes(served.ledger, runtime.clone());
    Server::new(served.agent)
        .env_store(store)
        .runtime(runtime)
        .listener(listener)
        .routes(handoff::a2a::routes(receiver.clone()))
        .protected_routes(demo)
        .thread_extras(Arc::new(TaskSnapshots(receiver)))
        .banner(curl_example(&url))
        .serve()
        .await
}
