#![doc = include_str!("../README.md")]

pub mod access;
pub mod agent;
pub mod approval;
pub mod codes;
pub mod context;
pub mod conventions;
pub mod decision;
pub mod engine;
pub mod error;
pub mod limits;
mod message_ids;
pub mod outbound;
pub mod outbox;
pub mod principal;
pub mod records;
pub mod runtime;
#[cfg(feature = "schedules")]
pub mod schedule;
pub mod schema;
pub mod store;
pub mod time_fmt;

pub use access::{Access, Authorizer, OwnerPolicy, Verdict};
pub use agent::{Agent, DoubleText, Finish, Readiness};
pub use approval::{
    ApprovalChecks, ApprovalPolicy, ApprovalSource, EditRule, RaisedInterrupt, WithApproval,
};
pub use context::{EffectFailure, NotExecuted, RunContext, StepMark};
pub use decision::Decision;
pub use engine::{
    AUDITOR_ROLE, Approval, ApprovalPage, AuditPage, AuditQuery, AuditVerdict, Engine,
    EngineConfig, ForkRequest, FrameStream, MAX_LIMIT, MAX_NAME_CHARS, MessagePage, REDRIVE_SCOPE,
    RedriveReport, RunFailure, RunOptions, RunOutcomeKind, RunPhase, RunStatusView, RunStream,
    SharedRunStream, StopOutcome, ThreadChanges, ThreadPage, ThreadQuery, ThreadSummary,
    ThreadView, WaitingApproval, WaitingApprovals,
};
pub use error::{AgentError, CoreError};
pub use principal::{Owner, Principal};
pub use runtime::{Clock, IdGen, Runtime, Sleep, Spawn};
pub use store::traced::StoreCalls;
pub use store::{Condition, IndexEntry, IndexHit, Item, Store, StoreError, Write, WriteOp};
