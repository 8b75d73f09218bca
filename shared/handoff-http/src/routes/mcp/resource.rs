//! OAuth 2.1 protected-resource metadata (RFC 9728) for MCP clients, served when the
//! authenticator takes OAuth access tokens (`HANDOFF_AUTH=jwt`): where `/mcp`'s tokens come
//! from, at `/.well-known/oauth-protected-resource` and its `/mcp`-suffixed path, and named
//! in the `WWW-Authenticate` challenge of a 401 from `/mcp`.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use serde_json::json;

use crate::AppState;

/// Where the metadata is served (also with `/mcp` appended, as RFC 9728 derives it).
pub(crate) const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The metadata document.
pub(crate) async fn metadata(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let base = super::super::origin::origin_of(&app, request.headers());
    let document = json!({
        "resource": format!("{base}/mcp"),
        "authorization_servers": app.auth.0.authorization_servers(),
        "bearer_methods_supported": ["header"],
        "resource_name": app.engine.agent_name(),
    });
    let mut response = Json(document).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    response
}

/// A 401 from `/mcp` names the metadata in its challenge.
pub(crate) async fn challenge(
    State(app): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let mcp = request.uri().path() == "/mcp";
    let base = super::super::origin::origin_of(&app, request.headers());
    let mut response = next.run(request).await;
    if mcp && response.status() == StatusCode::UNAUTHORIZED {
        let metadata = format!("resource_metadata=\"{base}{METADATA_PATH}/mcp\"");
        let said = response
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .filter(|v| v.starts_with("Bearer"));
        let value = match said {
            Some(said) if said.trim() == "Bearer" => format!("Bearer {metadata}"),
            Some(said) => format!("{said}, {metadata}"),
            None => format!("Bearer {metadata}"),
        };
        if let Ok(value) = HeaderValue::from_str(&value) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
    }
    response
}
