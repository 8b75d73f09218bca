//! Engine-level: one thread's audit trail listed over a real store. Two threads of a tenant
//! have approved refunds (one of them twice, a minute apart); an auditor lists one thread:
//! only its entries, newest first in chain order, each effect with the idempotency key its
//! attempt was handed; page by page with the sealed cursor to the end; from a time on; and
//! the tenant's listing still holds every thread's entries.
//!
//! The per-thread listing reads the chain's head and its entries by key (not the tenant's
//! listing), so this is where a store's multi-key reads meet the audit trail.

use std::sync::Arc;

use agui_protocol::{Event, Interrupt, Message, RunAgentInput, RunFinishedOutcome};
use futures::StreamExt;
use handoff_core::records::audit::{AuditEntry, AuditKind};
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::{AuditQuery, Engine, Principal, RunOptions, Store};

use crate::BASE_MS;
use crate::race::{Outcome, RaceAgent, approve, attempt_with};
use crate::support::Namespace;

/// Runs the listing described in the module docs against `store`; panics on the first
/// deviation.
pub async fn audit_lists_one_thread(store: Arc<dyn Store>) {
    let ns = Namespace::new("audit_lists_one_thread");
    // A tenant of its own: the tenant's listing holds this check's entries only.
    let tenant = ns.partition("tenant").replace(['/', ':'], "-");
    let alice = Principal::new(tenant.clone(), "alice");
    let auditor = Principal::new(tenant, "audrey").with_roles(["auditor"]);
    let clock = Arc::new(ManualClock::new(BASE_MS));
    let runtime = Runtime::new(clock.clone(), SequentialIds::new("audit"), NeverSleep);
    let engine = Engine::new(RaceAgent::new("audit-", |_| {}), store, runtime);
    let as_alice = || RunOptions {
        principal: alice.clone(),
        ..RunOptions::default()
    };

    // An approved refund: its effect's entry, then the answer's.
    let refund = |thread: &'static str, turn: u32| {
        let (engine, options) = (&engine, as_alice());
        async move {
            let message = Message::user(format!("msg-{turn}"), "Refund order A1024");
            let ask = RunAgentInput::new(thread, format!("ask-{turn}"), vec![message]);
            let events: Vec<_> = engine
                .start(ask, options.clone())
                .await
                .expect("ask")
                .collect()
                .await;
            let interrupt =
                interrupt_of(&events).unwrap_or_else(|| panic!("{thread}: no interrupt"));
            let answer = approve(thread, &format!("yes-{turn}"), interrupt.id.as_str());
            match attempt_with(engine, answer, options).await {
                Outcome::Answered(_) => {}
                other => panic!("the approval of {thread} failed: {other:?}"),
            }
        }
    };
    refund("audit-1", 1).await;
    refund("audit-2", 1).await;
    clock.advance(60_000);
    refund("audit-1", 2).await;

    let list = |query: AuditQuery| {
        let (engine, auditor) = (&engine, &auditor);
        async move { engine.list_audit(auditor, &query).await.expect("list") }
    };
    let one = |limit| AuditQuery {
        thread_id: Some("audit-1".into()),
        limit,
        ..AuditQuery::default()
    };

    let page = list(one(100)).await;
    assert_eq!(seqs(&page.entries), [4, 3, 2, 1], "{:?}", page.entries);
    assert!(page.next_cursor.is_none());
    let kinds: Vec<AuditKind> = page.entries.iter().map(|e| e.kind).collect();
    use AuditKind::{Answer, Effect};
    assert_eq!(kinds, [Answer, Effect, Answer, Effect]);
    for entry in &page.entries {
        assert_eq!(entry.thread_id, "audit-1");
        assert_eq!(entry.principal, "alice");
        if entry.kind == Effect {
            assert!(entry.idempotency_key.is_some(), "{entry:?}");
            assert_eq!(entry.attempt, Some(1), "{entry:?}");
        }
    }

    // One at a time, to the end.
    let mut query = one(1);
    let mut paged = Vec::new();
    loop {
        let page = list(query.clone()).await;
        paged.extend(seqs(&page.entries));
        match page.next_cursor {
            Some(cursor) => query.cursor = Some(cursor),
            None => break,
        }
    }
    assert_eq!(paged, [4, 3, 2, 1]);

    let mut recent = one(100);
    recent.since_ms = Some(BASE_MS + 30_000);
    assert_eq!(seqs(&list(recent).await.entries), [4, 3]);

    let tenant_wide = list(AuditQuery {
        limit: 100,
        ..AuditQuery::default()
    })
    .await;
    let mut threads: Vec<&str> = tenant_wide
        .entries
        .iter()
        .map(|e| e.thread_id.as_str())
        .collect();
    threads.sort_unstable();
    let expected = [
        "audit-1", "audit-1", "audit-1", "audit-1", "audit-2", "audit-2",
    ];
    assert_eq!(threads, expected);

    let verdict = engine
        .verify_audit(&auditor, Some("audit-1"))
        .await
        .expect("verify");
    assert!(verdict.intact && verdict.entries == 4, "{verdict:?}");
}

/// The one interrupt a run ended with.
fn interrupt_of(events: &[Event]) -> Option<Interrupt> {
    match events.last() {
        Some(Event::RunFinished(finished)) => match &finished.outcome {
            Some(RunFinishedOutcome::Interrupt { interrupts }) => interrupts.first().cloned(),
            _ => None,
        },
        _ => None,
    }
}

fn seqs(entries: &[AuditEntry]) -> Vec<u64> {
    entries.iter().map(|e| e.seq).collect()
}
