//! A run the claim admitted: what execution, lease renewal and the finish share. Its own
//! module, so the later stages depend on it and not on the claim that builds it.

use agui_protocol::{Message, RunId};
use serde_json::Value;

use super::digest::Chain;
use crate::decision::Decision;
use crate::principal::Owner;
use crate::records::ThreadRecord;
use crate::records::audit::AuditHead;

/// A claimed run, ready to execute.
pub(crate) struct Claimed {
    /// The run.
    pub(crate) run_id: RunId,
    /// The thread's store partition (scoped by the principal's tenant).
    pub(crate) partition: String,
    /// Who asked for the run (for a resume: who sent its answers).
    pub(crate) requested_by: Owner,
    /// Thread version this run's lease holds at the claim; every commit is fenced on
    /// it (renewals move it on, see `lease`).
    pub(crate) fence: u64,
    /// The thread as claimed.
    pub(crate) thread: ThreadRecord,
    /// The validated answers; moved into the run's context when it starts.
    pub(crate) decisions: Vec<Decision>,
    pub(crate) resume_key: Option<String>,
    pub(crate) input_hash: String,
    /// The digest chain of the input's messages (see `digest`).
    pub(crate) input_chain: Chain,
    pub(crate) started_at_ms: u64,
    /// The state the run starts from; moved into its context when it starts.
    pub(crate) state: Value,
    /// The stored history when the claim had to read it (see `history::needs_check`).
    pub(crate) preloaded: Option<Vec<Message>>,
    /// Sent while another run streamed (double-texting): merged after that run's reply.
    pub(crate) after_running: bool,
    /// When the thread's marker expires as the claim saw or wrote it (0: none, `u64::MAX`:
    /// never); the finish rewrites it only when its pages would outlive it.
    pub(crate) mark_until: u64,
    /// A resume's audit chain head as the claim read it (see `context::audit_head_read`);
    /// moved into the run's context when it starts.
    pub(crate) audit_head: Option<(u64, Option<AuditHead>)>,
    /// The run's watches: its request's, and those of the interrupts it answers.
    pub(crate) watches: Vec<crate::outbox::Watch>,
    /// The claim re-executes this run after its instance stopped before its end: its
    /// journaled steps replay (see `redrive`).
    pub(crate) redrive: bool,
    /// The run's record as the claim stored it, its request for a re-drive in it (a
    /// hand-off lists it again).
    pub(crate) run_record: Vec<u8>,
}
