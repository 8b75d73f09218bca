//! Native I/O for A2A: a [`JwksSource`] and an [`HttpClient`] over `ureq`,
//! and secure per-subscription tokens.
//!
//! **SSRF guard**: before every request the host name is resolved and every
//! address must be public; loopback, private (RFC 1918, CGNAT, ULA),
//! link-local (incl. cloud metadata `169.254.169.254`), multicast and
//! unspecified addresses are refused. `HANDOFF_A2A_ALLOW_LOOPBACK=true`
//! ([`NetPolicy::from_lookup`]) lets loopback (and `http://`) through, for
//! tests and local development; private and link-local stay refused. Redirects
//! are not followed, responses are capped at 1 MiB, requests time out after
//! 10 s. (The resolve-then-connect gap leaves a DNS-rebinding window; a
//! custom ureq resolver would close it.)

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use handoff_a2a::client::{ClientError, HttpClient, HttpRequest, HttpResponse, TokenSource};
use handoff_a2a::jwks::{JwkSet, JwksError, JwksSource, parse_jwks};

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
        if ip.is_loopback() {
            return self.allow_loopback;
        }
        is_public(ip)
    }

    /// Checks the URL's scheme and every address its host resolves to.
    pub fn check(self, url: &str) -> Result<(), String> {
        let uri: ureq::http::Uri = url.parse().map_err(|e| format!("bad URL: {e}"))?;
        let default_port = match uri.scheme_str() {
            Some("https") => 443,
            Some("http") if self.allow_loopback => 80,
            _ => return Err("outbound URLs must be https".to_owned()),
        };
        let host = uri.host().ok_or("the URL has no host")?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port = uri.port_u16().unwrap_or(default_port);
        let addrs: Vec<_> = (host, port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {host}: {e}"))?
            .collect();
        if addrs.is_empty() {
            return Err(format!("{host} resolves to no address"));
        }
        match addrs.iter().find(|a| !self.allows(a.ip())) {
            Some(bad) => Err(format!(
                "{host} resolves to a non-public address {}",
                bad.ip()
            )),
            None => Ok(()),
        }
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_unspecified()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0)
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let first = ip.segments()[0];
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80)
}

/// Whether `ip` is a public unicast address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

/// A blocking `ureq` agent run on tokio's blocking pool, behind [`NetPolicy`].
#[derive(Debug, Clone)]
pub struct UreqHttp {
    agent: ureq::Agent,
    policy: NetPolicy,
}

impl UreqHttp {
    /// No redirects, 10 s timeout, statuses are not errors.
    pub fn new(policy: NetPolicy) -> Self {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            .http_status_as_error(false)
            .max_redirects(0)
            .build();
        UreqHttp {
            agent: ureq::Agent::new_with_config(config),
            policy,
        }
    }

    fn send_blocking(&self, request: &HttpRequest) -> Result<HttpResponse, ClientError> {
        self.policy
            .check(&request.url)
            .map_err(ClientError::Refused)?;
        let transport = |e: ureq::Error| ClientError::Transport(e.to_string());
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
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, ClientError> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.send_blocking(&request))
            .await
            .map_err(|e| ClientError::Transport(format!("request task failed: {e}")))?
    }
}

/// Fetches sender key sets with [`UreqHttp`] (wrap it in `handoff_a2a::CachedJwks`).
#[derive(Debug, Clone)]
pub struct UreqJwks {
    http: UreqHttp,
}

impl UreqJwks {
    /// A key-set fetcher under `policy`.
    pub fn new(policy: NetPolicy) -> Self {
        UreqJwks {
            http: UreqHttp::new(policy),
        }
    }
}

#[async_trait]
impl JwksSource for UreqJwks {
    async fn key_set(
        &self,
        url: &str,
        _now_ms: u64,
        _refresh: bool,
    ) -> Result<Arc<JwkSet>, JwksError> {
        let response = self
            .http
            .send(HttpRequest {
                method: "GET",
                url: url.to_owned(),
                headers: vec![("Accept".to_owned(), "application/json".to_owned())],
                body: None,
            })
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
    fn refuses_private_addresses() {
        let strict = NetPolicy::default();
        let dev = NetPolicy {
            allow_loopback: true,
        };
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:10.0.0.1",
        ] {
            let ip: IpAddr = bad.parse().unwrap();
            assert!(!strict.allows(ip), "{bad}");
        }
        assert!(dev.allows("127.0.0.1".parse().unwrap()));
        assert!(dev.allows("::1".parse().unwrap()));
        assert!(!dev.allows("10.0.0.1".parse().unwrap()));
        assert!(!dev.allows("169.254.169.254".parse().unwrap()));
        assert!(strict.allows("93.184.216.34".parse().unwrap()));
        assert!(strict.check("http://127.0.0.1:1/").is_err());
        assert!(strict.check("https://127.0.0.1:1/").is_err());
        assert!(dev.check("http://127.0.0.1:1/").is_ok());
        assert!(dev.check("http://10.0.0.1/").is_err());
        assert!(dev.check("ftp://127.0.0.1/").is_err());
    }

    #[test]
    fn tokens_are_long_and_fresh() {
        let (a, b) = (RandomTokens.token(), RandomTokens.token());
        assert!(a.len() >= 32);
        assert_ne!(a, b);
    }
}
