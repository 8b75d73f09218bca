//! `requestState`: what an `input_required` result asks the client to give back unchanged.
//!
//! It is sealed by [`handoff_core::Engine::seal`] (HMAC-SHA-256 under the deployment's
//! key, the one list cursors use, kept in the store: every instance opens what any
//! instance sealed) for the scope `mcp-request-state` plus the caller's tenant and
//! subject, so another principal's state does not open at all. The payload binds the
//! thread, the interrupts it answers, the tool, a digest of its arguments and an expiry
//! (the interrupts' own, else a day). The payload is readable, not secret. A state is not
//! single-use by itself: the run id of the answer it carries is derived from it
//! ([`State::run_id`]), so the engine's claim makes the answer run once and replays it to
//! every later retry.

use handoff_core::Principal;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::error::McpError;
use crate::AppState;

/// How long a state lives when its interrupts do not expire.
const DEFAULT_TTL_MS: u64 = 24 * 60 * 60 * 1000;

/// What a `requestState` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct State {
    /// Tenant and subject of the caller it was issued to.
    pub t: String,
    pub s: String,
    /// The thread.
    pub th: String,
    /// The interrupts it answers.
    pub i: Vec<String>,
    /// The tool, and the digest of the call's arguments.
    pub n: String,
    pub a: String,
    /// Unix ms after which it no longer opens.
    pub e: u64,
}

fn scope(principal: &Principal) -> String {
    format!(
        "mcp-request-state\u{1f}{}\u{1f}{}",
        principal.tenant, principal.subject
    )
}

/// The digest of a call: the tool and its arguments (serde_json sorts object keys, so the
/// same arguments digest the same however the client ordered them).
pub(crate) fn call_digest(tool: &str, arguments: &Value) -> String {
    let mut hash = Sha256::new();
    hash.update(tool.as_bytes());
    hash.update([0]);
    hash.update(arguments.to_string().as_bytes());
    hex::encode(&hash.finalize()[..16])
}

impl State {
    /// A state for `principal`'s call answering `interrupts` on `thread`.
    pub(crate) fn new(
        principal: &Principal,
        thread: &str,
        interrupts: &[agui_protocol::Interrupt],
        tool: &str,
        arguments: &Value,
        now_ms: u64,
    ) -> Self {
        let expiry = interrupts
            .iter()
            .filter_map(|i| i.expires_at.as_deref())
            .filter_map(handoff_core::time_fmt::parse_ms)
            .min()
            .unwrap_or(now_ms + DEFAULT_TTL_MS);
        State {
            t: principal.tenant.clone(),
            s: principal.subject.clone(),
            th: thread.to_owned(),
            i: interrupts.iter().map(|i| i.id.to_string()).collect(),
            n: tool.to_owned(),
            a: call_digest(tool, arguments),
            e: expiry,
        }
    }

    /// Sealed for its principal.
    pub(crate) async fn seal(
        &self,
        app: &AppState,
        principal: &Principal,
    ) -> Result<String, McpError> {
        let payload = serde_json::to_vec(self)
            .map_err(|e| McpError::from(handoff_core::CoreError::CorruptRecord(e.to_string())))?;
        Ok(app.engine.seal(&scope(principal), &payload).await?)
    }

    /// The state `sealed` holds, if this deployment sealed it for `principal`, for this
    /// tool and these arguments, and it has not expired. Never anything to run otherwise.
    pub(crate) async fn open(
        app: &AppState,
        principal: &Principal,
        sealed: &str,
        tool: &str,
        arguments: &Value,
    ) -> Result<State, McpError> {
        let payload = match app.engine.unseal(&scope(principal), sealed).await {
            Ok(payload) => payload,
            Err(handoff_core::CoreError::InvalidCursor) => {
                return Err(McpError::bad_state(
                    "requestState was not issued to this caller by this server (forged, altered or another principal's)",
                ));
            }
            Err(err) => return Err(err.into()),
        };
        let state: State = serde_json::from_slice(&payload)
            .map_err(|_| McpError::bad_state("requestState does not read"))?;
        if state.t != principal.tenant || state.s != principal.subject {
            return Err(McpError::bad_state(
                "requestState belongs to another caller",
            ));
        }
        if state.n != tool || state.a != call_digest(tool, arguments) {
            return Err(McpError::bad_state(
                "requestState belongs to another call: retry with the original tool and arguments",
            ));
        }
        if app.engine.runtime().now_ms() > state.e {
            return Err(McpError::bad_state(
                "requestState expired with its interrupts",
            ));
        }
        Ok(state)
    }

    /// The run id of the answer retried with `sealed`: the same state always names the
    /// same run, which the engine runs once and replays after.
    pub(crate) fn run_id(sealed: &str) -> String {
        let digest = Sha256::digest(sealed.as_bytes());
        format!("mcp-{}", hex::encode(&digest[..16]))
    }
}
