//! The outbound address policy: checks of URLs before any request (key-set URLs at
//! registration, [`check_jwks_url`]; every other outbound call, [`check_outbound_url`]: the
//! first SSRF fence), and [`check_addresses`], which a host's transport applies to the
//! addresses a name resolved to before connecting to exactly those.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Accepts `https://host[:port]/...` whose host is a public name or address.
/// With `allow_insecure`, `http://` and local or private hosts pass too.
pub fn check_jwks_url(url: &str, allow_insecure: bool) -> Result<(), String> {
    let rest = if let Some(rest) = strip_prefix_ignore_case(url, "https://") {
        rest
    } else if let Some(rest) = strip_prefix_ignore_case(url, "http://")
        && allow_insecure
    {
        rest
    } else {
        return Err("the key-set URL must be https".to_owned());
    };
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("the key-set URL contains spaces or control characters".to_owned());
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err("the key-set URL must not carry user info".to_owned());
    }
    let host = if let Some(bracketed) = authority.strip_prefix('[') {
        let (host, after) = bracketed
            .split_once(']')
            .ok_or("unterminated IPv6 address")?;
        check_port(after.strip_prefix(':'), after.is_empty())?;
        host.to_owned()
    } else {
        let (host, port) = match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        };
        check_port(port, port.is_none())?;
        host.to_ascii_lowercase()
    };
    if host.is_empty() {
        return Err("the key-set URL has no host".to_owned());
    }
    if allow_insecure {
        return Ok(());
    }
    if host == "localhost" || host.ends_with(".localhost") {
        return Err("the key-set URL points at this machine".to_owned());
    }
    match host.parse::<IpAddr>() {
        Ok(ip) if !is_public(ip) => {
            Err("the key-set URL points at a non-public address".to_owned())
        }
        Ok(_) => Ok(()),
        // Resolvers read `2130706433` or `0x7f.1` as addresses; real TLDs are never numeric.
        Err(_) if looks_numeric(&host) => {
            Err("the key-set URL host is an unusual address spelling".to_owned())
        }
        Err(_) => Ok(()),
    }
}

/// Outbound URL policy: `https` to public hosts; with `allow_loopback`,
/// `http` too and loopback hosts (`localhost`, `127.0.0.0/8`, `::1`), never
/// private or link-local ones.
pub fn check_outbound_url(url: &str, allow_loopback: bool) -> Result<(), String> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let rest = if lower.starts_with("https://") {
        &url[8..]
    } else if lower.starts_with("http://") && allow_loopback {
        &url[7..]
    } else {
        return Err("outbound A2A URLs must be https".to_owned());
    };
    let as_https = format!("https://{rest}");
    match check_jwks_url(&as_https, false) {
        Ok(()) => Ok(()),
        Err(reason) => {
            // Structural checks (user info, ports, spaces) pass in insecure mode only if well-formed.
            check_jwks_url(&as_https, true)?;
            if allow_loopback && is_loopback_host(rest) {
                Ok(())
            } else {
                Err(reason.replace("key-set", "outbound"))
            }
        }
    }
}

/// Whether the host of `rest` (a URL after its `scheme://`) is `localhost`, a name under
/// `.localhost`, or a loopback address.
fn is_loopback_host(rest: &str) -> bool {
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(b) => b.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    }
    .to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

fn check_port(port: Option<&str>, absent_ok: bool) -> Result<(), String> {
    match port {
        None if absent_ok => Ok(()),
        Some(p) if !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => Ok(()),
        _ => Err("the key-set URL has an invalid port".to_owned()),
    }
}

fn looks_numeric(host: &str) -> bool {
    let last = host.trim_end_matches('.').rsplit('.').next().unwrap_or("");
    !last.is_empty()
        && (last.bytes().all(|b| b.is_ascii_digit())
            || last.starts_with("0x")
            || last.starts_with("0X"))
}

/// Whether `ip` is a public unicast address: not loopback, private (RFC 1918,
/// CGNAT, ULA), link-local (incl. cloud metadata `169.254.169.254`), multicast,
/// unspecified, reserved, benchmarking or documentation; IPv4 embedded in IPv6
/// (mapped, compatible, NAT64) is judged as the IPv4 address it reaches.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

/// Whether an outbound request may connect to `ip`: public addresses, and
/// loopback only with `allow_loopback` (tests, local development).
pub fn address_allowed(ip: IpAddr, allow_loopback: bool) -> bool {
    let ip = ip.to_canonical();
    if ip.is_loopback() {
        return allow_loopback;
    }
    is_public(ip)
}

/// Checks **every** address `host` resolved to: one off-limits address refuses
/// the lot (a name that mixes public and private answers is a rebinding
/// attempt, and the connector may try any of them). The caller must then
/// connect only to these checked addresses, never resolve the name again.
pub fn check_addresses(host: &str, addrs: &[IpAddr], allow_loopback: bool) -> Result<(), String> {
    if addrs.is_empty() {
        return Err(format!("{host} resolves to no address"));
    }
    match addrs
        .iter()
        .find(|ip| !address_allowed(**ip, allow_loopback))
    {
        Some(bad) => Err(format!("{host} resolves to a non-public address {bad}")),
        None => Ok(()),
    }
}

/// The IPv4 address an IPv6 address reaches: `::ffff:a.b.c.d`, the deprecated
/// `::a.b.c.d` (which also covers `::` and `::1`), and NAT64 `64:ff9b::a.b.c.d`.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = || Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
    match s {
        [0, 0, 0, 0, 0, 0xffff, ..] | [0, 0, 0, 0, 0, 0, ..] => Some(tail()),
        [0x64, 0xff9b, 0, 0, 0, 0, ..] => Some(tail()),
        _ => None,
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b == 18 || b == 19))
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let [first, second, ..] = ip.segments();
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || (first & 0xffc0) == 0xfec0
        || (first == 0x2001 && second == 0x0db8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_public_https() {
        for url in [
            "https://agent.example.com/.well-known/jwks.json",
            "HTTPS://agent.example.com:8443/jwks",
            "https://93.184.216.34/jwks",
            "https://[2606:4700::1111]/jwks",
        ] {
            assert_eq!(check_jwks_url(url, false), Ok(()), "{url}");
        }
    }

    #[test]
    fn refuses_local_private_and_odd() {
        for url in [
            "http://agent.example.com/jwks",
            "https://localhost/jwks",
            "https://api.localhost/jwks",
            "https://127.0.0.1/jwks",
            "https://10.1.2.3/jwks",
            "https://172.16.0.1/jwks",
            "https://192.168.1.1/jwks",
            "https://169.254.169.254/latest",
            "https://100.64.0.1/",
            "https://0.0.0.0/",
            "https://[::1]/jwks",
            "https://[fd00::1]/jwks",
            "https://[fe80::1]/jwks",
            "https://[::ffff:127.0.0.1]/jwks",
            "https://2130706433/jwks",
            "https://0x7f.1/jwks",
            "https://user:pw@agent.example.com/jwks",
            "https://agent.example.com:99999999/jwks",
            "https:///jwks",
            "https://agent.example.com/a b",
            "ftp://agent.example.com/jwks",
        ] {
            assert!(check_jwks_url(url, false).is_err(), "{url}");
        }
        assert_eq!(check_jwks_url("http://127.0.0.1:9/jwks", true), Ok(()));
    }

    #[test]
    fn outbound_urls_are_guarded() {
        assert!(check_outbound_url("https://agent.example.com/a2a", false).is_ok());
        assert!(check_outbound_url("http://agent.example.com/a2a", false).is_err());
        assert!(check_outbound_url("https://127.0.0.1/a2a", false).is_err());
        assert!(check_outbound_url("https://10.0.0.1/a2a", false).is_err());
        assert!(check_outbound_url("https://169.254.169.254/", false).is_err());
        assert!(check_outbound_url("http://127.0.0.1:9000/a2a", true).is_ok());
        assert!(check_outbound_url("http://localhost:9000/", true).is_ok());
        assert!(check_outbound_url("http://[::1]:9000/", true).is_ok());
        assert!(check_outbound_url("http://10.0.0.1/", true).is_err());
        assert!(check_outbound_url("http://169.254.169.254/", true).is_err());
        assert!(check_outbound_url("ftp://x/", true).is_err());
    }

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter().map(|a| a.parse().unwrap()).collect()
    }

    #[test]
    fn every_resolved_address_must_be_allowed() {
        let public = ips(&["93.184.216.34", "2606:4700::1111"]);
        assert_eq!(check_addresses("a.example", &public, false), Ok(()));
        // One private answer among public ones refuses the whole name.
        let mixed = ips(&["93.184.216.34", "10.0.0.7"]);
        let err = check_addresses("a.example", &mixed, false).unwrap_err();
        assert!(err.contains("10.0.0.7"), "{err}");
        assert!(check_addresses("a.example", &[], true).is_err());
        // Loopback only when allowed; private and link-local never.
        let local = ips(&["127.0.0.1", "::1", "::ffff:127.0.0.1"]);
        assert!(check_addresses("localhost", &local, false).is_err());
        assert_eq!(check_addresses("localhost", &local, true), Ok(()));
        for bad in ["10.1.2.3", "169.254.169.254", "fd00::1", "fe80::1"] {
            assert!(check_addresses("x", &ips(&[bad]), true).is_err(), "{bad}");
        }
    }

    #[test]
    fn private_addresses_hidden_in_ipv6_are_refused() {
        for bad in [
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::10.0.0.1",
            "64:ff9b::a00:1",
            "64:ff9b::7f00:1",
            "::",
            "2001:db8::1",
            "fec0::1",
            "198.18.0.1",
            "192.0.0.8",
            "100.100.100.100",
            "240.0.0.1",
        ] {
            let ip: IpAddr = bad.parse().unwrap();
            assert!(!is_public(ip), "{bad}");
            assert!(!address_allowed(ip, false), "{bad}");
        }
        for good in [
            "64:ff9b::5db8:d822",
            "::ffff:93.184.216.34",
            "192.0.1.1",
            "8.8.8.8",
        ] {
            assert!(is_public(good.parse().unwrap()), "{good}");
        }
    }
}
