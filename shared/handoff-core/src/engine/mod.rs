//! The run engine: claims a thread, drives the agent, persists, then finishes.

mod approvals;
mod audit;
mod claim;
mod claimed;
mod compact;
mod config;
mod cursor;
mod digest;
mod double_text;
mod execute;
mod finish;
mod follow;
mod fork;
mod handover;
mod hash;
mod history;
mod lease;
mod leftovers;
mod live;
mod notify;
mod redrive;
mod renew;
mod run_status;
mod stop;
mod telemetry;
mod threads;
mod validate;
mod waiting;

use std::sync::Arc;

use agui_protocol::{Event, Interrupt, Message, RunAgentInput};
use futures::StreamExt;
use futures::stream::BoxStream;
use serde::Serialize;
use serde_json::Value;

use crate::access::{Access, Authorizer, OwnerPolicy, ThreadFacts, Verdict};
use crate::agent::{Agent, DoubleText};
use crate::approval::ApprovalChecks;
use crate::error::CoreError;
use crate::limits::{self, RunLimits};
use crate::principal::Principal;
use crate::records::{
    self, AnswerAudit, LastRun, RunRecord, THREAD_KEY, ThreadRecord, ThreadStatus, run_key,
};
use crate::runtime::Runtime;
use crate::schema::SchemaValidator;
use crate::store::Store;
use crate::store::traced::{StoreCalls, TracedStore};

pub use approvals::{Approval, ApprovalPage};
pub use audit::{AUDITOR_ROLE, AuditPage, AuditQuery, AuditVerdict};
pub use compact::{compact, compact_with_cuts, expand};
pub use config::{EngineConfig, RunOptions};
pub use follow::FrameStream;
pub use fork::ForkRequest;
pub use handover::REDRIVE_SCOPE;
pub use redrive::RedriveReport;
pub use run_status::{RunFailure, RunOutcomeKind, RunPhase, RunStatusView};
pub use stop::StopOutcome;
pub use threads::{
    MAX_LIMIT, MAX_NAME_CHARS, MessagePage, ThreadChanges, ThreadPage, ThreadQuery, ThreadSummary,
};
pub use waiting::{MAX_WAITING, WaitingApproval, WaitingApprovals};

/// A stream of events for one response. Always ends with a terminal event.
pub type RunStream = BoxStream<'static, Event>;

/// [`RunStream`] with each event shared with the run's log instead of copied out of it
/// ([`Engine::start_shared`]): for hosts that only encode the events.
pub type SharedRunStream = BoxStream<'static, Arc<Event>>;

/// What `GET /threads/{threadId}` shows: enough to rehydrate a UI after a reload.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadView {
    /// The thread.
    pub thread_id: String,
    /// `idle`, `running` or `interrupted`.
    pub status: ThreadStatus,
    /// Interrupts waiting for an answer.
    pub pending_interrupts: Vec<Interrupt>,
    /// Shared state.
    pub state: Value,
    /// History.
    pub messages: Vec<Message>,
    /// Latest run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_run: Option<LastRun>,
    /// Subject of the principal who started the thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Who answered which interrupt, how and when (oldest first).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<AnswerAudit>,
}

/// The engine. Cheap to clone; share one per process.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

#[derive(Clone)]
pub(crate) struct Inner {
    /// The store, traced ([`TracedStore`]).
    pub(crate) store: Arc<dyn Store>,
    /// The store as given, for [`Inner::counting`].
    pub(crate) untraced: Arc<dyn Store>,
    pub(crate) agent: Arc<dyn Agent>,
    pub(crate) runtime: Runtime,
    pub(crate) config: EngineConfig,
    pub(crate) authorizer: Arc<dyn Authorizer>,
    pub(crate) validator: Option<Arc<dyn SchemaValidator>>,
    pub(crate) approval_checks: ApprovalChecks,
    pub(crate) stops: Arc<stop::StopBoard>,
    pub(crate) cursor_key: Arc<cursor::CursorKey>,
    /// Who is told about runs that end (see [`crate::outbox`]).
    pub(crate) notifiers: Vec<Arc<dyn crate::outbox::Notifier>>,
    /// Delivers what they asked for right after the run's end.
    pub(crate) outbox: Option<Arc<crate::outbox::Outbox>>,
}

impl Inner {
    /// This engine with every store call counted into `calls` (one run's, for its log
    /// line): a shallow copy, its store traced and counted.
    pub(crate) fn counting(&self, calls: &StoreCalls) -> Arc<Inner> {
        let mut inner = self.clone();
        inner.store = Arc::new(TracedStore::counting(self.untraced.clone(), calls.clone()));
        Arc::new(inner)
    }

    /// `Ok` when `principal` may do `access` on `thread` (absent: a new thread).
    pub(crate) fn authorize(
        &self,
        principal: &Principal,
        thread: Option<&ThreadRecord>,
        access: Access<'_>,
    ) -> Result<(), CoreError> {
        let facts = ThreadFacts {
            owner: thread.and_then(|t| t.owner.as_ref()),
            pending: thread.map_or(&[], |t| t.pending.as_slice()),
        };
        match self.authorizer.authorize(principal, facts, access) {
            Verdict::Allow => Ok(()),
            Verdict::Hidden => Err(CoreError::ThreadNotFound),
            Verdict::Forbidden(reason) => Err(CoreError::Forbidden(reason)),
        }
    }
}

/// The tenant's rate limit and token budget, taken before anything is claimed: a refused
/// answer stays pending, to be sent again.
async fn take_run_limits(inner: &Inner, principal: &Principal) -> Result<(), CoreError> {
    let limits = RunLimits {
        rate: inner.config.rate_limit,
        budget: inner.config.token_budget,
    };
    if limits.rate.is_some() || limits.budget.is_some() {
        let now = inner.runtime.now_ms();
        limits::take_run(inner.store.as_ref(), principal, limits, now).await?;
    }
    Ok(())
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine for one agent over one store.
    pub fn new(agent: impl Agent, store: Arc<dyn Store>, runtime: Runtime) -> Self {
        Self::with_config(Arc::new(agent), store, runtime, EngineConfig::default())
    }

    /// An engine with explicit tunables.
    pub fn with_config(
        agent: Arc<dyn Agent>,
        store: Arc<dyn Store>,
        runtime: Runtime,
        config: EngineConfig,
    ) -> Self {
        let validator = agent
            .answer_validator()
            .or_else(crate::schema::default_validator);
        let approval_checks = agent.approval_checks();
        // Every store call of every path gets its span here, once (`store::traced`).
        let untraced = store;
        let store: Arc<dyn Store> = Arc::new(TracedStore::new(untraced.clone()));
        Engine {
            inner: Arc::new(Inner {
                store,
                untraced,
                agent,
                runtime,
                config,
                authorizer: Arc::new(OwnerPolicy),
                validator,
                approval_checks,
                stops: Arc::default(),
                cursor_key: Arc::default(),
                notifiers: Vec::new(),
                outbox: None,
            }),
        }
    }

    /// With `notifier` asked about every run that ends; what it asks for is written in the
    /// run's last commit (see [`crate::outbox`]).
    #[must_use]
    pub fn with_notifier(self, notifier: Arc<dyn crate::outbox::Notifier>) -> Self {
        self.rebuilt(|inner| inner.notifiers.push(notifier))
    }

    /// With `outbox` making the first attempt at a run's notices right after its end, on
    /// the instance that ran it (a host's sweep, [`crate::outbox::Outbox::deliver_due`],
    /// makes the later ones).
    #[must_use]
    pub fn with_outbox(self, outbox: crate::outbox::Outbox) -> Self {
        self.rebuilt(|inner| inner.outbox = Some(Arc::new(outbox)))
    }

    /// The outbox given with [`Engine::with_outbox`].
    pub fn outbox(&self) -> Option<&Arc<crate::outbox::Outbox>> {
        self.inner.outbox.as_ref()
    }

    /// With a policy other than [`OwnerPolicy`] deciding who may read, run and answer.
    #[must_use]
    pub fn with_authorizer(self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.rebuilt(|inner| inner.authorizer = authorizer)
    }

    /// With `validator` checking answers against `responseSchema`s instead of the agent's
    /// ([`Agent::answer_validator`]) or the default ([`crate::schema::default_validator`]);
    /// `None` makes interrupts with a schema fail closed (`SCHEMA_VALIDATION_UNAVAILABLE`).
    #[must_use]
    pub fn with_schema_validator(self, validator: Option<Arc<dyn SchemaValidator>>) -> Self {
        self.rebuilt(|inner| inner.validator = validator)
    }

    /// With the named approval check `name` (beside the agent's own,
    /// [`Agent::approval_checks`]; this one wins on a clash).
    #[must_use]
    pub fn with_approval_check(
        self,
        name: &str,
        check: impl Fn(&crate::approval::EditedAnswer<'_>) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        let added = ApprovalChecks::new().with(name, check);
        self.rebuilt(|inner| inner.approval_checks.extend(added))
    }

    fn rebuilt(self, change: impl FnOnce(&mut Inner)) -> Self {
        let mut inner = (*self.inner).clone();
        change(&mut inner);
        Engine {
            inner: Arc::new(inner),
        }
    }

    /// The store (shared with agents that keep their own records, like the demo ledger).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }
    /// The injected runtime.
    pub fn runtime(&self) -> &Runtime {
        &self.inner.runtime
    }
    /// The agent's name.
    pub fn agent_name(&self) -> &str {
        self.inner.agent.name()
    }

    /// The agent served ([`Agent::description`], [`Agent::version`] and the rest).
    pub fn agent(&self) -> &Arc<dyn Agent> {
        &self.inner.agent
    }
    /// Tunables.
    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    /// Validates and claims, then returns the run's event stream.
    ///
    /// Errors here happen before any byte is sent: answer them with
    /// [`CoreError::http_status`]. Nothing was written when this fails.
    /// A repeated request (same runId and body, or the same resume answer) gets a
    /// replay of the recorded run instead of a second execution.
    pub async fn start(
        &self,
        input: RunAgentInput,
        options: RunOptions,
    ) -> Result<RunStream, CoreError> {
        let events = self.start_shared(input, options).await?;
        Ok(Box::pin(events.map(Arc::unwrap_or_clone)))
    }

    /// [`Engine::start`], whose events are shared with the run's log rather than copied
    /// out of it: a host that encodes each event and drops it saves a copy per event.
    pub async fn start_shared(
        &self,
        input: RunAgentInput,
        options: RunOptions,
    ) -> Result<SharedRunStream, CoreError> {
        // Every store call of the run is counted for its log line.
        let inner = self.inner.counting(&options.store_calls);
        take_run_limits(&inner, &options.principal).await?;
        let claimed = match claim::claim(&inner, &input, &options, false).await {
            Err(CoreError::ThreadBusy { run_id, .. })
                if !run_id.is_empty()
                    && run_id != input.run_id.as_str()
                    && self.double_text() != DoubleText::Reject =>
            {
                return Ok(double_text::wait_then_run(
                    inner.clone(),
                    input,
                    options,
                    run_id,
                    self.double_text(),
                ));
            }
            other => other?,
        };
        match claimed {
            claim::Claim::Replay(events) => Ok(Box::pin(futures::stream::iter(
                events.into_iter().map(Arc::new),
            ))),
            claim::Claim::Run(claimed) => {
                Ok(execute::spawn_run(inner.clone(), input, options, claimed))
            }
            // The run before this one died mid-way: it is finished first, then this runs
            // after it, as a message sent while it ran would.
            claim::Claim::Abandoned(abandoned) => {
                Ok(redrive::then_run(inner.clone(), input, options, abandoned))
            }
        }
    }

    /// What a message sent while a run is running does: the agent's word, else the
    /// engine's config.
    fn double_text(&self) -> DoubleText {
        self.inner
            .agent
            .double_text()
            .unwrap_or(self.inner.config.double_text)
    }

    /// Asks run `run_id` of the thread to stop: it ends `RUN_FINISHED{outcome: cancelled}`
    /// at its next checkpoint on whichever instance runs it, and releases the thread.
    /// [`CoreError::RunNotFound`] if the thread has no such run; a run that already ended
    /// is left alone ([`StopOutcome::Finished`]).
    pub async fn stop(
        &self,
        principal: &Principal,
        thread_id: &str,
        run_id: &str,
    ) -> Result<StopOutcome, CoreError> {
        stop::request(&self.inner, principal, thread_id, run_id).await
    }

    /// The thread's current view as `principal` may see it: `None` if it never ran in the
    /// principal's tenant, [`CoreError::ThreadNotFound`] if the principal may not see it.
    pub async fn thread(
        &self,
        principal: &Principal,
        thread_id: &str,
    ) -> Result<Option<ThreadView>, CoreError> {
        let partition = principal.partition(thread_id)?;
        let now = self.inner.runtime.now_ms();
        let Some(item) = self
            .inner
            .store
            .get_one(&partition, THREAD_KEY, now)
            .await?
        else {
            return Ok(None);
        };
        let thread: ThreadRecord = records::decode(&item)?;
        self.inner
            .authorize(principal, Some(&thread), Access::Read)?;
        let (messages, answers) =
            history::load_with_answers(&self.inner, &partition, &thread, now).await?;
        Ok(Some(ThreadView {
            thread_id: thread_id.to_owned(),
            status: thread.status,
            pending_interrupts: thread.pending.into_iter().map(|p| p.interrupt).collect(),
            state: thread.state,
            messages,
            last_run: thread.last_run,
            owner: thread.owner.map(|o| o.subject),
            answers,
        }))
    }

    /// The caller's threads, latest activity first (`GET /threads`): those it owns in its
    /// tenant, archived ones only when asked for.
    pub async fn list_threads(
        &self,
        principal: &Principal,
        query: &ThreadQuery,
    ) -> Result<ThreadPage, CoreError> {
        threads::list(&self.inner, principal, query).await
    }

    /// A page of the tenant's audit trail (or one thread's), newest first (`GET /audit`);
    /// [`CoreError::Forbidden`] without role [`AUDITOR_ROLE`].
    pub async fn list_audit(
        &self,
        principal: &Principal,
        query: &AuditQuery,
    ) -> Result<AuditPage, CoreError> {
        audit::list(&self.inner, principal, query).await
    }

    /// Checks one thread's audit chain, or every chain of the tenant (`GET /audit/verify`).
    pub async fn verify_audit(
        &self,
        principal: &Principal,
        thread_id: Option<&str>,
    ) -> Result<AuditVerdict, CoreError> {
        audit::verify(&self.inner, principal, thread_id).await
    }

    /// The pending interrupts `principal` may resolve across its tenant's threads, newest
    /// first (`GET /approvals`): those whose approval policy names a role it holds (not
    /// its own requests when the policy says so), and those without a role on threads it
    /// owns.
    pub async fn list_approvals(
        &self,
        principal: &Principal,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<ApprovalPage, CoreError> {
        approvals::list(&self.inner, principal, limit, cursor).await
    }

    /// The pending interrupts `principal` may resolve now (not expired), counted: the
    /// inbox's rule, for the console's bell (`GET /approvals/waiting`).
    pub async fn waiting_approvals(
        &self,
        principal: &Principal,
    ) -> Result<WaitingApprovals, CoreError> {
        waiting::waiting(&self.inner, principal).await
    }

    /// Forks a thread the caller may read into a new thread it owns
    /// (`POST /threads/{id}/fork`): the history up to `atMessageId` (all of it without),
    /// the state as it stood then. Returns the new thread's id.
    pub async fn fork_thread(
        &self,
        principal: &Principal,
        thread_id: &str,
        request: &ForkRequest,
    ) -> Result<String, CoreError> {
        fork::fork(&self.inner, principal, thread_id, request).await
    }

    /// Renames or (un)archives a thread (`PATCH /threads/{id}`), without disturbing a run
    /// in progress; the owner's to do.
    pub async fn update_thread(
        &self,
        principal: &Principal,
        thread_id: &str,
        changes: &ThreadChanges,
    ) -> Result<ThreadSummary, CoreError> {
        threads::update(&self.inner, principal, thread_id, changes).await
    }

    /// Erases a thread whole (`DELETE /threads/{id}`): its running run is asked to stop
    /// first, then the head goes (every route answers 404 from then on) and every other
    /// record of it after. A new run under the id starts a fresh thread.
    pub async fn delete_thread(
        &self,
        principal: &Principal,
        thread_id: &str,
    ) -> Result<(), CoreError> {
        threads::delete(&self.inner, principal, thread_id).await
    }

    /// A page of the thread's history (`GET /threads/{id}/messages`): up to `limit`
    /// messages before the `before` cursor (the latest without one), oldest first.
    pub async fn thread_messages(
        &self,
        principal: &Principal,
        thread_id: &str,
        limit: usize,
        before: Option<&str>,
    ) -> Result<MessagePage, CoreError> {
        threads::messages(&self.inner, principal, thread_id, limit, before).await
    }

    /// The recorded (compacted) events of a run, for replay over SSE: `None` if the thread
    /// has no such run, [`CoreError::ThreadNotFound`] if the principal's tenant has no such
    /// thread or the principal may not see it (and did not ask for the run).
    pub async fn run_events(
        &self,
        principal: &Principal,
        thread_id: &str,
        run_id: &str,
    ) -> Result<Option<(RunRecord, Vec<Event>)>, CoreError> {
        let Some((partition, mut record)) = self.read_run(principal, thread_id, run_id).await?
        else {
            return Ok(None);
        };
        let now = self.inner.runtime.now_ms();
        history::hydrate(&self.inner, &partition, &mut record, now).await?;
        let events = record.events.clone();
        Ok(Some((record, events)))
    }

    /// The frames of a run after the frame `last_id` (0: all), for a client that
    /// (re)connects: the join prelude and what followed, then, while the run is still
    /// running on whichever instance, its events as they are journaled, up to its
    /// terminal event. `None` if the thread has no such run; access as for
    /// [`Engine::run_events`].
    pub async fn follow_run(
        &self,
        principal: &Principal,
        thread_id: &str,
        run_id: &str,
        last_id: u64,
    ) -> Result<Option<FrameStream>, CoreError> {
        let Some((partition, mut record)) = self.read_run(principal, thread_id, run_id).await?
        else {
            return Ok(None);
        };
        if record.status.is_final() {
            let now = self.inner.runtime.now_ms();
            history::hydrate(&self.inner, &partition, &mut record, now).await?;
        }
        let run_id = agui_protocol::RunId::from(run_id.to_owned());
        Ok(Some(follow::follow(
            self.inner.clone(),
            partition,
            run_id,
            record,
            last_id,
        )))
    }

    /// A run's record as stored, if `principal` may read it.
    async fn read_run(
        &self,
        principal: &Principal,
        thread_id: &str,
        run_id: &str,
    ) -> Result<Option<(String, RunRecord)>, CoreError> {
        let partition = principal.partition(thread_id)?;
        crate::principal::check_id("runId", run_id)?;
        let now = self.inner.runtime.now_ms();
        let store = &self.inner.store;
        let run = store.get_one(&partition, &run_key(run_id), now).await?;
        let run: Option<RunRecord> = run.as_ref().map(records::decode).transpose()?;
        // Its own runs a principal replays in one read; anything else needs the thread's
        // word, and a thread that does not exist answers like one the caller may not see.
        if !run.as_ref().is_some_and(|r| r.made_by(principal)) {
            let thread: ThreadRecord = match store.get_one(&partition, THREAD_KEY, now).await? {
                Some(item) => records::decode(&item)?,
                None => return Err(CoreError::ThreadNotFound),
            };
            self.inner
                .authorize(principal, Some(&thread), Access::Read)?;
        }
        Ok(run.map(|record| (partition, record)))
    }
}
