//! CORS for browser front ends served from another origin, configured with
//! `HANDOFF_CORS_ORIGINS`: a comma-separated list of origins
//! (`https://app.example.com,http://localhost:3000`) or `*`. Unset or empty means no
//! CORS at all: same-origin and server-to-server callers need none, and the safest
//! default is a browser refusing cross-origin reads.
//!
//! Wire it with [`CorsOrigins::apply`] (the policy plus [`finish_preflight`]); the bare
//! [`CorsOrigins::layer`] is tower-http's layer alone, which answers preflights with 200
//! and sends its method/header lists even to refused origins.

use std::fmt;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use http::header::{self, HeaderName, HeaderValue};
use http::{Method, StatusCode};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// The variable holding the allowed origins.
pub const CORS_ORIGINS_VAR: &str = "HANDOFF_CORS_ORIGINS";

/// How long a browser may cache a preflight answer: long enough to spare a round trip
/// per run, short enough that a tightened origin list takes effect within minutes.
pub const CORS_MAX_AGE: Duration = Duration::from_secs(600);

/// Request headers a cross-origin client may send: JSON bodies, bearer tokens, the
/// A2UI capability header, SSE resumption, content negotiation and `Prefer` (background
/// runs).
const ALLOW_HEADERS: [&str; 6] = [
    "content-type",
    "authorization",
    "x-a2ui",
    "last-event-id",
    "accept",
    "prefer",
];

/// Response headers scripts may read: the run id (to resume or replay a run),
/// `Retry-After` on 429/503 answers, the rate limit's state, the request id (to quote
/// when reporting a problem), and a background run's `Location` and
/// `Preference-Applied`. None is CORS-safelisted.
const EXPOSE_HEADERS: [&str; 7] = [
    "x-handoff-run-id",
    "x-request-id",
    "retry-after",
    "ratelimit-policy",
    "ratelimit",
    "location",
    "preference-applied",
];

/// The origins allowed to call the router from a browser (`HANDOFF_CORS_ORIGINS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorsOrigins {
    allowed: Allowed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Allowed {
    /// `*`: any origin, never with credentials (browsers refuse the combination anyway).
    Any,
    /// Exact, normalised origins (`scheme://host[:port]`, lower case, no default port).
    List(Vec<String>),
}

/// `HANDOFF_CORS_ORIGINS` holds something that is not a list of origins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorsConfigError {
    entry: String,
    reason: &'static str,
}

impl fmt::Display for CorsConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{CORS_ORIGINS_VAR}: {:?} is not allowed: {} (expected `*` or comma-separated origins like \
             `https://app.example.com,http://localhost:3000`)",
            self.entry, self.reason
        )
    }
}

impl std::error::Error for CorsConfigError {}

impl CorsOrigins {
    /// Reads `HANDOFF_CORS_ORIGINS` through the host's variable lookup. `Ok(None)` when it
    /// is unset or blank: serve without CORS.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, CorsConfigError> {
        match lookup(CORS_ORIGINS_VAR) {
            Some(value) => Self::parse(&value),
            None => Ok(None),
        }
    }

    /// Parses the variable's value; see [`CorsOrigins::from_lookup`].
    pub fn parse(value: &str) -> Result<Option<Self>, CorsConfigError> {
        let entries: Vec<&str> = value
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .collect();
        if entries.is_empty() {
            return Ok(None);
        }
        if entries.contains(&"*") {
            // "*,https://a" is almost certainly a mistake; saying so beats silently picking one.
            if entries.len() > 1 {
                return Err(CorsConfigError {
                    entry: value.trim().to_owned(),
                    reason: "`*` cannot be combined with other origins",
                });
            }
            return Ok(Some(CorsOrigins {
                allowed: Allowed::Any,
            }));
        }
        let mut origins = Vec::with_capacity(entries.len());
        for entry in entries {
            let origin = normalise_origin(entry).map_err(|reason| CorsConfigError {
                entry: entry.to_owned(),
                reason,
            })?;
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        Ok(Some(CorsOrigins {
            allowed: Allowed::List(origins),
        }))
    }

    /// `true` for `*`.
    pub fn is_any(&self) -> bool {
        matches!(self.allowed, Allowed::Any)
    }

    /// The normalised origins of an explicit list (empty for `*`).
    pub fn origins(&self) -> &[String] {
        match &self.allowed {
            Allowed::Any => &[],
            Allowed::List(origins) => origins,
        }
    }

    /// Whether a request from `origin` (as the browser sent it) is allowed.
    pub fn allows(&self, origin: &str) -> bool {
        match &self.allowed {
            Allowed::Any => true,
            Allowed::List(origins) => normalise_origin(origin).is_ok_and(|o| origins.contains(&o)),
        }
    }

    /// The CORS policy as tower-http's layer. Prefer [`CorsOrigins::apply`], which also
    /// answers preflights with 204 and keeps refused origins free of CORS headers.
    pub fn layer(&self) -> CorsLayer {
        let layer = CorsLayer::new()
            .allow_methods([Method::GET, Method::POST, Method::OPTIONS])
            .allow_headers(ALLOW_HEADERS.map(HeaderName::from_static))
            .expose_headers(EXPOSE_HEADERS.map(HeaderName::from_static))
            .max_age(CORS_MAX_AGE);
        match &self.allowed {
            Allowed::Any => layer.allow_origin(AllowOrigin::any()),
            // Credentials (cookies such as Cloudflare Access's, HTTP auth) only for origins
            // named one by one: with `*` any site could ride a signed-in user's session.
            Allowed::List(origins) => layer
                .allow_origin(AllowOrigin::list(
                    // Normalisation admitted only visible ASCII, so these cannot fail.
                    origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()),
                ))
                .allow_credentials(true),
        }
    }

    /// `router` behind this CORS policy: [`CorsOrigins::layer`] inside [`finish_preflight`].
    pub fn apply<S>(&self, router: Router<S>) -> Router<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        router
            .layer(self.layer())
            .layer(middleware::from_fn(finish_preflight))
    }
}

/// Completes tower-http's answers (use outside [`CorsOrigins::layer`]): a preflight gets
/// 204 No Content, the conventional status of a bodiless answer, and a response without
/// `Access-Control-Allow-Origin` (a refused or absent origin) loses the other CORS headers,
/// which tower-http adds whatever the origin, so a refused site learns nothing of the policy.
pub async fn finish_preflight(request: Request, next: Next) -> Response {
    // tower-http answers every OPTIONS itself, so an OPTIONS 200 here is its preflight answer.
    let preflight = request.method() == Method::OPTIONS;
    let mut response = next.run(request).await;
    if !response
        .headers()
        .contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN)
    {
        let cors: Vec<HeaderName> = response
            .headers()
            .keys()
            .filter(|name| name.as_str().starts_with("access-control-"))
            .cloned()
            .collect();
        for name in cors {
            response.headers_mut().remove(name);
        }
    }
    if preflight && response.status() == StatusCode::OK {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// `scheme://host[:port]` as browsers serialise it in `Origin`: lower case, no default
/// port, no trailing slash. Anything else could never match and would fail silently.
fn normalise_origin(entry: &str) -> Result<String, &'static str> {
    let (scheme, rest) = entry
        .split_once("://")
        .ok_or("an origin starts with http:// or https://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "https" => "443",
        "http" => "80",
        _ => return Err("only http and https origins are supported"),
    };
    // One trailing slash is a common copy-paste from the address bar: tolerate it.
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.contains(['/', '?', '#']) {
        return Err("an origin has no path, query or fragment");
    }
    if authority.contains('@') {
        return Err("an origin has no user name or password");
    }
    if authority.contains('*') {
        return Err("wildcard subdomains are not supported; list each origin");
    }
    let (host, port) = split_host_port(authority)?;
    if host.is_empty() {
        return Err("the host is missing");
    }
    let host = host.to_ascii_lowercase();
    let valid_host = if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        !inner.is_empty()
            && inner
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
    } else {
        host.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
    };
    if !valid_host {
        return Err("the host has characters an origin cannot contain");
    }
    match port {
        None => Ok(format!("{scheme}://{host}")),
        Some(port) => {
            if port.is_empty()
                || !port.chars().all(|c| c.is_ascii_digit())
                || port.parse::<u16>().is_err()
            {
                return Err("the port is not a number from 0 to 65535");
            }
            let port = port.trim_start_matches('0');
            let port = if port.is_empty() { "0" } else { port };
            if port == default_port {
                Ok(format!("{scheme}://{host}"))
            } else {
                Ok(format!("{scheme}://{host}:{port}"))
            }
        }
    }
}

/// Splits `host[:port]`, where host may be a bracketed IPv6 address.
fn split_host_port(authority: &str) -> Result<(&str, Option<&str>), &'static str> {
    if authority.starts_with('[') {
        let end = authority
            .find(']')
            .ok_or("an IPv6 host needs its closing `]`")?;
        let (host, rest) = authority.split_at(end + 1);
        return match rest {
            "" => Ok((host, None)),
            _ => rest
                .strip_prefix(':')
                .map(|port| (host, Some(port)))
                .ok_or("unexpected text after the IPv6 host"),
        };
    }
    Ok(match authority.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    })
}

#[cfg(test)]
mod tests;
