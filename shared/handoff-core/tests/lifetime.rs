//! A thread is alive or gone, never half: once its head expired, the id starts a fresh
//! thread that works, with none of the old records showing through.

mod support;

use agui_protocol::{Event, Message, RunFinishedOutcome};
use futures::executor::block_on;
use handoff_core::records::{
    MARK_KEY, PAGE_PREFIX, PROFILE_KEY, THREAD_KEY, ThreadRecord, page_key,
};
use handoff_core::{
    Condition, EngineConfig, ForkRequest, Principal, Store, StoreError, ThreadChanges, Write,
    WriteOp,
};
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

/// Pages kept 10 s from their write, an untouched thread 4 s.
const HISTORY_TTL: u64 = 10_000;
const THREAD_TTL: u64 = 4_000;

fn short_lifetimes() -> EngineConfig {
    EngineConfig {
        history_ttl_ms: HISTORY_TTL,
        thread_ttl_ms: THREAD_TTL,
        ..EngineConfig::default()
    }
}

async fn head(h: &Harness, thread: &str) -> ThreadRecord {
    let item = h.item(thread, THREAD_KEY).await.expect("a head");
    serde_json::from_slice(&item.value).unwrap()
}

fn ids(messages: &[Message]) -> Vec<String> {
    messages.iter().map(|m| m.id().to_string()).collect()
}

/// Whether a commit is one of a renewal's batches: a head check, then page puts.
fn renewal_batch(_: &str, writes: &[Write]) -> bool {
    matches!(writes.first(), Some(w) if w.key == THREAD_KEY && w.op == WriteOp::Check)
        && writes.iter().any(|w| w.key.starts_with(PAGE_PREFIX))
}

/// Before, a page was written once with `history_ttl_ms` and never renewed: a thread kept
/// busy past that lost its first turns (from 12 s on here) while its head lived on.
#[test]
fn a_busy_thread_keeps_its_whole_history_past_the_pages_retention() {
    block_on(async {
        let h = Harness::with_config(Chatty, short_lifetimes());
        // A turn every 3 s for 24 s, more than twice the pages' retention; named after
        // the first, as PATCH /threads/{id} does.
        for turn in 1..=8 {
            h.run(&user_input("t", &format!("r{turn}"), "hi")).await;
            if turn == 1 {
                let changes = ThreadChanges {
                    name: Some("Refunds".into()),
                    ..ThreadChanges::default()
                };
                let anyone = Principal::anonymous();
                h.engine
                    .update_thread(&anyone, "t", &changes)
                    .await
                    .unwrap();
            }
            h.advance(3_000);
        }
        // Runs never rewrite the profile: the renewal kept it with the pages.
        let profile = h
            .item("t", PROFILE_KEY)
            .await
            .expect("the name outlived its retention");
        let profile: serde_json::Value = serde_json::from_slice(&profile.value).unwrap();
        assert_eq!(profile["name"], "Refunds");
        let view = h.thread("t").await;
        let ids = ids(&view.messages);
        assert_eq!(ids.len(), 16, "{ids:?}");
        assert_eq!(ids[0], "u-r1", "the first turn is still there: {ids:?}");
        assert_eq!(head(&h, "t").await.pages, 8);

        // Every page outlives the head; the marker outlives every page.
        let now = h.now();
        let expiry = |item: Option<handoff_core::Item>| item.unwrap().expires_at_ms.unwrap();
        let head_expires = expiry(h.item("t", THREAD_KEY).await);
        let mark_expires = expiry(h.item("t", MARK_KEY).await);
        let pages = h.store.scan("t", PAGE_PREFIX, now).await.unwrap();
        assert_eq!(pages.len(), 8);
        for page in &pages {
            let at = page.expires_at_ms.unwrap();
            assert!(
                at >= head_expires && at <= mark_expires,
                "{}: {at}",
                page.key
            );
        }
        assert_eq!(
            head(&h, "t").await.pages_expire_at_ms,
            pages.iter().filter_map(|p| p.expires_at_ms).min()
        );

        // Left idle past the thread's TTL (its last turn was 3 s ago), it is gone whole.
        h.advance(THREAD_TTL - 3_000);
        assert!(
            h.engine
                .thread(&Principal::anonymous(), "t")
                .await
                .unwrap()
                .is_none(),
            "GET /threads/t is a 404"
        );
        h.run(&user_input("t", "r9", "hi again")).await;
        let ids = ids_of(&h).await;
        assert_eq!((ids.len(), ids[0].as_str()), (2, "u-r9"), "{ids:?}");
    });
}

async fn ids_of(h: &Harness) -> Vec<String> {
    ids(&h.thread("t").await.messages)
}

/// A head stored before `pagesExpireAtMs` was kept does not say when its pages expire:
/// its next finish renews them.
#[test]
fn a_head_written_before_the_pages_expiry_was_kept_renews_them_on_its_next_finish() {
    block_on(async {
        let h = Harness::with_config(Chatty, short_lifetimes());
        h.run(&user_input("t", "r1", "one")).await;
        let written = h.now();
        let item = h.item("t", THREAD_KEY).await.unwrap();
        let mut legacy: serde_json::Value = serde_json::from_slice(&item.value).unwrap();
        let field = legacy.as_object_mut().unwrap().remove("pagesExpireAtMs");
        assert_eq!(field, Some((written + HISTORY_TTL).into()));
        let write = Write::put(
            THREAD_KEY,
            Condition::Version(item.version),
            legacy.to_string().into_bytes(),
            item.expires_at_ms,
        );
        h.store.commit("t", vec![write], h.now()).await.unwrap();
        assert_eq!(head(&h, "t").await.pages_expire_at_ms, None);

        h.advance(1_000);
        h.run(&user_input("t", "r2", "two")).await;
        let renewed = Some(h.now() + HISTORY_TTL);
        let page0 = h.item("t", &page_key(0)).await.unwrap();
        assert_eq!(page0.expires_at_ms, renewed, "page 0 renewed");
        assert_eq!(head(&h, "t").await.pages_expire_at_ms, renewed);
        // Past page 0's first retention, the thread kept alive still has it.
        for run in ["r3", "r4"] {
            h.advance(3_000);
            h.run(&user_input("t", run, "more")).await;
        }
        h.advance(3_500);
        assert!(h.now() > written + HISTORY_TTL);
        assert_eq!(ids_of(&h).await[0], "u-r1");
    });
}

/// A renewal the store refuses fails no run and changes nothing: the head keeps the old
/// expiry, and the next finish renews.
#[test]
fn a_failed_renewal_is_retried_by_the_next_finish() {
    block_on(async {
        let h = Harness::with_config(Chatty, short_lifetimes());
        h.run(&user_input("t", "r1", "one")).await;
        let first_expiry = Some(h.now() + HISTORY_TTL);
        h.advance(3_000);
        h.run(&user_input("t", "r2", "two")).await;
        // Page 0 expires in 3.5 s, before a head written now (4 s): due.
        h.advance(3_500);
        h.store
            .fail_commits_where(StoreError::Unavailable("throttled".into()), renewal_batch);
        let events = h.run(&user_input("t", "r3", "three")).await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(h.store.injected_failures(), 1);
        assert_eq!(head(&h, "t").await.pages_expire_at_ms, first_expiry);
        assert_eq!(
            h.item("t", &page_key(0)).await.unwrap().expires_at_ms,
            first_expiry
        );

        h.store.heal();
        h.advance(1_000);
        h.run(&user_input("t", "r4", "four")).await;
        let renewed = Some(h.now() + HISTORY_TTL);
        assert_eq!(head(&h, "t").await.pages_expire_at_ms, renewed);
        for n in 0..4 {
            assert_eq!(
                h.item("t", &page_key(n)).await.unwrap().expires_at_ms,
                renewed
            );
        }
        h.advance(3_000);
        assert_eq!(ids_of(&h).await[0], "u-r1");
    });
}

/// A finish that renews the pages without writing one (a failed run) renews the marker
/// too: a marker expiring before the pages would leave them to collide with a new
/// thread's under the same id.
#[test]
fn a_renewal_renews_the_marker_with_the_pages() {
    block_on(async {
        let h = Harness::with_config(
            Scripted(|ctx| match ctx.last_user_text().as_deref() {
                Some("fail") => Err(handoff_core::AgentError::new("boom")),
                _ => {
                    ctx.say("ok");
                    Ok(handoff_core::Finish::done())
                }
            }),
            short_lifetimes(),
        );
        h.run(&user_input("t", "r1", "one")).await;
        h.advance(3_000);
        h.run(&user_input("t", "r2", "two")).await;
        h.advance(3_500);
        let events = h.run(&user_input("t", "r3", "fail")).await;
        assert!(matches!(events.last(), Some(Event::RunError(_))));
        assert_eq!(head(&h, "t").await.pages, 2, "the failed run wrote no page");
        let renewed = Some(h.now() + HISTORY_TTL);
        assert_eq!(
            h.item("t", &page_key(0)).await.unwrap().expires_at_ms,
            renewed
        );
        // Renewed with them, with its margin (a tenth of their lifetime) past them.
        assert_eq!(
            h.item("t", MARK_KEY).await.unwrap().expires_at_ms,
            renewed.map(|at| at + HISTORY_TTL / 10)
        );
    });
}

/// A run that lost its lease renews nothing: the batches check the head's version.
#[test]
fn a_renewal_is_fenced_by_the_head() {
    block_on(async {
        let h = Harness::with_config(Chatty, short_lifetimes());
        h.run(&user_input("t", "r1", "one")).await;
        let first_expiry = h.item("t", &page_key(0)).await.unwrap().expires_at_ms;
        h.advance(3_000);
        h.run(&user_input("t", "r2", "two")).await;
        h.advance(3_500);
        // Another writer moves the head on between the claim and the finish's renewal.
        let store = h.store.clone();
        let gate = h.store.hold_next_commit_where(renewal_batch);
        let mut stream = h.stream(&user_input("t", "r3", "three")).await;
        let (_, ended) = drain_ready(&mut stream);
        assert!(!ended);
        let item = store
            .get_one("t", THREAD_KEY, h.now())
            .await
            .unwrap()
            .unwrap();
        let bump = Write::put(
            THREAD_KEY,
            Condition::Version(item.version),
            item.value,
            item.expires_at_ms,
        );
        store.commit("t", vec![bump], h.now()).await.unwrap();
        gate.open();
        let events = futures::StreamExt::collect::<Vec<_>>(stream).await;
        assert_eq!(run_error(&events).code.as_deref(), Some("LEASE_LOST"));
        assert_eq!(
            h.item("t", &page_key(0)).await.unwrap().expires_at_ms,
            first_expiry
        );
    });
}

/// Pages are kept at least twice the head's TTL: with a history retention equal to it,
/// every finish would re-put every page.
#[test]
fn a_history_retention_as_short_as_the_threads_still_renews_rarely() {
    block_on(async {
        let config = EngineConfig {
            history_ttl_ms: THREAD_TTL,
            ..short_lifetimes()
        };
        let h = Harness::with_config(Chatty, config);
        h.run(&user_input("t", "r1", "one")).await;
        let first_expiry = Some(h.now() + 2 * THREAD_TTL);
        for run in ["r2", "r3", "r4"] {
            h.advance(1_000);
            h.run(&user_input("t", run, "more")).await;
        }
        // Page 0 expires in 5 s, after a head written now (4 s): not renewed.
        assert_eq!(
            h.item("t", &page_key(0)).await.unwrap().expires_at_ms,
            first_expiry
        );
        h.advance(2_000);
        h.run(&user_input("t", "r5", "more")).await;
        let renewed = Some(h.now() + 2 * THREAD_TTL);
        assert_eq!(
            h.item("t", &page_key(0)).await.unwrap().expires_at_ms,
            renewed
        );
    });
}

/// A fork's head says when its one page expires, like any thread's page 0.
#[test]
fn a_fork_records_when_its_pages_expire() {
    block_on(async {
        let h = Harness::with_config(Chatty, short_lifetimes());
        h.run(&user_input("t", "r1", "one")).await;
        h.advance(1_000);
        let request = ForkRequest {
            thread_id: Some("f".into()),
            ..ForkRequest::default()
        };
        let id = h
            .engine
            .fork_thread(&Principal::anonymous(), "t", &request)
            .await
            .unwrap();
        assert_eq!(id, "f");
        let page0 = h.item("f", &page_key(0)).await.unwrap();
        assert_eq!(page0.expires_at_ms, Some(h.now() + HISTORY_TTL));
        assert_eq!(head(&h, "f").await.pages_expire_at_ms, page0.expires_at_ms);
    });
}

/// Before, every finish that wrote a page rewrote the marker (a store write per turn, on
/// DynamoDB a write unit each). The marker is written with a margin past its pages, so a
/// busy thread rewrites it once per margin (a tenth of the pages' lifetime, at most a day),
/// and it still outlives every page.
#[test]
fn a_busy_thread_rewrites_its_marker_once_per_margin() {
    block_on(async {
        let h = Harness::new(Chatty);
        let mark_version = || async { h.item("t", MARK_KEY).await.expect("a marker").version };
        for turn in 1..=10 {
            h.run(&user_input("t", &format!("r{turn}"), "hi")).await;
            h.advance(60_000);
        }
        assert_eq!(
            mark_version().await,
            1,
            "written with the thread, not per turn"
        );
        // A day later (the margin with the default lifetimes), the next turn renews it.
        h.advance(DAY);
        h.run(&user_input("t", "r11", "hi")).await;
        assert_eq!(mark_version().await, 2);
        h.run(&user_input("t", "r12", "hi")).await;
        assert_eq!(mark_version().await, 2);

        let now = h.now();
        let mark_expires = h.item("t", MARK_KEY).await.unwrap().expires_at_ms.unwrap();
        let pages = h.store.scan("t", PAGE_PREFIX, now).await.unwrap();
        assert_eq!(pages.len(), 12);
        for page in &pages {
            let at = page.expires_at_ms.unwrap();
            assert!(at <= mark_expires, "{} outlives the marker: {at}", page.key);
        }
    });
}
