//! Engine-level: a thread's life as a product over a real store, every record it leaves
//! counted. A thread that ran, was interrupted, resumed (an effect, a resume record, history
//! pages), renamed, listed and forked is deleted: afterwards its partition holds nothing
//! but its audit trail (whole, for auditors only; an entry altered in the store is found),
//! it is out of its owner's list, and the fork (which only read it) still works.
//!
//! The engine needs the store shared (`Arc`): [`run_all`](crate::run_all) and the test
//! macro wrap the store they make, [`run_named`](crate::run_named) a clone.

use std::sync::Arc;

use handoff_core::codes::ErrorCode;
use handoff_core::records::audit::{AuditEntry, audit_entry_key, is_audit_key};
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::{Condition, Write};
use handoff_core::{Engine, ForkRequest, Principal, RunOptions, Store, ThreadChanges, ThreadQuery};

use crate::BASE_MS;
use crate::race::{Outcome, RaceAgent, approve, attempt_with, interrupt_thread_with};
use crate::support::Namespace;

/// Runs the life described in the module docs against `store`; panics on the first
/// deviation.
pub async fn thread_is_erased_whole(store: Arc<dyn Store>) {
    let ns = Namespace::new("thread_is_erased_whole");
    // A tenant of its own: the owner's list holds this check's threads only.
    let tenant = ns.partition("tenant").replace(['/', ':'], "-");
    let alice = Principal::new(tenant.clone(), "alice");
    let runtime = Runtime::new(
        ManualClock::new(BASE_MS),
        SequentialIds::new("life"),
        NeverSleep,
    );
    let engine = Engine::new(RaceAgent::new("life-", |_| {}), store.clone(), runtime);
    let engine = &engine;
    let thread_id = "life-1";
    let partition = alice.partition(thread_id).unwrap();
    let as_alice = || RunOptions {
        principal: alice.clone(),
        ..RunOptions::default()
    };
    let interrupt = interrupt_thread_with(engine, thread_id, as_alice()).await;
    let answer = approve(thread_id, "life-yes", interrupt.id.as_str());
    match attempt_with(engine, answer, as_alice()).await {
        Outcome::Answered(_) => {}
        other => panic!("the resume failed: {other:?}"),
    }
    let renamed = ThreadChanges {
        name: Some("Refunds".into()),
        archived: None,
    };
    engine
        .update_thread(&alice, thread_id, &renamed)
        .await
        .expect("rename");
    let fork = engine
        .fork_thread(&alice, thread_id, &ForkRequest::default())
        .await
        .expect("fork");

    let now = BASE_MS + 60_000;
    let before = store
        .list(&partition, "", now)
        .await
        .expect("list the partition");
    for prefix in [
        "thread", "msgs#", "run#", "resume#", "effect#", "profile", "mark", "audit#",
    ] {
        assert!(
            before.iter().any(|k| k.starts_with(prefix)),
            "the thread should have stored a {prefix} record: {before:?}"
        );
    }
    let query = ThreadQuery {
        limit: 10,
        ..ThreadQuery::default()
    };
    let listed = engine.list_threads(&alice, &query).await.expect("list");
    let ids: Vec<&str> = listed.threads.iter().map(|t| t.id.as_str()).collect();
    assert!(
        ids.contains(&thread_id) && ids.contains(&fork.as_str()),
        "{ids:?}"
    );

    engine
        .delete_thread(&alice, thread_id)
        .await
        .expect("delete");
    let after = store
        .list(&partition, "", now)
        .await
        .expect("list the partition");
    let audit_keys: Vec<&String> = before.iter().filter(|k| is_audit_key(k)).collect();
    assert_eq!(
        after.iter().collect::<Vec<_>>(),
        audit_keys,
        "every record goes but the audit trail (was {before:?})"
    );
    audit_trail_survives_and_tampering_shows(engine, store.as_ref(), &alice, thread_id).await;
    assert!(
        engine
            .thread(&alice, thread_id)
            .await
            .expect("read")
            .is_none()
    );
    let listed = engine.list_threads(&alice, &query).await.expect("list");
    let ids: Vec<&str> = listed.threads.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, [fork.as_str()], "out of the list; the fork stays");
    let forked = engine.thread(&alice, &fork).await.expect("read the fork");
    assert!(
        forked.is_some_and(|f| !f.messages.is_empty()),
        "the fork keeps its own copy of the history"
    );
    assert_eq!(
        engine
            .delete_thread(&alice, thread_id)
            .await
            .map_err(|e| e.code().name),
        Err("THREAD_NOT_FOUND"),
        "a second delete"
    );
}

/// After the thread's deletion its audit chain is whole (an answer and the effect it
/// executed), listed for an auditor of the tenant only; an entry altered in the store is
/// found by the verification, at its sequence number.
async fn audit_trail_survives_and_tampering_shows(
    engine: &Engine,
    store: &dyn Store,
    alice: &Principal,
    thread_id: &str,
) {
    let auditor = Principal::new(alice.tenant.clone(), "audrey").with_roles(["auditor"]);
    assert_eq!(
        engine
            .verify_audit(alice, None)
            .await
            .map_err(|e| e.code().name),
        Err("FORBIDDEN"),
        "only auditors read the trail"
    );
    let whole = engine
        .verify_audit(&auditor, Some(thread_id))
        .await
        .expect("verify");
    assert!(whole.intact && whole.entries >= 2, "{whole:?}");
    let query = handoff_core::AuditQuery {
        thread_id: Some(thread_id.to_owned()),
        limit: 10,
        ..handoff_core::AuditQuery::default()
    };
    let page = engine.list_audit(&auditor, &query).await.expect("list");
    let kinds: Vec<String> = page
        .entries
        .iter()
        .map(|e| {
            serde_json::to_value(e.kind)
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(
        kinds.contains(&"answer".to_owned()) && kinds.contains(&"effect".to_owned()),
        "{kinds:?}"
    );
    assert_eq!(page.entries.len() as u64, whole.entries);

    let partition = alice.partition(thread_id).unwrap();
    let now = BASE_MS + 60_000;
    let first = store
        .get_one(&partition, &audit_entry_key(1), now)
        .await
        .expect("read")
        .expect("entry 1");
    let mut altered: AuditEntry = serde_json::from_slice(&first.value).expect("an entry");
    altered.principal = "mallory".into();
    let tamper = Write::put(
        audit_entry_key(1),
        Condition::Version(first.version),
        serde_json::to_vec(&altered).unwrap(),
        None,
    );
    store
        .commit(&partition, vec![tamper], now)
        .await
        .expect("tamper");
    let broken = engine.verify_audit(&auditor, None).await.expect("verify");
    assert!(!broken.intact, "{broken:?}");
    assert_eq!(broken.first_broken, Some(1));
    assert_eq!(broken.thread_id.as_deref(), Some(thread_id));
}
