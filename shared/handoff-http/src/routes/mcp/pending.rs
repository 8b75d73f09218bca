//! Elicitations a session call sent its client (`elicitation/create` on the call's stream),
//! kept in the store: the client's JSON-RPC response may reach any instance.
//!
//! | partition | key | what |
//! |---|---|---|
//! | `\x1fmcp-ask\x1f{tenant}\x1f{askId}` | `ask` | [`Asked`]: the caller, the thread, the interrupts asked and the answers so far |
//!
//! The request sent for the interrupt at index `k` has the JSON-RPC id `{askId}/{k}`. The
//! response carrying the last missing answer turns them into the resume of the thread,
//! under the run id [`run_id`] derives from the ask: the engine's claim runs it once, and a
//! replayed or racing response finds it claimed. The call's stream watches for that run
//! (see [`super::ask`]).

use agui_protocol::Interrupt;
use handoff_core::{Condition, CoreError, Principal, StoreError, Write};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::error::McpError;
use crate::AppState;

const KEY: &str = "ask";
const SEP: char = '\u{1f}';
/// How long an ask is kept when its interrupts do not expire.
const DEFAULT_TTL_MS: u64 = 24 * 60 * 60 * 1000;
/// Attempts at recording an answer against concurrent writers.
const ATTEMPTS: usize = 8;

/// One ask: what the call sent and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Asked {
    /// Subject of the caller asked (the tenant is in the partition).
    pub subject: String,
    pub thread: String,
    /// The interrupts asked, in request order.
    pub interrupts: Vec<String>,
    /// Each answered interrupt's elicitation result (`{action, content?}`).
    #[serde(default)]
    pub answers: Map<String, Value>,
    /// The client answered with a JSON-RPC error: nobody is coming.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
}

fn partition(tenant: &str, ask_id: &str) -> String {
    format!("{SEP}mcp-ask{SEP}{tenant}{SEP}{ask_id}")
}

/// The run that answers ask `ask_id`.
pub(crate) fn run_id(ask_id: &str) -> String {
    let digest = Sha256::digest(ask_id.as_bytes());
    format!("mcp-ask-{}", hex::encode(&digest[..16]))
}

/// The JSON-RPC id of the request asking interrupt `index` of `ask_id`.
pub(crate) fn request_id(ask_id: &str, index: usize) -> String {
    format!("{ask_id}/{index}")
}

/// Records a new ask of `interrupts` on `thread` for `principal`.
pub(crate) async fn create(
    app: &AppState,
    principal: &Principal,
    ask_id: &str,
    thread: &str,
    interrupts: &[Interrupt],
) -> Result<(), McpError> {
    let now = app.engine.runtime().now_ms();
    let expires = interrupts
        .iter()
        .filter_map(|i| i.expires_at.as_deref())
        .filter_map(handoff_core::time_fmt::parse_ms)
        .min()
        .unwrap_or(now + DEFAULT_TTL_MS);
    let asked = Asked {
        subject: principal.subject.clone(),
        thread: thread.to_owned(),
        interrupts: interrupts.iter().map(|i| i.id.to_string()).collect(),
        answers: Map::new(),
        refused: false,
    };
    let value = serde_json::to_vec(&asked).map_err(corrupt)?;
    let write = Write::put(KEY, Condition::Absent, value, Some(expires));
    let store = app.engine.store();
    store
        .commit(&partition(&principal.tenant, ask_id), vec![write], now)
        .await
        .map_err(store_error)
}

/// Ask `ask_id` of `principal`'s tenant, if it is theirs and still kept.
pub(crate) async fn load(
    app: &AppState,
    principal: &Principal,
    ask_id: &str,
) -> Result<Option<Asked>, McpError> {
    Ok(load_item(app, principal, ask_id)
        .await?
        .map(|(asked, _, _)| asked))
}

/// [`load`], with the item's version and expiry.
async fn load_item(
    app: &AppState,
    principal: &Principal,
    ask_id: &str,
) -> Result<Option<(Asked, u64, Option<u64>)>, McpError> {
    let now = app.engine.runtime().now_ms();
    let store = app.engine.store();
    let item = store
        .get_one(&partition(&principal.tenant, ask_id), KEY, now)
        .await
        .map_err(store_error)?;
    let Some(item) = item else { return Ok(None) };
    let asked: Asked = serde_json::from_slice(&item.value).map_err(corrupt)?;
    let found = (asked, item.version, item.expires_at_ms);
    Ok((found.0.subject == principal.subject).then_some(found))
}

/// Records the client's response to request `request_id` (a result, else `refused`).
/// The ask as it then stands, when the response answered one of `principal`'s asks.
pub(crate) async fn record(
    app: &AppState,
    principal: &Principal,
    request_id: &str,
    result: Option<&Value>,
) -> Result<Option<(String, Asked)>, McpError> {
    let Some((ask_id, index)) = request_id.rsplit_once('/') else {
        return Ok(None);
    };
    let Ok(index) = index.parse::<usize>() else {
        return Ok(None);
    };
    if ask_id.is_empty() || ask_id.len() > 200 || ask_id.chars().any(char::is_control) {
        return Ok(None);
    }
    for _ in 0..ATTEMPTS {
        let Some((mut asked, version, expires)) = load_item(app, principal, ask_id).await? else {
            return Ok(None);
        };
        let Some(interrupt) = asked.interrupts.get(index).cloned() else {
            return Ok(None);
        };
        match result {
            // The first answer stands: a replayed or racing one changes nothing.
            Some(_) if asked.answers.contains_key(&interrupt) => {
                return Ok(Some((ask_id.to_owned(), asked)));
            }
            None if asked.refused => return Ok(Some((ask_id.to_owned(), asked))),
            Some(result) => {
                asked.answers.insert(interrupt, result.clone());
            }
            None => asked.refused = true,
        }
        let now = app.engine.runtime().now_ms();
        let value = serde_json::to_vec(&asked).map_err(corrupt)?;
        let store = app.engine.store();
        let write = Write::put(KEY, Condition::Version(version), value, expires);
        match store
            .commit(&partition(&principal.tenant, ask_id), vec![write], now)
            .await
        {
            Ok(()) => return Ok(Some((ask_id.to_owned(), asked))),
            Err(StoreError::ConditionFailed { .. }) => {}
            Err(err) => return Err(store_error(err)),
        }
    }
    Err(McpError::from(CoreError::ThreadChanged(
        "an elicitation answer kept losing to concurrent writers".into(),
    )))
}

fn corrupt(err: serde_json::Error) -> McpError {
    McpError::from(CoreError::CorruptRecord(err.to_string()))
}

fn store_error(err: StoreError) -> McpError {
    McpError::from(CoreError::from(err))
}
