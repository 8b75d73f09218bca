//! Registration-time checks of key-set URLs (the first SSRF fence; the host's
//! fetcher must still refuse private addresses after DNS resolution).

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

fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80)
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
}
