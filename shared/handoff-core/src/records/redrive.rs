//! What a running run keeps in its own record for a re-drive (see the engine's `redrive`).

use agui_protocol::RunAgentInput;
use serde::{Deserialize, Serialize};

use crate::outbox::Watch;
use crate::principal::Principal;

/// The request a run was asked, kept in its [`RunRecord`](super::RunRecord) from its claim
/// until its end, so another instance can finish a run whose own stopped mid-way. Opaque
/// outside the engine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RedriveRequest {
    /// The input as posted, without its first `historyPrefix` messages.
    pub(crate) input: RunAgentInput,
    /// How many leading messages of the input were the thread's stored history (left out:
    /// they are read back from the history, which the unfinished run did not change).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) history_prefix: Option<usize>,
    pub(crate) principal: Principal,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) watches: Vec<Watch>,
}
