//! Which key-set URLs configuration may name.

use std::net::IpAddr;

use crate::url_guard::check_jwks_url;

/// Accepts an `https` URL of a public host (the A2A receiver's policy). With
/// `allow_insecure`, also `http` or `https` on a loopback host, and nothing else: the
/// flag exists for local tests against a key server on this machine.
pub(crate) fn check_key_set_url(url: &str, allow_insecure: bool) -> Result<(), String> {
    // Shape (scheme, no user info, valid port, no spaces) first, with any host.
    check_jwks_url(url, true)?;
    let secure = url
        .get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"));
    if secure && check_jwks_url(url, false).is_ok() {
        return Ok(());
    }
    let loopback = host(url).is_some_and(is_loopback);
    match (allow_insecure, secure) {
        (true, _) if loopback => Ok(()),
        (true, false) => Err("http is allowed only for a loopback host (127.0.0.1, ::1, localhost)".to_owned()),
        (false, false) => Err(
            "the key-set URL must be https (HANDOFF_JWT_ALLOW_INSECURE_JWKS=true permits http on a loopback host, for local tests)"
                .to_owned(),
        ),
        (_, true) => Err("the key-set URL points at a non-public address".to_owned()),
    }
}

/// The host of a URL that passed [`check_jwks_url`], lowercased, without brackets or port.
fn host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split_once(']')?.0,
        None => authority.split(':').next()?,
    };
    Some(host.to_ascii_lowercase())
}

fn is_loopback(host: String) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::check_key_set_url;

    #[test]
    fn https_public_hosts_pass_and_http_needs_the_flag_and_a_loopback_host() {
        assert!(check_key_set_url("https://idp.example.com/.well-known/jwks.json", false).is_ok());
        assert!(check_key_set_url("http://idp.example.com/jwks", false).is_err());
        assert!(check_key_set_url("http://127.0.0.1:8081/jwks", false).is_err());
        assert!(check_key_set_url("http://127.0.0.1:8081/jwks", true).is_ok());
        assert!(check_key_set_url("http://[::1]:8081/jwks", true).is_ok());
        assert!(check_key_set_url("http://localhost/jwks", true).is_ok());
        assert!(check_key_set_url("http://idp.example.com/jwks", true).is_err());
        assert!(check_key_set_url("http://10.0.0.5/jwks", true).is_err());
        assert!(check_key_set_url("https://169.254.169.254/jwks", false).is_err());
        assert!(check_key_set_url("https://169.254.169.254/jwks", true).is_err());
        assert!(check_key_set_url("ftp://idp.example.com/jwks", true).is_err());
        assert!(check_key_set_url("https://user@idp.example.com/jwks", false).is_err());
    }
}
