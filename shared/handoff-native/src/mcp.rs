//! The native [`McpHttp`]: MCP servers reached over `ureq`, behind the same outbound
//! guard as A2A delegation ([`crate::a2a`]): `https` only, names resolved once by the
//! guarding resolver and every address checked public before connecting to exactly
//! those (no DNS rebinding), no proxy, no redirects, bodies capped at
//! [`MAX_ANSWER_BYTES`], each request bounded by its own timeout (the body included).
//! `HANDOFF_MCP_ALLOW_LOOPBACK=true` ([`NetPolicy`] with `allow_loopback`) lets loopback
//! and `http://` through, for tests and local development.
//!
//! Whether a failure may have reached the server decides exactly-once: a refused URL, a
//! name that does not resolve, a refused connection or a connect timeout sent nothing
//! ([`McpHttpError::NotSent`]); a timeout or a broken connection later is in doubt.

use std::time::Duration;

use async_trait::async_trait;
use handoff_llm::mcp::{MAX_ANSWER_BYTES, McpHttp, McpHttpError, McpRequest, McpResponse};
use ureq::unversioned::transport::DefaultConnector;

use crate::outbound::NetPolicy;
use crate::outbound::resolver::{GuardedResolver, Refused};

/// Longest wait for a connection (shorter when the request's own timeout is).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// MCP requests on a blocking `ureq` agent, run on tokio's blocking pool.
#[derive(Debug, Clone)]
pub struct UreqMcp {
    agent: ureq::Agent,
    policy: NetPolicy,
}

impl UreqMcp {
    /// A client under `policy` (its `allow_loopback` from `HANDOFF_MCP_ALLOW_LOOPBACK`).
    pub fn new(policy: NetPolicy) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .build();
        let resolver = GuardedResolver::system(policy);
        UreqMcp {
            agent: ureq::Agent::with_parts(config, DefaultConnector::new(), resolver),
            policy,
        }
    }

    fn post_blocking(&self, request: &McpRequest) -> Result<McpResponse, McpHttpError> {
        let uri = request
            .url
            .parse()
            .map_err(|e| McpHttpError::NotSent(format!("bad URL: {e}")))?;
        self.policy
            .check_scheme(&uri)
            .map_err(McpHttpError::NotSent)?;
        let timeout = Duration::from_millis(request.timeout_ms.max(1));
        let mut builder = self
            .agent
            .post(&request.url)
            .config()
            .timeout_global(Some(timeout))
            .timeout_connect(Some(timeout.min(CONNECT_TIMEOUT)))
            .build();
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        let response = builder.send(&request.body[..]).map_err(classify)?;
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let (status, content_type, session_id) = (
            response.status().as_u16(),
            header("content-type").unwrap_or_default(),
            header("mcp-session-id"),
        );
        let body = response
            .into_body()
            .into_with_config()
            .limit(MAX_ANSWER_BYTES as u64)
            .read_to_vec()
            .map_err(classify)?;
        Ok(McpResponse {
            status,
            content_type,
            session_id,
            body,
        })
    }
}

/// Whether `error` happened before anything was sent.
fn classify(error: ureq::Error) -> McpHttpError {
    use ureq::Error as E;
    use ureq::Timeout as T;
    match error {
        E::Other(inner) => match inner.downcast::<Refused>() {
            Ok(refused) => McpHttpError::NotSent(refused.0),
            Err(other) => McpHttpError::InDoubt(other.to_string()),
        },
        E::BodyExceedsLimit(_) => McpHttpError::TooLarge,
        E::Timeout(T::Resolve | T::Connect) => McpHttpError::NotSent("connect timed out".into()),
        E::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            McpHttpError::NotSent(format!("connection refused: {io}"))
        }
        e @ (E::HostNotFound
        | E::ConnectionFailed
        | E::BadUri(_)
        | E::Http(_)
        | E::Tls(_)
        | E::Rustls(_)
        | E::TlsRequired) => McpHttpError::NotSent(e.to_string()),
        other => McpHttpError::InDoubt(other.to_string()),
    }
}

#[async_trait]
impl McpHttp for UreqMcp {
    async fn post(&self, mut request: McpRequest) -> Result<McpResponse, McpHttpError> {
        // Read here, on the run's task: the blocking thread has no current span.
        if let Some(traceparent) = crate::traceparent() {
            request
                .headers
                .push(("traceparent".to_owned(), traceparent));
        }
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.post_blocking(&request))
            .await
            .map_err(|e| McpHttpError::InDoubt(format!("request task failed: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(url: &str) -> McpRequest {
        McpRequest {
            url: url.to_owned(),
            headers: Vec::new(),
            body: b"{}".to_vec(),
            timeout_ms: 2_000,
        }
    }

    #[test]
    fn the_guard_refuses_before_sending() {
        let strict = UreqMcp::new(NetPolicy::default());
        for url in [
            "http://example.com/mcp",
            "https://127.0.0.1/mcp",
            "https://localhost:9/mcp",
        ] {
            let error = strict.post_blocking(&request(url)).unwrap_err();
            assert!(
                matches!(error, McpHttpError::NotSent(_)),
                "{url}: {error:?}"
            );
        }
        let dev = UreqMcp::new(NetPolicy {
            allow_loopback: true,
        });
        // Loopback allowed, nothing listening on port 9: refused, so not sent.
        let error = dev
            .post_blocking(&request("http://127.0.0.1:9/mcp"))
            .unwrap_err();
        assert!(matches!(error, McpHttpError::NotSent(_)), "{error:?}");
        let error = dev
            .post_blocking(&request("http://10.0.0.1:9/mcp"))
            .unwrap_err();
        assert!(matches!(error, McpHttpError::NotSent(_)), "{error:?}");
    }
}
