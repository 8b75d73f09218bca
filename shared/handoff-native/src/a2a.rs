//! Native I/O for A2A: a [`JwksSource`] and an [`HttpClient`] over `ureq`,
//! and secure per-subscription tokens.
//!
//! **SSRF guard**: the scheme must be `https`; the host name is resolved once,
//! by ureq through a guarding resolver, and every address must be public
//! ([`handoff_auth::url_guard::check_addresses`]): loopback, private (RFC 1918,
//! CGNAT, ULA), link-local (incl. cloud metadata `169.254.169.254`), multicast,
//! reserved and unspecified addresses are refused. The connection then goes to
//! exactly those checked addresses, so a name that re-resolves elsewhere after
//! the check (DNS rebinding) is never reached. `HANDOFF_A2A_ALLOW_LOOPBACK=true`
//! ([`NetPolicy::from_lookup`]) lets loopback (and `http://`) through, for
//! tests and local development; private and link-local stay refused. No proxy
//! (it would resolve names itself), no redirects, responses capped at 1 MiB,
//! requests time out after 10 s.

pub(crate) mod resolver;

use std::net::IpAddr;
use std::time::Duration;

use async_trait::async_trait;
use handoff_a2a::HttpJwks;
use handoff_a2a::client::{ClientError, HttpClient, HttpRequest, HttpResponse, TokenSource};
use handoff_auth::url_guard::address_allowed;
use resolver::{GuardedResolver, Refused};
use ureq::unversioned::resolver::Resolver;
use ureq::unversioned::transport::DefaultConnector;

/// Largest accepted response body.
const MAX_BODY: u64 = 1024 * 1024;
/// Request timeout.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Which destinations outbound requests may reach.
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

    /// The URL's scheme: `https`, or `http` too with `allow_loopback`. Its
    /// addresses are checked when the request resolves them, not here: a
    /// separate look-up would leave a rebinding window.
    pub fn check_scheme(self, url: &str) -> Result<(), String> {
        let uri: ureq::http::Uri = url.parse().map_err(|e| format!("bad URL: {e}"))?;
        match uri.scheme_str() {
            Some("https") => {}
            Some("http") if self.allow_loopback => {}
            _ => return Err("outbound URLs must be https".to_owned()),
        }
        uri.host().ok_or("the URL has no host")?;
        Ok(())
    }
}

/// A blocking `ureq` agent run on tokio's blocking pool, behind [`NetPolicy`].
#[derive(Debug, Clone)]
pub struct UreqHttp {
    agent: ureq::Agent,
    policy: NetPolicy,
}

impl UreqHttp {
    /// No proxy, no redirects, 10 s timeout, statuses are not errors; names
    /// resolved by the system resolver behind the guard.
    pub fn new(policy: NetPolicy) -> Self {
        Self::with_resolver(policy, GuardedResolver::system(policy))
    }

    fn with_resolver(policy: NetPolicy, resolver: impl Resolver) -> Self {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .build();
        UreqHttp {
            agent: ureq::Agent::with_parts(config, DefaultConnector::new(), resolver),
            policy,
        }
    }

    fn send_blocking(&self, request: &HttpRequest) -> Result<HttpResponse, ClientError> {
        self.policy
            .check_scheme(&request.url)
            .map_err(ClientError::Refused)?;
        let transport = |e: ureq::Error| match e {
            ureq::Error::Other(inner) => match inner.downcast::<Refused>() {
                Ok(refused) => ClientError::Refused(refused.0),
                Err(other) => ClientError::Transport(other.to_string()),
            },
            other => ClientError::Transport(other.to_string()),
        };
        let response = match (request.method, &request.body) {
            ("POST", body) => {
                let mut builder = self.agent.post(&request.url);
                for (name, value) in &request.headers {
                    builder = builder.header(name, value);
                }
                builder
                    .send(body.as_deref().unwrap_or_default())
                    .map_err(transport)?
            }
            _ => {
                let mut builder = self.agent.get(&request.url);
                for (name, value) in &request.headers {
                    builder = builder.header(name, value);
                }
                builder.call().map_err(transport)?
            }
        };
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .into_with_config()
            .limit(MAX_BODY)
            .read_to_vec()
            .map_err(transport)?;
        Ok(HttpResponse { status, body })
    }
}

#[async_trait]
impl HttpClient for UreqHttp {
    async fn send(&self, mut request: HttpRequest) -> Result<HttpResponse, ClientError> {
        // Read here, on the caller's task: the blocking thread has no current span.
        if let Some(traceparent) = crate::traceparent() {
            request
                .headers
                .retain(|(name, _)| !name.eq_ignore_ascii_case("traceparent"));
            request
                .headers
                .push(("traceparent".to_owned(), traceparent));
        }
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.send_blocking(&request))
            .await
            .map_err(|e| ClientError::Transport(format!("request task failed: {e}")))?
    }
}

/// Fetches sender key sets with [`UreqHttp`] (wrap it in `handoff_auth::CachedJwks`).
pub type UreqJwks = HttpJwks<UreqHttp>;

/// A key-set fetcher under `policy`.
pub fn ureq_jwks(policy: NetPolicy) -> UreqJwks {
    HttpJwks(UreqHttp::new(policy))
}

/// Tokens from the OS random generator (two UUID v4s: 244 random bits).
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomTokens;

impl TokenSource for RandomTokens {
    fn token(&self) -> String {
        format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(strict.check_scheme("http://example.com/").is_err());
        assert!(strict.check_scheme("https://example.com/").is_ok());
        assert!(dev.check_scheme("http://127.0.0.1:1/").is_ok());
        assert!(dev.check_scheme("ftp://127.0.0.1/").is_err());
        assert!(dev.check_scheme("not a url").is_err());
    }

    #[test]
    fn tokens_are_long_and_fresh() {
        let (a, b) = (RandomTokens.token(), RandomTokens.token());
        assert!(a.len() >= 32);
        assert_ne!(a, b);
    }
}
