//! Route handlers.

#[cfg(feature = "a2a-server")]
pub(crate) mod a2a;
pub(crate) mod agent;
pub(crate) mod audit;
pub(crate) mod background;
pub(crate) mod copilotkit;
pub(crate) mod json_body;
#[cfg(feature = "mcp-server")]
pub(crate) mod mcp;
#[cfg(any(feature = "a2a-server", feature = "mcp-server"))]
pub(crate) mod origin;
pub(crate) mod runs;
#[cfg(feature = "schedules")]
pub(crate) mod schedules;
pub(crate) mod superagent;
pub(crate) mod thread_list;
pub(crate) mod threads;
#[cfg(feature = "webhooks")]
pub(crate) mod webhooks;

use agui_protocol::Message;
use handoff_core::Principal;
use handoff_core::codes;

use crate::AppState;
use crate::body::Encoding;
use crate::error::ApiError;

/// The principal the authentication layer put in the request. Its absence is a router
/// built without that layer: refused, never served as anyone.
pub(crate) fn principal(extensions: &http::Extensions) -> Result<Principal, ApiError> {
    extensions.get::<Principal>().cloned().ok_or_else(|| {
        ApiError::new(
            codes::UNAUTHENTICATED,
            "this route needs an authenticated caller",
        )
    })
}

/// The thread's stored history when `encoding` needs it: A2UI frames name the
/// tools of results whose calls were made in earlier runs. AG-UI (SSE or protobuf) never does.
pub(crate) async fn a2ui_history(
    app: &AppState,
    principal: &Principal,
    encoding: Encoding,
    thread_id: &str,
) -> Result<Vec<Message>, ApiError> {
    if !encoding.needs_history() {
        return Ok(Vec::new());
    }
    Ok(app
        .engine
        .thread(principal, thread_id)
        .await?
        .map(|t| t.messages)
        .unwrap_or_default())
}

/// An SSE response whose events are `values`, one JSON document per `data:` line (the
/// JSON-RPC streams of A2A and MCP).
#[cfg(any(feature = "a2a-server", feature = "mcp-server"))]
pub(crate) fn json_event_stream(
    values: futures::stream::BoxStream<'static, serde_json::Value>,
) -> axum::response::Response {
    use futures::StreamExt;
    use http::{HeaderValue, header};
    let frames =
        values.map(|value| Ok::<_, std::convert::Infallible>(format!("data: {value}\n\n")));
    let mut response = axum::response::Response::new(axum::body::Body::from_stream(frames));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
