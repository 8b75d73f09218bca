//! The deployment's public origin, which the A2A card and the MCP resource metadata name.

use http::{HeaderMap, header};

use crate::AppState;

/// The deployment's base URL: `HANDOFF_PUBLIC_URL`, else the request's origin.
pub(crate) fn origin_of(app: &AppState, headers: &HeaderMap) -> String {
    app.config
        .public_url
        .clone()
        .unwrap_or_else(|| origin(headers))
}

/// The request's origin: `X-Forwarded-Proto` (else https, but http on loopback) and `Host`.
fn origin(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("localhost");
    let loopback = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .any(|name| host == *name || host.starts_with(&format!("{name}:")));
    let scheme = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .unwrap_or(if loopback { "http" } else { "https" });
    format!("{scheme}://{host}")
}
