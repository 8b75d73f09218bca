//! The session id `initialize` issues (session revisions): what the client declared,
//! sealed, so any instance knows it from the `Mcp-Session-Id` header without keeping
//! anything.
//!
//! The id is [`handoff_core::Engine::seal`]ed for the scope `mcp-session` plus the
//! caller's tenant and subject, over a nonce and the elicitation modes the client declared
//! (`capabilities.elicitation`: `form`, `url`, or an empty object for form). A request
//! whose id does not open (another caller's, forged, none) is served as from a client that
//! declared nothing: no request is refused over its session id.

use handoff_core::{CoreError, Principal};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::McpError;
use crate::AppState;

/// The elicitation modes a client declared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Modes {
    /// Form mode (also an empty `elicitation` object).
    #[serde(default, rename = "f")]
    pub form: bool,
    /// URL mode.
    #[serde(default, rename = "u")]
    pub url: bool,
}

impl Modes {
    /// The modes an `elicitation` capability object declares.
    pub(crate) fn of(elicitation: &Value) -> Modes {
        if !elicitation.is_object() {
            return Modes::default();
        }
        let named = elicitation.get("form").is_some() || elicitation.get("url").is_some();
        Modes {
            form: !named || elicitation.get("form").is_some(),
            url: elicitation.get("url").is_some(),
        }
    }

    /// Whether the client can be asked anything.
    pub(crate) fn any(self) -> bool {
        self.form || self.url
    }
}

#[derive(Serialize, Deserialize)]
struct Session {
    /// A nonce: two sessions never share an id.
    n: String,
    #[serde(flatten)]
    modes: Modes,
}

fn scope(principal: &Principal) -> String {
    format!(
        "mcp-session\u{1f}{}\u{1f}{}",
        principal.tenant, principal.subject
    )
}

/// A session id for `principal`'s client, which declared `capabilities` at `initialize`.
pub(crate) async fn issue(
    app: &AppState,
    principal: &Principal,
    capabilities: &Value,
) -> Result<String, McpError> {
    let session = Session {
        n: app.engine.runtime().ids.next_id("s"),
        modes: Modes::of(&capabilities["elicitation"]),
    };
    let payload = serde_json::to_vec(&session)
        .map_err(|e| McpError::from(CoreError::CorruptRecord(e.to_string())))?;
    Ok(app.engine.seal(&scope(principal), &payload).await?)
}

/// The modes session `id` declared, if it is one this deployment issued to `principal`.
pub(crate) async fn modes(app: &AppState, principal: &Principal, id: &str) -> Modes {
    match app.engine.unseal(&scope(principal), id.trim()).await {
        Ok(payload) => serde_json::from_slice::<Session>(&payload)
            .map(|s| s.modes)
            .unwrap_or_default(),
        Err(err) => {
            if !matches!(err, CoreError::InvalidCursor) {
                tracing::warn!(error = %err, "mcp: could not open a session id");
            }
            Modes::default()
        }
    }
}

/// The session id `initialize` answers with: the client's elicitation modes, sealed.
pub(crate) async fn answer_initialize(
    app: &AppState,
    parts: &http::request::Parts,
    params: &Value,
) -> String {
    let principal = crate::routes::principal(&parts.extensions);
    let capabilities = &params["capabilities"];
    match principal {
        Ok(principal) => match issue(app, &principal, capabilities).await {
            Ok(id) => return id,
            Err(err) => tracing::warn!(error = ?err, "mcp: could not seal a session id"),
        },
        Err(err) => tracing::warn!(error = ?err, "mcp: initialize without a principal"),
    }
    app.engine.runtime().ids.next_id("mcp-session")
}

/// The elicitation modes a session revision's request declared at `initialize` (none for
/// 2026-07-28, which says them in each request's `_meta`).
pub(crate) async fn of_request(
    app: &AppState,
    parts: &http::request::Parts,
    params: &Value,
) -> Modes {
    if params["_meta"].get(super::META_VERSION).is_some() {
        return Modes::default();
    }
    let header = parts.headers.get(super::SESSION_HEADER);
    let (Some(id), Ok(principal)) = (
        header.and_then(|v| v.to_str().ok()),
        crate::routes::principal(&parts.extensions),
    ) else {
        return Modes::default();
    };
    modes(app, &principal, id).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_empty_elicitation_object_is_form_mode() {
        let modes = |v: Value| Modes::of(&v);
        assert_eq!(
            modes(json!({})),
            Modes {
                form: true,
                url: false
            }
        );
        assert_eq!(
            modes(json!({"url": {}})),
            Modes {
                form: false,
                url: true
            }
        );
        let both = modes(json!({"form": {}, "url": {}}));
        assert!(both.form && both.url);
        assert!(!modes(Value::Null).any());
    }
}
