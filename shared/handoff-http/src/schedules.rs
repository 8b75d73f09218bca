//! Running schedules' ticks (`handoff_core::schedule`): what each host's trigger calls.
//!
//! [`Scheduler::tick`] finds the schedules due, claims each tick with the store's
//! compare-and-set (of instances racing, one wins) and starts the tick's run as a
//! background run of the schedule's agent, as its owner: on the host's
//! [`Runtime::background`](handoff_core::Runtime::background) where it has one (the dev
//! server), else driven to its end before `tick` returns (a Lambda invocation, a Workers
//! `scheduled` event or Durable Object alarm, which end when their handler does). Its end
//! is told to the webhooks like any run's (`handoff_core::outbox`).
//!
//! | host | trigger |
//! |---|---|
//! | dev server | an in-process timer, every `HANDOFF_SCHEDULE_POLL_MS` (default 1000) |
//! | Lambda | an EventBridge Scheduler rule in `infra/template.yaml`, every minute (`handoff::lambda`) |
//! | Workers | the Cron Trigger in `wrangler.toml`, every minute, plus a Durable Object alarm at the next due tick for sub-minute ticks (`handoff::worker`) |

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use futures::future::BoxFuture;
use handoff_core::schedule::{self, Tick};
use handoff_core::{CoreError, Engine, Spawn};

use crate::routes::background;

/// Schedules one sweep claims at most.
pub const TICK_LIMIT: usize = 50;

/// What one [`Scheduler::tick`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TickReport {
    /// Ticks this instance claimed and whose runs started.
    pub started: usize,
    /// Ticks another instance claimed first.
    pub lost: usize,
    /// Ticks claimed here whose runs could not start (logged; not retried).
    pub failed: usize,
}

/// Claims due ticks and starts their runs, on the engines of the agents a host serves.
#[derive(Clone, Debug)]
pub struct Scheduler {
    primary: Engine,
    agents: BTreeMap<String, Engine>,
}

impl Scheduler {
    /// Ticks for the agent of `primary` (by its name).
    pub fn new(primary: Engine) -> Self {
        Scheduler {
            primary,
            agents: BTreeMap::new(),
        }
    }

    /// Also ticks for the agent `id` (a CopilotKit agent served next to the primary one).
    #[must_use]
    pub fn agent(mut self, id: impl Into<String>, engine: Engine) -> Self {
        self.agents.insert(id.into(), engine);
        self
    }

    fn engine(&self, agent_id: &str) -> Option<&Engine> {
        match agent_id == self.primary.agent_name() {
            true => Some(&self.primary),
            false => self.agents.get(agent_id),
        }
    }

    /// Claims what is due now (up to [`TICK_LIMIT`]) and starts its runs. Runs without a
    /// background executor are driven to their ends before this returns.
    pub async fn tick(&self) -> TickReport {
        self.tick_until(None).await
    }

    /// [`Scheduler::tick`], its runs ending by `deadline_ms` (Unix ms) at the latest: a run
    /// still going then ends `RUN_FINISHED{cancelled}` (the host's invocation deadline).
    pub async fn tick_until(&self, deadline_ms: Option<u64>) -> TickReport {
        let runtime = self.primary.runtime();
        let store = self.primary.store().as_ref();
        let now = runtime.now_ms();
        let mut report = TickReport::default();
        let due = match schedule::due(store, now, TICK_LIMIT).await {
            Ok(due) => due,
            Err(err) => {
                tracing::warn!(error = %err, "schedules: the due ones could not be listed");
                return report;
            }
        };
        let mut inline: Vec<BoxFuture<'static, ()>> = Vec::new();
        for due in due {
            let run_id = runtime.ids.next_id("run");
            let tick = match schedule::claim(store, &due, &run_id, now).await {
                Ok(Some(tick)) => tick,
                Ok(None) => {
                    report.lost += 1;
                    continue;
                }
                Err(err) => {
                    tracing::warn!(schedule = %due.schedule.id, error = %err, "schedules: a claim failed");
                    continue;
                }
            };
            tracing::info!(
                schedule = %tick.schedule.id,
                tenant = %tick.schedule.owner.tenant,
                tick_ms = tick.run.tick_ms,
                thread_id = %tick.run.thread_id,
                run_id = %tick.run.run_id,
                "schedule tick claimed"
            );
            match self.start(&tick, deadline_ms).await {
                Ok(Some(drive)) => {
                    inline.push(drive);
                    report.started += 1;
                }
                Ok(None) => report.started += 1,
                Err(err) => {
                    report.failed += 1;
                    tracing::warn!(
                        schedule = %tick.schedule.id,
                        run_id = %tick.run.run_id,
                        error = %err,
                        "schedules: a claimed tick's run did not start"
                    );
                }
            }
        }
        futures::future::join_all(inline).await;
        report
    }

    /// Starts the tick's run: on the background executor (`None`), or as the future that
    /// drives it, for the caller to await.
    async fn start(
        &self,
        tick: &Tick,
        deadline_ms: Option<u64>,
    ) -> Result<Option<BoxFuture<'static, ()>>, CoreError> {
        let engine = self.engine(&tick.schedule.agent_id).ok_or_else(|| {
            CoreError::InvalidInput(format!(
                "agent {:?} is not served here",
                tick.schedule.agent_id
            ))
        })?;
        let mut options = tick.options();
        options.deadline_ms = deadline_ms;
        // Nobody streams it: at the deadline it is handed over (finished by a later
        // re-drive), not cancelled, as a background run is.
        options.hand_off_at_deadline = true;
        let events = engine.start_shared(tick.input()?, options).await?;
        let background: Option<Arc<dyn Spawn>> = engine.runtime().background.clone();
        Ok(match background {
            Some(background) => {
                background::drive(&background, events);
                None
            }
            None => Some(Box::pin(events.for_each(|_| futures::future::ready(())))),
        })
    }
}
