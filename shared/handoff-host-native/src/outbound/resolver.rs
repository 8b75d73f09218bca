//! The SSRF guard at connection time: a ureq resolver that looks the host up
//! once, refuses the request unless every answer passes the policy
//! ([`handoff_auth::url_guard::check_addresses`]), and hands ureq exactly those
//! checked addresses to connect to. There is no second lookup, so a name that
//! re-resolves to loopback or a private address after the check (DNS
//! rebinding) is never reached.

use std::fmt;

use handoff_auth::url_guard::check_addresses;
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

use super::NetPolicy;

/// Why the guard refused; carried through `ureq::Error::Other` so the caller
/// can answer `OutboundError::Refused` rather than a transport failure.
#[derive(Debug)]
pub(crate) struct Refused(pub(crate) String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Wraps the lookup (the system resolver in production, a scripted one in tests).
#[derive(Debug)]
pub(crate) struct GuardedResolver {
    pub(crate) policy: NetPolicy,
    pub(crate) lookup: Box<dyn Resolver>,
}

impl GuardedResolver {
    pub(crate) fn system(policy: NetPolicy) -> Self {
        GuardedResolver {
            policy,
            lookup: Box::new(DefaultResolver::default()),
        }
    }
}

impl Resolver for GuardedResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let addrs = self.lookup.resolve(uri, config, timeout)?;
        let ips: Vec<_> = addrs.iter().map(|a| a.ip()).collect();
        let host = uri.host().unwrap_or_default();
        check_addresses(host, &ips, self.policy.allow_loopback)
            .map_err(|reason| ureq::Error::Other(Box::new(Refused(reason))))?;
        Ok(addrs)
    }
}

#[cfg(test)]
mod tests {
    use std::io::{ErrorKind, Read, Write};
    use std::net::{SocketAddr, TcpListener};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use handoff_core::outbound::OutboundError;

    use super::*;
    use crate::outbound::UreqOutbound;

    /// A scripted DNS: answer `n` for the `n`-th look-up (the last one repeats),
    /// like a rebinding name server that answers differently the second time.
    #[derive(Debug, Clone)]
    struct Script {
        answers: Arc<Vec<Vec<SocketAddr>>>,
        calls: Arc<AtomicUsize>,
    }

    impl Script {
        fn new(answers: Vec<Vec<SocketAddr>>) -> Self {
            Script {
                answers: Arc::new(answers),
                calls: Arc::new(AtomicUsize::new(0)),
            }
        }
    }

    impl Resolver for Script {
        fn resolve(
            &self,
            _uri: &Uri,
            _config: &Config,
            _timeout: NextTimeout,
        ) -> Result<ResolvedSocketAddrs, ureq::Error> {
            let call = self.calls.fetch_add(1, Ordering::SeqCst);
            let mut out = self.empty();
            for addr in &self.answers[call.min(self.answers.len() - 1)] {
                out.push(*addr);
            }
            Ok(out)
        }
    }

    fn client(policy: NetPolicy, script: &Script) -> UreqOutbound {
        let resolver = GuardedResolver {
            policy,
            lookup: Box::new(script.clone()),
        };
        UreqOutbound::with_resolver(Some(policy), resolver)
    }

    fn get(url: &str) -> http::Request<Vec<u8>> {
        http::Request::get(url).body(Vec::new()).unwrap()
    }

    const CAP: usize = 1024;

    /// A listener that must never see a connection.
    fn untouched() -> TcpListener {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        listener
    }

    fn assert_untouched(listener: &TcpListener) {
        let err = listener.accept().map(|_| ()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::WouldBlock, "it was connected to");
    }

    #[test]
    fn connects_to_the_address_it_checked_and_never_looks_up_again() {
        let checked = TcpListener::bind("127.0.0.1:0").unwrap();
        let rebound = untouched();
        let script = Script::new(vec![
            vec![checked.local_addr().unwrap()],
            vec![rebound.local_addr().unwrap()],
        ]);
        let server = std::thread::spawn(move || {
            let (mut stream, _) = checked.accept().unwrap();
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf).unwrap();
            stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
                .unwrap();
        });
        let dev = NetPolicy {
            allow_loopback: true,
        };
        let response = client(dev, &script)
            .send_blocking(get("http://rebind.test/"), CAP)
            .unwrap();
        server.join().unwrap();
        assert_eq!(
            (response.status().as_u16(), response.body().as_slice()),
            (200, &b"ok"[..])
        );
        assert_eq!(
            script.calls.load(Ordering::SeqCst),
            1,
            "one look-up per request"
        );
        assert_untouched(&rebound);
    }

    #[test]
    fn one_off_limits_answer_refuses_the_request_before_any_connection() {
        let local = untouched();
        let public: SocketAddr = "93.184.216.34:443".parse().unwrap();
        let script = Script::new(vec![vec![public, local.local_addr().unwrap()]]);
        let err = client(NetPolicy::default(), &script)
            .send_blocking(get("https://rebind.test/"), CAP)
            .unwrap_err();
        match err {
            OutboundError::Refused(reason) => assert!(reason.contains("127.0.0.1"), "{reason}"),
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert_untouched(&local);
    }

    #[test]
    fn private_answers_stay_refused_when_loopback_is_allowed() {
        let dev = NetPolicy {
            allow_loopback: true,
        };
        for answer in ["10.0.0.1:80", "169.254.169.254:80", "[fd00::1]:80"] {
            let script = Script::new(vec![vec![answer.parse().unwrap()]]);
            let err = client(dev, &script)
                .send_blocking(get("http://rebind.test/"), CAP)
                .unwrap_err();
            assert!(
                matches!(err, OutboundError::Refused(_)),
                "{answer}: {err:?}"
            );
        }
    }

    #[test]
    fn the_system_resolver_is_guarded_too() {
        let err = UreqOutbound::guarded(NetPolicy::default())
            .send_blocking(get("https://localhost:1/"), CAP)
            .unwrap_err();
        assert!(matches!(err, OutboundError::Refused(_)), "{err:?}");
    }
}
