//! Key sets fetched with the host's one outbound client ([`Outbound`]).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use handoff_core::outbound::{Outbound, Timeout, read_capped};

use crate::jwks::{JwkSet, JwksError, JwksSource, parse_jwks};

/// Largest key-set document read.
const MAX_KEY_SET: usize = 1024 * 1024;
/// One fetch's bound, the body included.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Fetches key sets with the host's [`Outbound`] client, which enforces the outbound
/// policy (https, no private addresses); this adds a 10 s timeout and a 1 MiB cap. Wrap
/// it in [`CachedJwks`](crate::CachedJwks).
#[derive(Debug, Clone)]
pub struct HttpJwks<O>(pub O);

#[async_trait]
impl<O: Outbound> JwksSource for HttpJwks<O> {
    async fn key_set(
        &self,
        url: &str,
        _now_ms: u64,
        _refresh: bool,
    ) -> Result<Arc<JwkSet>, JwksError> {
        let mut request = http::Request::get(url)
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())
            .map_err(|e| JwksError(format!("key-set URL: {e}")))?;
        request.extensions_mut().insert(Timeout(TIMEOUT));
        let failed = |e: handoff_core::outbound::OutboundError| JwksError(e.to_string());
        let response = self.0.send(request).await.map_err(failed)?;
        let response = read_capped(response, MAX_KEY_SET).await.map_err(failed)?;
        if response.status() != http::StatusCode::OK {
            return Err(JwksError(format!(
                "HTTP {} from the key-set URL",
                response.status().as_u16()
            )));
        }
        parse_jwks(response.body()).map(Arc::new)
    }
}

#[cfg(test)]
mod tests {
    use futures::executor::block_on;
    use handoff_core::outbound::{Body, OutboundError, whole};

    use super::*;

    /// Answers every request with `status` and `body`, and remembers its timeout.
    struct Answer(u16, Vec<u8>);

    #[async_trait]
    impl Outbound for Answer {
        async fn send(
            &self,
            request: http::Request<Vec<u8>>,
        ) -> Result<http::Response<Body>, OutboundError> {
            assert_eq!(request.extensions().get(), Some(&Timeout(TIMEOUT)));
            assert_eq!(request.headers()["accept"], "application/json");
            let mut response = http::Response::new(whole(self.1.clone()));
            *response.status_mut() = http::StatusCode::from_u16(self.0).unwrap();
            Ok(response)
        }
    }

    const URL: &str = "https://keys.example.com/jwks.json";

    #[test]
    fn a_key_set_is_read_and_a_failure_is_an_unavailable_key_set() {
        let keys = br#"{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"k1"}]}"#.to_vec();
        let set = block_on(HttpJwks(Answer(200, keys)).key_set(URL, 0, false)).unwrap();
        assert_eq!(set.keys.len(), 1);
        let error = block_on(HttpJwks(Answer(404, Vec::new())).key_set(URL, 0, false));
        assert_eq!(
            error.unwrap_err(),
            JwksError("HTTP 404 from the key-set URL".into())
        );
        let huge = vec![b' '; MAX_KEY_SET + 1];
        let error = block_on(HttpJwks(Answer(200, huge)).key_set(URL, 0, false));
        assert!(error.unwrap_err().0.contains("answer over"));
    }
}
