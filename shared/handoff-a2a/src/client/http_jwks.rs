//! Key sets fetched with the host's A2A [`HttpClient`](crate::HttpClient).

use std::sync::Arc;

use async_trait::async_trait;
use handoff_auth::jwks::{JwkSet, JwksError, JwksSource, parse_jwks};

/// Fetches key sets with the host's [`HttpClient`](crate::HttpClient), which
/// enforces the outbound policy (https, no private addresses, timeout, size
/// cap). Wrap it in [`CachedJwks`].
#[derive(Debug, Clone)]
pub struct HttpJwks<C>(pub C);

#[async_trait]
impl<C: crate::HttpClient> JwksSource for HttpJwks<C> {
    async fn key_set(
        &self,
        url: &str,
        _now_ms: u64,
        _refresh: bool,
    ) -> Result<Arc<JwkSet>, JwksError> {
        let request = crate::HttpRequest {
            method: "GET",
            url: url.to_owned(),
            headers: vec![("Accept".to_owned(), "application/json".to_owned())],
            body: None,
        };
        let response = self
            .0
            .send(request)
            .await
            .map_err(|e| JwksError(e.to_string()))?;
        if response.status != 200 {
            return Err(JwksError(format!(
                "HTTP {} from the key-set URL",
                response.status
            )));
        }
        parse_jwks(&response.body).map(Arc::new)
    }
}
