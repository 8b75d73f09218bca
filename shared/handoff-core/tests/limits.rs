//! Rate limits and token budgets kept in the store: refused before anything is claimed
//! (an answer stays pending and can be sent again), shared by every engine over the same
//! store, and a spent budget ends a running run at its next model call with its usage.

mod support;

use agui_protocol::{Event, TokenUsage};
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::limits::Quota;
use handoff_core::{Agent, AgentError, CoreError, EngineConfig, Finish, RunContext};
use support::*;

fn config(rate: Option<&str>, budget: Option<&str>) -> EngineConfig {
    EngineConfig {
        rate_limit: rate.map(|q| q.parse().unwrap()),
        token_budget: budget.map(|q| q.parse().unwrap()),
        ..EngineConfig::default()
    }
}

/// Makes `calls` "model calls" of 40 tokens each, checking the budget before each.
struct Spender {
    calls: usize,
}

#[async_trait::async_trait]
impl Agent for Spender {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        for _ in 0..self.calls {
            ctx.check_budget().await?;
            ctx.record_usage(TokenUsage {
                provider: Some("p".into()),
                model: Some("m".into()),
                input_tokens: Some(30),
                output_tokens: Some(10),
                total_tokens: Some(40),
                ..TokenUsage::default()
            });
        }
        ctx.say("spent");
        Ok(Finish::done())
    }
}

fn rate_limited(error: &CoreError) -> (u64, u64, u64) {
    match error {
        CoreError::RateLimited {
            remaining,
            retry_after_ms,
            reset_ms,
            ..
        } => (*remaining, *retry_after_ms, *reset_ms),
        other => panic!("not rate limited: {other:?}"),
    }
}

#[test]
fn the_bucket_refills_evenly_over_its_window() {
    block_on(async {
        let h = Harness::with_config(Spender { calls: 0 }, config(Some("3/9s"), None));
        for run in 1..=3 {
            h.run(&user_input(&format!("t{run}"), "r1", "hi")).await;
        }
        let refused = h.reject(&user_input("t4", "r1", "hi")).await;
        assert_eq!(refused.code().name, "RATE_LIMITED");
        assert_eq!(refused.http_status(), 429);
        // One run comes back every 3 s; the bucket is full again 9 s after the last take.
        assert_eq!(rate_limited(&refused), (0, 3_000, 9_000));
        assert!(h.store.commits() > 0);
        h.advance(2_999);
        h.reject(&user_input("t4", "r1", "hi")).await;
        h.advance(1);
        h.run(&user_input("t4", "r1", "hi")).await;
    });
}

#[test]
fn another_instance_over_the_same_store_sees_the_same_bucket() {
    block_on(async {
        let h = Harness::with_config(Spender { calls: 0 }, config(Some("2/min"), None));
        let other = h.instance(Spender { calls: 0 }, "other");
        h.run(&user_input("a", "r1", "hi")).await;
        let input = user_input("b", "r1", "hi");
        let stream = other
            .start(input.clone(), Default::default())
            .await
            .unwrap();
        futures::StreamExt::collect::<Vec<_>>(stream).await;
        let refused = h.reject(&user_input("c", "r1", "hi")).await;
        assert_eq!(rate_limited(&refused).1, 30_000);
    });
}

#[test]
fn a_refused_answer_stays_pending_and_is_accepted_later() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::with_config(RefundAgent::new(probe.clone()), config(Some("1/min"), None));
        let events = h.run(&user_input("t", "r1", "refund please")).await;
        let pending = interrupts(&events);
        let answer = resume_input("t", "r2", vec![approve(&pending[0])]);
        assert_eq!(h.reject(&answer).await.code().name, "RATE_LIMITED");
        assert_eq!(probe.calls(), 0, "nothing executed");
        let view = h.thread("t").await;
        assert_eq!(
            view.pending_interrupts.len(),
            1,
            "the interrupt is still pending"
        );
        h.advance(60_000);
        h.run(&answer).await;
        assert_eq!(probe.calls(), 1);
    });
}

#[test]
fn a_spent_budget_refuses_new_runs_until_the_next_window() {
    block_on(async {
        // 100 tokens a day: the first run spends 120 (three calls, the third allowed because
        // the window held 80 before it).
        let h = Harness::with_config(Spender { calls: 3 }, config(None, Some("100/day")));
        let events = h.run(&user_input("t1", "r1", "go")).await;
        assert_eq!(
            outcome(&events),
            &agui_protocol::RunFinishedOutcome::success()
        );
        let refused = h.reject(&user_input("t2", "r1", "go")).await;
        assert_eq!(refused.code().name, "BUDGET_EXCEEDED");
        let CoreError::BudgetExceeded { retry_after_ms } = refused else {
            unreachable!()
        };
        // Windows are UTC days: the refusal waits for the next midnight.
        let day = 86_400_000;
        assert_eq!(retry_after_ms, day - h.now() % day);
        h.advance(retry_after_ms);
        h.run(&user_input("t2", "r1", "go")).await;
    });
}

#[test]
fn a_running_run_ends_at_its_next_model_call_with_its_usage() {
    block_on(async {
        // 70 tokens: the second call sees 40 used (allowed), the third 80 (refused).
        let h = Harness::with_config(Spender { calls: 5 }, config(None, Some("70/h")));
        let events = h.run(&user_input("t1", "r1", "go")).await;
        let error = run_error(&events);
        assert_eq!(error.code.as_deref(), Some("BUDGET_EXCEEDED"));
        let usage = error.usage.as_ref().expect("usage on RUN_ERROR");
        assert_eq!(usage[0].total_tokens, Some(80));
        assert!(matches!(events.last(), Some(Event::RunError(_))));
    });
}

#[test]
fn quotas_print_as_they_parse() {
    let quota: Quota = "60/min".parse().unwrap();
    assert_eq!(quota.to_string(), "60/60s");
}
