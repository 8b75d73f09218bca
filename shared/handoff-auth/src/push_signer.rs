//! What a host that signs its A2A push notifications offers the routes (wasm-clean; the
//! native implementation is `PushKeys`).

use futures::future::BoxFuture;
use serde_json::Value;

/// Signs push-notification JWTs and publishes the key that checks them.
pub trait PushSigner: Send + Sync + std::fmt::Debug + 'static {
    /// A compact JWS of `claims`.
    fn sign<'a>(&'a self, claims: &'a Value) -> BoxFuture<'a, Result<String, String>>;
    /// The JWK set receivers check the signatures with.
    fn jwks(&self) -> BoxFuture<'_, Result<Value, String>>;
}
