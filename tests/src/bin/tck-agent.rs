//! The A2A TCK's fixture agent ([`handoff_tests::tck_agent`]) on the dev-server host:
//! `make tck` starts it and runs the TCK against it.
//!
//! `PORT` (default 8080; `make tck` passes `TCK_PORT`, 9999); state in memory unless
//! `HANDOFF_STORE` names a store; `HANDOFF_AUTH` defaults to `none`. Every other host
//! setting as `handoff::server` reads it.

use std::sync::Arc;

use handoff::server::{EnvStore, Server};
use handoff::store::memory::MemoryStore;
use handoff_tests::tck_agent::TckAgent;

#[tokio::main]
async fn main() -> Result<(), handoff::server::Error> {
    let server = Server::new(TckAgent);
    let server = match std::env::var_os("HANDOFF_STORE") {
        Some(_) => server.env_store(EnvStore::open()?),
        None => server.store(Arc::new(MemoryStore::new())),
    };
    server.serve().await
}
