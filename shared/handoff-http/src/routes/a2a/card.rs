//! `GET /.well-known/agent-card.json`: the served agent as other agents discover it.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, header};
use serde_json::{Value, json};

use crate::AppState;
use crate::routes::origin::origin_of;

/// Where the JSON-RPC binding is served, under the deployment's base URL.
pub(crate) const A2A_PATH: &str = "/a2a";

pub(crate) async fn agent_card(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let base = origin_of(&app, request.headers());
    let mut response = Json(card(&app, &base)).into_response();
    // Cards change only with a deployment; an hour of caching spares the callers a round trip.
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    response
}

/// The card of `app`'s agent, served at `base`.
pub(crate) fn card(app: &AppState, base: &str) -> Value {
    let agent = app.engine.agent();
    let name = agent.name();
    let description = match agent.description() {
        "" => app
            .description
            .clone()
            .unwrap_or_else(|| format!("The {name} agent, served by Handoff")),
        said => said.to_owned(),
    };
    let modes = json!(["text/plain", "application/json"]);
    let mut card = json!({
        "name": name,
        "description": description,
        "version": agent.version(),
        "supportedInterfaces": [{
            "url": format!("{base}{A2A_PATH}"),
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }],
        "capabilities": {"streaming": true, "pushNotifications": super::push_config::supported(app)},
        "defaultInputModes": modes,
        "defaultOutputModes": modes,
        "skills": [{
            "id": name,
            "name": name,
            "description": description,
            "tags": ["agent", "human-in-the-loop"],
            "inputModes": modes,
            "outputModes": modes,
        }],
    });
    if let Some((id, scheme)) = security_scheme(app.auth.0.scheme())
        && let Some(object) = card.as_object_mut()
    {
        object.insert("securitySchemes".into(), json!({ id: scheme }));
        object.insert(
            "securityRequirements".into(),
            json!([{"schemes": { id: {"list": []} }}]),
        );
    }
    card
}

/// The A2A security scheme of a `HANDOFF_AUTH` scheme (`none`: no scheme).
fn security_scheme(auth: &str) -> Option<(&'static str, Value)> {
    match auth {
        "none" => None,
        "jwt" => Some((
            "bearer",
            json!({"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}}),
        )),
        "cf-access" => Some((
            "cfAccess",
            json!({"apiKeySecurityScheme": {"location": "header", "name": "Cf-Access-Jwt-Assertion"}}),
        )),
        "iam" => Some((
            "sigv4",
            json!({"httpAuthSecurityScheme": {"scheme": "AWS4-HMAC-SHA256"}}),
        )),
        _ => Some((
            "bearer",
            json!({"httpAuthSecurityScheme": {"scheme": "Bearer"}}),
        )),
    }
}

/// `GET /.well-known/jwks.json`: the key the A2A pushes are signed with (404 when this
/// deployment does not sign them).
pub(crate) async fn push_jwks(State(app): State<Arc<AppState>>) -> Response {
    let Some(signer) = &app.push_signer else {
        return http::StatusCode::NOT_FOUND.into_response();
    };
    match signer.jwks().await {
        Ok(jwks) => Json(jwks).into_response(),
        Err(error) => {
            tracing::error!(%error, "the push-signing key could not be read");
            http::StatusCode::SERVICE_UNAVAILABLE.into_response()
        }
    }
}
