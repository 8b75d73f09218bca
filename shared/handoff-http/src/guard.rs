//! Refusals that come before any route reads or writes anything: cross-site
//! state-changing requests and, on an unauthenticated endpoint, DNS rebinding.
//!
//! - **Cross-site requests**: a `POST`, `PUT`, `PATCH` or `DELETE` whose `Origin` is
//!   present and neither this endpoint's own origin nor one listed in
//!   `HANDOFF_CORS_ORIGINS` — or, without an allowed `Origin`, whose `Sec-Fetch-Site` is
//!   `cross-site` — gets 403 `ORIGIN_NOT_ALLOWED`. Requests without `Origin` (curl, SDKs,
//!   server-to-server) are unaffected: a browser always sends it on such requests.
//! - **DNS rebinding**: an endpoint without authentication (`HANDOFF_AUTH=none`) answers
//!   only requests whose `Host` is `localhost`, `127.0.0.1`, `[::1]` or a name in
//!   `HANDOFF_ALLOWED_HOSTS` (comma-separated); any other gets 403 `HOST_NOT_ALLOWED`, so a
//!   page on an attacker's domain that resolves to 127.0.0.1 cannot drive the local agent.
//!   Without `Host` the URI's authority (HTTP/2's `:authority`) is the name; a request with
//!   neither is refused too once `HANDOFF_ALLOWED_HOSTS` lists names.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use handoff_core::codes;
use http::{HeaderMap, Method, Uri, header};

use crate::cors::CorsOrigins;
use crate::error::ApiError;

/// The variable listing extra host names an unauthenticated endpoint answers.
pub const ALLOWED_HOSTS_VAR: &str = "HANDOFF_ALLOWED_HOSTS";

/// What the guard allows.
#[derive(Debug, Clone, Default)]
pub(crate) struct Guard {
    /// `HANDOFF_CORS_ORIGINS`, normalised.
    pub(crate) origins: Option<CorsOrigins>,
    /// `Some` on an unauthenticated endpoint: host names allowed besides loopback.
    pub(crate) hosts: Option<Vec<String>>,
}

impl Guard {
    pub(crate) fn check(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> Result<(), ApiError> {
        // HTTP/2 and HTTP/3 carry the name as `:authority`, which becomes the URI's
        // authority rather than a `Host` header.
        let host = header_str(headers, header::HOST.as_str())
            .or_else(|| uri.authority().map(|a| a.as_str()));
        if let Some(allowed) = &self.hosts {
            check_host(allowed, host)?;
        }
        let changes_state = matches!(
            *method,
            Method::POST | Method::PUT | Method::PATCH | Method::DELETE
        );
        if !changes_state {
            return Ok(());
        }
        let origin = header_str(headers, header::ORIGIN.as_str());
        let allowed_origin = origin.is_some_and(|o| self.origin_allowed(o, host));
        let cross_site = header_str(headers, "sec-fetch-site") == Some("cross-site");
        if allowed_origin || (origin.is_none() && !cross_site) {
            return Ok(());
        }
        Err(ApiError::new(
            codes::ORIGIN_NOT_ALLOWED,
            "cross-site requests that change state are refused; list the front end's origin \
             in HANDOFF_CORS_ORIGINS",
        ))
    }

    fn origin_allowed(&self, origin: &str, host: Option<&str>) -> bool {
        // Same origin: the browser's page came from this endpoint (scheme aside, which a
        // proxy in front may change).
        let authority = origin.split_once("://").map_or("", |(_, rest)| rest);
        if host.is_some_and(|h| h.eq_ignore_ascii_case(authority)) {
            return true;
        }
        self.origins.as_ref().is_some_and(|o| o.allows(origin))
    }
}

/// `Err` unless `host` (`None`: the request names none) is loopback or listed.
fn check_host(allowed: &[String], host: Option<&str>) -> Result<(), ApiError> {
    let refused = || {
        ApiError::new(
            codes::HOST_NOT_ALLOWED,
            format!(
                "this endpoint has no authentication and answers only localhost; \
                 list other host names in {ALLOWED_HOSTS_VAR}"
            ),
        )
    };
    let Some(host) = host else {
        // Neither `Host` nor an authority: the name cannot be checked. Deployed hosts'
        // requests carry one (Lambda builds its URI from the event's host, a Worker's
        // is the full URL), so this is mostly the dev server or a router driven
        // in-process. Without a list the dev server binds 127.0.0.1 and answers loopback
        // only, so the request comes from this machine; with one the endpoint is
        // meant to be reached beyond it, and leaving the name out must not skip the
        // check.
        return if allowed.is_empty() {
            Ok(())
        } else {
            Err(refused())
        };
    };
    let name = host_name(host).to_ascii_lowercase();
    let loopback = matches!(name.as_str(), "localhost" | "127.0.0.1" | "[::1]");
    if !loopback && !allowed.iter().any(|a| a.eq_ignore_ascii_case(&name)) {
        return Err(refused());
    }
    Ok(())
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// `host[:port]` without the port (a bracketed IPv6 address keeps its brackets).
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    host.split_once(':').map_or(host, |(name, _)| name)
}

/// The middleware: a refusal is answered before the route (nothing read or written).
pub(crate) async fn guard(
    axum::extract::State(guard): axum::extract::State<std::sync::Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    match guard.check(request.method(), request.uri(), request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    }
}

/// `HANDOFF_ALLOWED_HOSTS` as lower-case names.
pub(crate) fn allowed_hosts(lookup: impl Fn(&str) -> Option<String>) -> Vec<String> {
    lookup(ALLOWED_HOSTS_VAR)
        .unwrap_or_default()
        .split(',')
        .map(|h| h.trim().to_ascii_lowercase())
        .filter(|h| !h.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use handoff_core::codes::ErrorCode;
    use http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn code(guard: &Guard, method: Method, pairs: &[(&'static str, &str)]) -> Option<&'static str> {
        guard
            .check(&method, &Uri::from_static("/"), &headers(pairs))
            .err()
            .map(|e| e.code().name)
    }

    #[test]
    fn a_cross_site_post_is_refused_and_same_origin_or_listed_ones_pass() {
        let guard = Guard {
            origins: CorsOrigins::parse("https://app.example.com").unwrap(),
            hosts: None,
        };
        let host = ("host", "api.example.com");
        let evil = [host, ("origin", "https://evil.example")];
        assert_eq!(
            code(&guard, Method::POST, &evil),
            Some("ORIGIN_NOT_ALLOWED")
        );
        assert_eq!(
            code(&guard, Method::DELETE, &evil),
            Some("ORIGIN_NOT_ALLOWED")
        );
        assert_eq!(
            code(&guard, Method::GET, &evil),
            None,
            "reads are CORS's business"
        );
        let listed = [
            host,
            ("origin", "https://app.example.com"),
            ("sec-fetch-site", "cross-site"),
        ];
        assert_eq!(code(&guard, Method::POST, &listed), None);
        let same = [host, ("origin", "https://api.example.com")];
        assert_eq!(code(&guard, Method::POST, &same), None);
        assert_eq!(
            code(&guard, Method::POST, &[host]),
            None,
            "no Origin: not a browser"
        );
        let no_origin = [host, ("sec-fetch-site", "cross-site")];
        assert_eq!(
            code(&guard, Method::PATCH, &no_origin),
            Some("ORIGIN_NOT_ALLOWED")
        );
        let null = [host, ("origin", "null")];
        assert_eq!(
            code(&guard, Method::POST, &null),
            Some("ORIGIN_NOT_ALLOWED")
        );
    }

    #[test]
    fn without_authentication_only_loopback_or_listed_hosts_are_answered() {
        let guard = Guard {
            origins: None,
            hosts: Some(vec!["dev.internal".to_owned()]),
        };
        for host in [
            "localhost:8080",
            "127.0.0.1",
            "[::1]:8080",
            "DEV.internal:1",
        ] {
            assert_eq!(code(&guard, Method::GET, &[("host", host)]), None, "{host}");
        }
        let rebound = [("host", "attacker.example:8080")];
        assert_eq!(
            code(&guard, Method::GET, &rebound),
            Some("HOST_NOT_ALLOWED")
        );
        assert_eq!(
            code(&Guard::default(), Method::GET, &rebound),
            None,
            "authenticated"
        );
    }

    #[test]
    fn without_host_the_uri_names_it_and_a_nameless_request_needs_loopback_only() {
        let check = |guard: &Guard, uri: &'static str| {
            guard
                .check(&Method::GET, &Uri::from_static(uri), &HeaderMap::new())
                .err()
                .map(|e| e.code().name)
        };
        let listed = Guard {
            origins: None,
            hosts: Some(vec!["dev.internal".to_owned()]),
        };
        assert_eq!(check(&listed, "/threads"), Some("HOST_NOT_ALLOWED"));
        assert_eq!(check(&listed, "http://dev.internal:8080/threads"), None);
        let rebound = "http://attacker.example/threads";
        assert_eq!(check(&listed, rebound), Some("HOST_NOT_ALLOWED"));
        let loopback_only = Guard {
            origins: None,
            hosts: Some(Vec::new()),
        };
        assert_eq!(
            check(&loopback_only, "/threads"),
            None,
            "bound to 127.0.0.1"
        );
        assert_eq!(check(&loopback_only, rebound), Some("HOST_NOT_ALLOWED"));
    }
}
