//! The schedules' ticker: a Durable Object whose alarm ticks them at each next due tick,
//! between Cron Triggers (see `handoff::worker::schedules`).

use worker::{DurableObject, Env, Request, Response, State, durable_object};

use crate::demo_without_request;

/// Ticks the schedules between Cron Triggers, at each next due tick (its alarm): bound as
/// `SCHEDULES` (see `handoff::worker::schedules`).
#[durable_object]
pub struct ScheduleTicker {
    state: State,
    env: Env,
}

impl DurableObject for ScheduleTicker {
    fn new(state: State, env: Env) -> Self {
        Self { state, env }
    }

    async fn fetch(&self, req: Request) -> worker::Result<Response> {
        handoff::worker::schedules::ticker_fetch(&self.state, req).await
    }

    async fn alarm(&self) -> worker::Result<Response> {
        let (host, served) = demo_without_request(self.env.clone())?;
        handoff::worker::schedules::ticker_alarm(&self.state, host, served.agent).await
    }
}
