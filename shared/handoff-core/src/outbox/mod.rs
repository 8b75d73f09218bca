//! Notices about runs, written in the commit that ends the run and delivered after it:
//! an outbox in the store, so a notice is never lost when an instance dies, and never
//! written for a run that did not end.
//!
//! - A [`Notifier`] (given to the engine with `Engine::with_notifier`) looks at every run
//!   that ends ([`RunFacts`]) and says what to tell whom ([`Notice`]). It runs inside the
//!   finish, without I/O.
//! - The engine writes each notice as an [`OutboxItem`] in the thread's partition, in the
//!   same commit as the run's end, listed in one scope by when it is due.
//! - An [`Outbox`] delivers due items with the [`Sender`] registered for their kind: right
//!   after the run's end on the instance that ran it, and on every [`Outbox::deliver_due`]
//!   sweep a host runs on a timer. A sender that fails is tried again later, backing off
//!   from 5 s to at most an hour, for at least 24 hours; each item keeps one id whatever
//!   the number of attempts, so receivers can drop duplicates.
//!
//! **Watches** carry a caller's interest across runs: a run started with
//! `RunOptions::watches` (an A2A task, say) passes them to the interrupts it raises, and
//! the run that answers those interrupts, by whatever path, inherits them. A notifier
//! reads them from [`RunFacts::watches`].
//!
//! **Listings**: an item leaves the due listing once delivered. A notice given a listing
//! ([`Notice::listed_in`]) is also found there, newest first, for as long as it lives,
//! delivered or not ([`listed`]): a tenant's webhook deliveries, say.

mod deliver;
mod record;
pub mod watch;

use agui_protocol::Event;
use serde_json::Value;

use crate::principal::Owner;
use crate::records::{PendingInterrupt, RunStatus};

pub use deliver::{DeliveryReport, Outbox, SendOutcome, Sender};
pub use record::{ListedItem, OUTBOX_SCOPE, OutboxItem, backoff_ms, listed};
pub use watch::Watch;

/// What a [`Notifier`] sees of a run that ended.
#[derive(Debug)]
#[non_exhaustive]
pub struct RunFacts<'a> {
    /// The thread's tenant.
    pub tenant: &'a str,
    /// The thread.
    pub thread_id: &'a str,
    /// The run.
    pub run_id: &'a str,
    /// How it ended.
    pub status: RunStatus,
    /// Its terminal event (`RUN_FINISHED` or `RUN_ERROR`).
    pub terminal: &'a Event,
    /// The interrupts it left pending (its own, with their policies).
    pub pending: &'a [PendingInterrupt],
    /// Who asked for it.
    pub requested_by: &'a Owner,
    /// The watches it carries.
    pub watches: &'a [Watch],
    /// Unix ms of its end.
    pub now_ms: u64,
}

/// One thing to tell: delivered by the [`Sender`] registered for `kind`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Notice {
    /// Which sender delivers it.
    pub kind: String,
    /// What it says (the sender's to interpret).
    pub body: Value,
    /// A listing (an index scope) the item is also found in, newest first, for as long
    /// as it lives, delivered or not: read with [`listed`].
    pub listing: Option<String>,
}

impl Notice {
    /// A notice for the sender of `kind`.
    pub fn new(kind: impl Into<String>, body: Value) -> Self {
        Notice {
            kind: kind.into(),
            body,
            listing: None,
        }
    }

    /// Also found in the listing `scope` (one more write in the run's last commit).
    #[must_use]
    pub fn listed_in(mut self, scope: impl Into<String>) -> Self {
        self.listing = Some(scope.into());
        self
    }
}

/// Decides what to tell about each run that ends. Runs inside the finish: no I/O.
pub trait Notifier: Send + Sync + 'static {
    /// The notices about the run described by `facts` (none, usually).
    fn notices(&self, facts: &RunFacts<'_>) -> Vec<Notice>;
}
