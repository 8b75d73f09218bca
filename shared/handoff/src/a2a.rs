//! A2A (feature `a2a`): the push-notification receiver your agent's delegated
//! tasks report to, and the client that delegates them. Everything in
//! [`handoff_a2a`] is re-exported here.
//!
//! On native hosts (features `server` or `lambda`), [`receiver_from_env`] and
//! [`client_from_env`] build both with outbound I/O behind the SSRF guard.
//! Serve the receiver with [`routes`] and show a thread's task snapshots in
//! `GET /threads/{id}` with [`TaskSnapshots`] as the host's thread extras.

pub use handoff_a2a::http::{TaskSnapshots, routes};
pub use handoff_a2a::*;

#[cfg(any(feature = "server", feature = "lambda"))]
pub use native::{client_from_env, receiver_from_env};

#[cfg(any(feature = "server", feature = "lambda"))]
mod native {
    use std::sync::Arc;

    use handoff_a2a::{A2aClient, Receiver, ReceiverConfig};
    use handoff_auth::{CachedJwks, HttpJwks};
    use handoff_core::{Runtime, Store};
    use handoff_host_native::a2a::RandomTokens;
    use handoff_host_native::outbound::{NetPolicy, UreqOutbound};

    fn env(key: &str) -> Option<String> {
        std::env::var(key).ok()
    }

    /// A receiver on `store`: `HANDOFF_A2A_*` settings ([`ReceiverConfig::from_lookup`]),
    /// sender key sets fetched over HTTPS (`HANDOFF_A2A_ALLOW_LOOPBACK=true` lets
    /// them be on loopback, for tests).
    pub fn receiver_from_env(store: Arc<dyn Store>, runtime: Runtime) -> Receiver {
        let policy = NetPolicy::from_lookup(env);
        Receiver::new(
            store,
            runtime,
            Arc::new(CachedJwks::new(HttpJwks(UreqOutbound::guarded(policy)))),
            ReceiverConfig::from_lookup(env),
        )
    }

    /// The delegation client: HTTPS to public addresses only
    /// (`HANDOFF_A2A_ALLOW_LOOPBACK=true` adds loopback and `http://`, for tests).
    pub fn client_from_env() -> A2aClient {
        let policy = NetPolicy::from_lookup(env);
        A2aClient::new(
            Arc::new(UreqOutbound::guarded(policy)),
            Arc::new(RandomTokens),
            policy.allow_loopback,
        )
    }
}
