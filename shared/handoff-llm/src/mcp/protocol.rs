//! Which MCP revision a server speaks, and what a request carries for it.
//!
//! 2026-07-28 is stateless: no `initialize`, no session. Every request names the
//! revision, this client's capabilities and identity in `_meta`, and its POST carries
//! `Mcp-Method` (and `Mcp-Name` for a call) so a gateway can route it unread. The
//! session revisions (2025-11-25, 2025-06-18) start with `initialize` and
//! `notifications/initialized` and send `Mcp-Session-Id` after. A connection asks
//! `server/discover` first: a server listing 2026-07-28 is spoken to without a session,
//! any other answer (a JSON-RPC error, an HTTP 400 for a request outside a session, a
//! result without that revision) means `initialize`. Only a probe that never got an
//! answer (not sent, timed out) is an error.

use serde_json::{Map, Value, json};

/// The stateless revision, asked for first.
pub const PROTOCOL_VERSION: &str = "2026-07-28";
/// The session revision asked for in `initialize` (a server may answer with an older one
/// it supports, 2025-06-18; that one goes into every later `MCP-Protocol-Version`).
pub const SESSION_PROTOCOL_VERSION: &str = "2025-11-25";

pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// JSON-RPC error of a server that does not speak the revision asked for.
pub(crate) const UNSUPPORTED_VERSION: i64 = -32022;

/// How this instance speaks to a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    /// 2026-07-28: every request stands alone.
    Stateless,
    /// A session revision: the session id the server issued (if any) and the revision.
    Session {
        id: Option<String>,
        protocol: String,
    },
}

/// This client as `_meta` and `initialize` name it.
pub(crate) fn client_info() -> Value {
    json!({ "name": "handoff", "version": env!("CARGO_PKG_VERSION") })
}

/// What this client can do on 2026-07-28: elicitation in form and URL mode (an
/// `input_required` tool result becomes a Handoff interrupt a human answers). Nothing on
/// the session revisions: their elicitation is a server request on the call's stream,
/// which this client, reading each answer whole, does not answer.
pub(crate) fn stateless_capabilities() -> Value {
    json!({ "elicitation": { "form": {}, "url": {} } })
}

/// `params` with 2026-07-28's `_meta` keys added to its own `_meta`.
pub(crate) fn with_meta(mut params: Value) -> Value {
    if !params.is_object() {
        params = json!({});
    }
    let meta = params.as_object_mut().map(|p| {
        p.entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()))
    });
    if let Some(Value::Object(meta)) = meta {
        meta.insert(META_VERSION.to_owned(), json!(PROTOCOL_VERSION));
        meta.insert(META_CAPABILITIES.to_owned(), stateless_capabilities());
        meta.insert(META_CLIENT_INFO.to_owned(), client_info());
    }
    params
}

/// The `initialize` request's params.
pub(crate) fn initialize_params() -> Value {
    json!({
        "protocolVersion": SESSION_PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": client_info(),
    })
}

/// Whether a `server/discover` result offers the stateless revision.
pub(crate) fn speaks_stateless(discovered: &Value) -> bool {
    discovered
        .get("supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|v| v.iter().any(|v| v.as_str() == Some(PROTOCOL_VERSION)))
}

/// The headers a POST in `mode` carries for `method` (and the tool `name` of a call).
pub(crate) fn headers(
    mode: &Mode,
    method: &str,
    name: Option<&str>,
) -> Vec<(&'static str, String)> {
    match mode {
        Mode::Stateless => {
            let mut headers = vec![
                ("mcp-protocol-version", PROTOCOL_VERSION.to_owned()),
                ("mcp-method", method.to_owned()),
            ];
            // A name a header cannot carry (not visible ASCII) goes in the body only.
            if let Some(name) = name.filter(|n| n.bytes().all(|b| b.is_ascii_graphic())) {
                headers.push(("mcp-name", name.to_owned()));
            }
            headers
        }
        // `initialize` goes before any revision is agreed: without the header.
        Mode::Session { protocol, .. } if protocol.is_empty() => Vec::new(),
        Mode::Session { id, protocol } => {
            let mut headers = vec![("mcp-protocol-version", protocol.clone())];
            if let Some(id) = id {
                headers.push(("mcp-session-id", id.clone()));
            }
            headers
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_keeps_the_request_s_own_members() {
        let params = with_meta(json!({ "name": "pay", "_meta": { "idempotencyKey": "k" } }));
        let meta = &params["_meta"];
        assert_eq!(meta["idempotencyKey"], "k");
        assert_eq!(meta[META_VERSION], PROTOCOL_VERSION);
        assert!(meta[META_CAPABILITIES]["elicitation"]["form"].is_object());
        assert_eq!(meta[META_CLIENT_INFO]["name"], "handoff");
        assert_eq!(params["name"], "pay");
    }

    #[test]
    fn discovery_needs_the_stateless_revision_listed() {
        assert!(speaks_stateless(
            &json!({ "supportedVersions": ["2026-07-28", "2025-11-25"] })
        ));
        assert!(!speaks_stateless(
            &json!({ "supportedVersions": ["2025-11-25"] })
        ));
        assert!(!speaks_stateless(&json!({})));
    }

    #[test]
    fn stateless_posts_name_their_method_and_tool() {
        let headers = headers(&Mode::Stateless, "tools/call", Some("pay"));
        assert!(headers.contains(&("mcp-method", "tools/call".into())));
        assert!(headers.contains(&("mcp-name", "pay".into())));
        let unicode = super::headers(&Mode::Stateless, "tools/call", Some("héllo"));
        assert!(!unicode.iter().any(|(n, _)| *n == "mcp-name"));
        let session = Mode::Session {
            id: Some("s".into()),
            protocol: "2025-06-18".into(),
        };
        let headers = super::headers(&session, "tools/call", Some("pay"));
        assert_eq!(
            headers,
            vec![
                ("mcp-protocol-version", "2025-06-18".into()),
                ("mcp-session-id", "s".into())
            ]
        );
    }
}
