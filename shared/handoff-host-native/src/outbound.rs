//! The native [`Outbound`]: one blocking `ureq` agent run on tokio's blocking pool, for
//! every outbound call (A2A delegation, key sets, model providers, MCP servers and
//! their OAuth tokens, the trace exporter).
//!
//! **SSRF guard** ([`UreqOutbound::guarded`]): the scheme must be `https`; the host name
//! is resolved once, by ureq through a guarding resolver, and every address must be
//! public ([`handoff_auth::url_guard::check_addresses`]): loopback, private (RFC 1918,
//! CGNAT, ULA), link-local (incl. cloud metadata `169.254.169.254`), multicast,
//! reserved and unspecified addresses are refused. The connection then goes to exactly
//! those checked addresses, so a name that re-resolves elsewhere after the check (DNS
//! rebinding) is never reached. [`NetPolicy::allow_loopback`] lets loopback (and
//! `http://`) through, for tests and local development; private and link-local stay
//! refused. No proxy (it would resolve names itself).
//!
//! The operator's own endpoints (a model provider's base URL, which may be a local
//! Ollama or vLLM; the trace collector) are not users' URLs: [`UreqOutbound::operator`]
//! allows `http` and any address, and honours the proxy variables.
//!
//! Either way: TLS trusts the platform's root certificates (read at the first TLS
//! connection, as the DynamoDB client reads them), no redirects, statuses are not errors,
//! connecting gives up after 10 s (sooner with a shorter timeout), and the whole exchange
//! after the request's [`Timeout`] (10 minutes without one: a model's answer may stream
//! that long).
//! Whether a failure may have reached the server is kept: a refused URL, a name that
//! does not resolve, a refused connection or a connect timeout sent nothing; a timeout or
//! a broken connection later is in doubt.

pub(crate) mod resolver;

use std::io::Read;
use std::net::IpAddr;
use std::time::Duration;

use async_trait::async_trait;
use futures::channel::oneshot;
use handoff_auth::url_guard::address_allowed;
use handoff_core::outbound::{Body, Outbound, OutboundError, Timeout};
use resolver::{GuardedResolver, Refused};
use tokio::sync::mpsc;
use ureq::unversioned::resolver::{DefaultResolver, Resolver};
use ureq::unversioned::transport::DefaultConnector;

/// Longest wait for a connection (shorter when the request's own timeout is).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The whole exchange's bound when the request names no [`Timeout`].
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// Size of the pieces a streamed body is handed on in.
const CHUNK: usize = 8 * 1024;

/// TLS as the DynamoDB client has it: rustls on ring, and the platform's root certificates
/// (`/etc/ssl`, `SSL_CERT_FILE`, `SSL_CERT_DIR`), read when the first TLS connection needs
/// them. A platform without any fails that connection with "No CA certificates were
/// loaded from the system".
fn tls_config() -> ureq::tls::TlsConfig {
    ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::PlatformVerifier)
        .unversioned_rustls_crypto_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .build()
}

/// Which destinations guarded requests may reach.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetPolicy {
    /// Allow loopback addresses and plain `http://` (tests, local development).
    pub allow_loopback: bool,
}

impl NetPolicy {
    /// `HANDOFF_A2A_ALLOW_LOOPBACK=true|1`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        NetPolicy {
            allow_loopback: lookup("HANDOFF_A2A_ALLOW_LOOPBACK")
                .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true")),
        }
    }

    /// Whether `ip` may be reached.
    pub fn allows(self, ip: IpAddr) -> bool {
        address_allowed(ip, self.allow_loopback)
    }

    /// The URL's scheme: `https`, or `http` too with `allow_loopback`. Its addresses are
    /// checked when the request resolves them, not here: a separate look-up would leave
    /// a rebinding window.
    pub fn check_scheme(self, uri: &http::Uri) -> Result<(), String> {
        match uri.scheme_str() {
            Some("https") => {}
            Some("http") if self.allow_loopback => {}
            _ => return Err("outbound URLs must be https".to_owned()),
        }
        uri.host().ok_or("the URL has no host")?;
        Ok(())
    }
}

/// The one native HTTP client. Cheap to clone (connections are shared).
#[derive(Debug, Clone)]
pub struct UreqOutbound {
    agent: ureq::Agent,
    /// `None` for the operator's own endpoints.
    guard: Option<NetPolicy>,
}

impl UreqOutbound {
    /// For users' URLs (agents, key sets, MCP servers): behind the guard under `policy`.
    pub fn guarded(policy: NetPolicy) -> Self {
        Self::with_resolver(Some(policy), GuardedResolver::system(policy))
    }

    /// For the operator's own endpoints (model providers, the trace collector): `http`
    /// and any address allowed, proxies as the environment sets them.
    pub fn operator() -> Self {
        Self::with_resolver(None, DefaultResolver::default())
    }

    fn with_resolver(guard: Option<NetPolicy>, resolver: impl Resolver) -> Self {
        let mut config = ureq::Agent::config_builder()
            .tls_config(tls_config())
            .http_status_as_error(false)
            .max_redirects(0);
        if guard.is_some() {
            config = config.proxy(None);
        }
        UreqOutbound {
            agent: ureq::Agent::with_parts(config.build(), DefaultConnector::new(), resolver),
            guard,
        }
    }

    /// Sends `request` on this thread and reads the answer whole, up to `cap` bytes: for
    /// callers off the tokio runtime (the trace exporter's batch thread).
    pub fn send_blocking(
        &self,
        request: http::Request<Vec<u8>>,
        cap: usize,
    ) -> Result<http::Response<Vec<u8>>, OutboundError> {
        let (parts, body) = self.open(request)?.into_parts();
        let mut reader = body.into_reader();
        let mut whole = Vec::new();
        let mut buf = vec![0u8; CHUNK];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => return Ok(http::Response::from_parts(parts, whole)),
                Ok(n) if n > cap.saturating_sub(whole.len()) => {
                    return Err(OutboundError::TooLarge(cap));
                }
                Ok(n) => whole.extend_from_slice(&buf[..n]),
                Err(e) => return Err(OutboundError::InDoubt(e.to_string())),
            }
        }
    }

    /// Sends `request` and returns the answer's head, its body unread.
    fn open(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<ureq::Body>, OutboundError> {
        if let Some(policy) = self.guard {
            policy
                .check_scheme(request.uri())
                .map_err(OutboundError::Refused)?;
        }
        let timeout = request
            .extensions()
            .get::<Timeout>()
            .map_or(DEFAULT_TIMEOUT, |t| t.0)
            .max(Duration::from_millis(1));
        let (parts, body) = request.into_parts();
        let sent = if body.is_empty() && parts.method == http::Method::GET {
            // No body at all, rather than an empty one with its `content-length: 0`.
            self.run(http::Request::from_parts(parts, ()), timeout)
        } else {
            self.run(http::Request::from_parts(parts, body), timeout)
        };
        sent.map_err(classify)
    }
}

impl UreqOutbound {
    fn run(
        &self,
        request: http::Request<impl ureq::AsSendBody>,
        timeout: Duration,
    ) -> Result<http::Response<ureq::Body>, ureq::Error> {
        let request = self
            .agent
            .configure_request(request)
            .timeout_global(Some(timeout))
            .timeout_connect(Some(timeout.min(CONNECT_TIMEOUT)))
            .build();
        self.agent.run(request)
    }
}

/// Whether `error` happened before anything was sent.
fn classify(error: ureq::Error) -> OutboundError {
    use ureq::Error as E;
    use ureq::Timeout as T;
    match error {
        E::Other(inner) => match inner.downcast::<Refused>() {
            Ok(refused) => OutboundError::Refused(refused.0),
            Err(other) => OutboundError::InDoubt(other.to_string()),
        },
        E::Timeout(T::Resolve | T::Connect) => OutboundError::NotSent("connect timed out".into()),
        E::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            OutboundError::NotSent(format!("connection refused: {io}"))
        }
        e @ (E::HostNotFound
        | E::ConnectionFailed
        | E::BadUri(_)
        | E::Http(_)
        | E::Tls(_)
        | E::Rustls(_)
        | E::TlsRequired) => OutboundError::NotSent(e.to_string()),
        other => OutboundError::InDoubt(other.to_string()),
    }
}

#[async_trait]
impl Outbound for UreqOutbound {
    async fn send(
        &self,
        mut request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError> {
        // Read here, on the caller's task: the blocking thread has no current span.
        if let Some(traceparent) = crate::traceparent()
            && let Ok(value) = http::HeaderValue::from_str(&traceparent)
        {
            request.headers_mut().insert("traceparent", value);
        }
        let (head_tx, head_rx) = oneshot::channel();
        let (chunks, mut body) = mpsc::channel::<Result<Vec<u8>, OutboundError>>(8);
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let (parts, answer) = match this.open(request) {
                Ok(response) => response.into_parts(),
                Err(error) => {
                    let _ = head_tx.send(Err(error));
                    return;
                }
            };
            if head_tx.send(Ok(parts)).is_err() {
                return;
            }
            let mut reader = answer.into_reader();
            let mut buf = vec![0u8; CHUNK];
            loop {
                let item = match reader.read(&mut buf) {
                    Ok(0) => return,
                    Ok(n) => Ok(buf[..n].to_vec()),
                    Err(e) => Err(OutboundError::InDoubt(e.to_string())),
                };
                let failed = item.is_err();
                // A closed receiver is a caller that stopped reading: stop downloading.
                if chunks.blocking_send(item).is_err() || failed {
                    return;
                }
            }
        });
        match head_rx.await {
            Ok(Ok(parts)) => {
                let body: Body = Box::pin(futures::stream::poll_fn(move |cx| body.poll_recv(cx)));
                Ok(http::Response::from_parts(parts, body))
            }
            Ok(Err(error)) => Err(error),
            Err(_) => Err(OutboundError::InDoubt(
                "the request task ended early".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(url: &str) -> http::Request<Vec<u8>> {
        let mut request = http::Request::post(url).body(b"{}".to_vec()).unwrap();
        request
            .extensions_mut()
            .insert(Timeout(Duration::from_secs(2)));
        request
    }

    #[test]
    fn the_policy_allows_public_and_optionally_loopback() {
        let strict = NetPolicy::default();
        let dev = NetPolicy {
            allow_loopback: true,
        };
        for bad in ["127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "fd00::1"] {
            assert!(!strict.allows(bad.parse().unwrap()), "{bad}");
        }
        assert!(dev.allows("127.0.0.1".parse().unwrap()));
        assert!(dev.allows("::1".parse().unwrap()));
        assert!(!dev.allows("10.0.0.1".parse().unwrap()));
        assert!(!dev.allows("169.254.169.254".parse().unwrap()));
        assert!(strict.allows("93.184.216.34".parse().unwrap()));
        let uri = |s: &str| s.parse::<http::Uri>().unwrap();
        assert!(strict.check_scheme(&uri("http://example.com/")).is_err());
        assert!(strict.check_scheme(&uri("https://example.com/")).is_ok());
        assert!(dev.check_scheme(&uri("http://127.0.0.1:1/")).is_ok());
        assert!(dev.check_scheme(&uri("ftp://127.0.0.1/")).is_err());
        assert!(dev.check_scheme(&uri("/no/host")).is_err());
    }

    #[test]
    fn the_guard_refuses_before_sending_and_a_refused_connection_is_not_sent() {
        let strict = UreqOutbound::guarded(NetPolicy::default());
        for url in [
            "http://example.com/mcp",
            "https://127.0.0.1/mcp",
            "https://localhost:9/mcp",
        ] {
            let error = strict.send_blocking(post(url), 1024).unwrap_err();
            assert!(
                matches!(error, OutboundError::Refused(_)),
                "{url}: {error:?}"
            );
        }
        let dev = UreqOutbound::guarded(NetPolicy {
            allow_loopback: true,
        });
        // Loopback allowed, nothing listening on port 9: refused, so not sent.
        let error = dev
            .send_blocking(post("http://127.0.0.1:9/mcp"), 1024)
            .unwrap_err();
        assert!(matches!(error, OutboundError::NotSent(_)), "{error:?}");
        let error = dev
            .send_blocking(post("http://10.0.0.1:9/mcp"), 1024)
            .unwrap_err();
        assert!(matches!(error, OutboundError::Refused(_)), "{error:?}");
    }

    #[test]
    fn the_operator_client_reaches_loopback_over_http() {
        // Nothing listening: the connection is refused, not the URL.
        let error = UreqOutbound::operator()
            .send_blocking(post("http://127.0.0.1:9/v1/chat/completions"), 1024)
            .unwrap_err();
        assert!(matches!(error, OutboundError::NotSent(_)), "{error:?}");
    }
}
