//! A thread is alive or gone, never half: once its head expired, the id starts a fresh
//! thread that works, with none of the old records showing through.

mod support;

use agui_protocol::{Event, RunFinishedOutcome};
use handoff_core::EngineConfig;
use handoff_core::records::{MARK_KEY, PAGE_PREFIX};
use support::*;

const DAY: u64 = 24 * 60 * 60 * 1000;

/// Before, the new head's first page collided with the old thread's page 0 (pages live
/// 365 days, heads 30): every run on the id ended `LEASE_LOST` and the thread stayed
/// blocked.
#[test]
fn an_expired_thread_is_gone_whole_and_its_id_starts_afresh() {
    futures::executor::block_on(async {
        let probe = Probe::new();
        let h = Harness::with_config(RefundAgent::new(probe.clone()), EngineConfig::default());
        let raised = interrupts(&h.run(&user_input("t", "r1", "refund")).await);
        h.run(&resume_input("t", "r2", vec![approve(&raised[0])]))
            .await;
        assert!(
            h.item("t", &format!("{PAGE_PREFIX}00000000"))
                .await
                .is_some()
        );
        assert!(h.item("t", MARK_KEY).await.is_some());

        h.advance(EngineConfig::default().thread_ttl_ms + DAY);
        assert!(
            h.engine
                .thread(&handoff_core::Principal::anonymous(), "t")
                .await
                .unwrap()
                .is_none(),
            "GET /threads/t is a 404"
        );
        assert!(
            h.item("t", &format!("{PAGE_PREFIX}00000000"))
                .await
                .is_some(),
            "old pages linger"
        );

        let events = h.run(&user_input("t", "r3", "refund again")).await;
        assert!(
            !matches!(events.last(), Some(Event::RunError(_))),
            "{}",
            dump(&events)
        );
        assert!(matches!(
            outcome(&events),
            RunFinishedOutcome::Interrupt { .. }
        ));
        let view = h.thread("t").await;
        let ids: Vec<String> = view.messages.iter().map(|m| m.id().to_string()).collect();
        assert!(
            !ids.iter().any(|id| id.contains("r1") || id.contains("r2")),
            "none of the old messages: {ids:?}"
        );
        assert!(view.answers.is_empty(), "none of the old answers");
        // And it keeps working.
        let raised = interrupts(&events);
        let events = h
            .run(&resume_input("t", "r4", vec![approve(&raised[0])]))
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
    });
}
