//! Who may do what: tenant isolation, thread ownership, four-eyes approvals and the
//! audit of who answered.

mod support;

use handoff_core::codes::ErrorCode;
use handoff_core::{CoreError, ForkRequest, Principal, RunOptions};
use support::*;

fn as_(principal: &Principal) -> RunOptions {
    RunOptions {
        principal: principal.clone(),
        ..RunOptions::default()
    }
}

fn alice() -> Principal {
    Principal::new("acme", "alice")
}

fn bob() -> Principal {
    Principal::new("acme", "bob")
}

fn approver() -> Principal {
    Principal::new("acme", "carol").with_roles(["approver"])
}

async fn reject_as(
    h: &Harness,
    input: &agui_protocol::RunAgentInput,
    who: &Principal,
) -> CoreError {
    match h.engine.start(input.clone(), as_(who)).await {
        Ok(_) => panic!("run {} by {} was accepted", input.run_id, who.subject),
        Err(e) => e,
    }
}

#[tokio::test]
async fn the_same_thread_id_in_two_tenants_is_two_threads() {
    let probe = Probe::new();
    let h = Harness::new(RefundAgent::new(probe.clone()));
    let other_tenant = Principal::new("globex", "alice");
    let first = h
        .run_with(&user_input("t", "r1", "refund"), as_(&alice()))
        .await;
    assert_eq!(interrupts(&first).len(), 1);
    // The other tenant starts its own thread "t": no pending interrupt is in its way.
    let second = h
        .run_with(&user_input("t", "r2", "refund"), as_(&other_tenant))
        .await;
    assert_eq!(interrupts(&second).len(), 1, "{}", dump(&second));

    let mine = h.engine.thread(&alice(), "t").await.unwrap().unwrap();
    let theirs = h.engine.thread(&other_tenant, "t").await.unwrap().unwrap();
    assert_eq!(mine.last_run.unwrap().run_id.as_str(), "r1");
    assert_eq!(theirs.last_run.unwrap().run_id.as_str(), "r2");
    assert_eq!(mine.owner.as_deref(), Some("alice"));
    // The default tenant has no thread "t" at all.
    assert!(
        h.engine
            .thread(&Principal::anonymous(), "t")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn another_principal_cannot_read_replay_run_or_answer_and_changes_nothing() {
    let probe = Probe::new();
    let h = Harness::new(RefundAgent::new(probe.clone()));
    let events = h
        .run_with(&user_input("t", "r1", "refund"), as_(&alice()))
        .await;
    let interrupt = interrupts(&events).remove(0);
    let before = h.engine.thread(&alice(), "t").await.unwrap().unwrap();

    let read = h.engine.thread(&bob(), "t").await.unwrap_err();
    assert_eq!(read, CoreError::ThreadNotFound);
    let replay = h.engine.run_events(&bob(), "t", "r1").await.unwrap_err();
    assert_eq!(replay, CoreError::ThreadNotFound);
    // A byte-identical retry of alice's request is not a way in either.
    let retry = reject_as(&h, &user_input("t", "r1", "refund"), &bob()).await;
    assert_eq!(retry, CoreError::ThreadNotFound);
    let run = reject_as(&h, &user_input("t", "r9", "hi"), &bob()).await;
    assert_eq!(run, CoreError::ThreadNotFound);
    let answer = reject_as(
        &h,
        &resume_input("t", "r2", vec![approve(&interrupt)]),
        &bob(),
    )
    .await;
    assert_eq!(answer, CoreError::ThreadNotFound);
    assert_eq!(answer.http_status(), 404);

    assert_eq!(probe.calls(), 0);
    assert_eq!(
        h.engine.thread(&alice(), "t").await.unwrap().unwrap(),
        before
    );
    // The owner still can.
    let done = h
        .run_with(
            &resume_input("t", "r2", vec![approve(&interrupt)]),
            as_(&alice()),
        )
        .await;
    assert_eq!(probe.calls(), 1, "{}", dump(&done));
}

#[tokio::test]
async fn four_eyes_the_owner_cannot_approve_their_own_request_an_approver_can() {
    let probe = Probe::new();
    let h = Harness::new(RefundAgent::new(probe.clone()).four_eyes());
    let events = h
        .run_with(&user_input("t", "r1", "refund"), as_(&alice()))
        .await;
    let interrupt = interrupts(&events).remove(0);

    let own = reject_as(
        &h,
        &resume_input("t", "r2", vec![approve(&interrupt)]),
        &alice(),
    )
    .await;
    assert!(matches!(own, CoreError::Forbidden(_)), "{own:?}");
    assert_eq!((own.code().name, own.http_status()), ("FORBIDDEN", 403));
    // A colleague without the role may not even see the thread.
    let colleague = reject_as(
        &h,
        &resume_input("t", "r3", vec![approve(&interrupt)]),
        &bob(),
    )
    .await;
    assert_eq!(colleague, CoreError::ThreadNotFound);
    assert_eq!(probe.calls(), 0);
    assert_eq!(
        h.engine
            .thread(&alice(), "t")
            .await
            .unwrap()
            .unwrap()
            .pending_interrupts
            .len(),
        1
    );

    // The approver sees what they approve, then approves it.
    let view = h.engine.thread(&approver(), "t").await.unwrap().unwrap();
    assert_eq!(view.pending_interrupts, vec![interrupt.clone()]);
    let resume = resume_input("t", "r4", vec![approve(&interrupt)]);
    let approved = h.run_with(&resume, as_(&approver())).await;
    assert_eq!(probe.calls(), 1, "{}", dump(&approved));

    // The audit names the approver, for the owner to read.
    let audit = h
        .engine
        .thread(&alice(), "t")
        .await
        .unwrap()
        .unwrap()
        .answers;
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].interrupt_id, interrupt.id.to_string());
    assert_eq!(audit[0].by, "carol");
    assert_eq!(audit[0].approved, Some(true));
    assert_eq!(audit[0].run_id.as_str(), "r4");

    // The approver's retry is replayed although nothing is pending any more.
    let again = h
        .run_with(
            &resume_input("t", "r5", vec![approve(&interrupt)]),
            as_(&approver()),
        )
        .await;
    assert_eq!(probe.calls(), 1);
    assert_eq!(text(&again), text(&approved));
    // The approver's access ended with the interrupt.
    assert_eq!(
        h.engine.thread(&approver(), "t").await.unwrap_err(),
        CoreError::ThreadNotFound
    );
}

/// Before, an approver (who may read the thread while its interrupt is open) could fork
/// it and keep the copy, the owner's whole history, after answering.
#[tokio::test]
async fn an_approver_may_not_fork_the_thread_they_approve_on() {
    let h = Harness::new(RefundAgent::new(Probe::new()).four_eyes());
    let events = h
        .run_with(&user_input("t", "r1", "refund"), as_(&alice()))
        .await;
    assert_eq!(interrupts(&events).len(), 1);
    assert!(h.engine.thread(&approver(), "t").await.unwrap().is_some());
    let request = ForkRequest {
        thread_id: Some("copy".into()),
        ..ForkRequest::default()
    };

    let err = h
        .engine
        .fork_thread(&approver(), "t", &request)
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::Forbidden(_)), "{err:?}");
    assert_eq!((err.code().name, err.http_status()), ("FORBIDDEN", 403));
    assert!(
        h.engine
            .thread(&approver(), "copy")
            .await
            .unwrap()
            .is_none(),
        "no copy was written"
    );
    // A colleague without the role still learns nothing; the owner may fork.
    let err = h.engine.fork_thread(&bob(), "t", &request).await;
    assert_eq!(err.unwrap_err(), CoreError::ThreadNotFound);
    let id = h.engine.fork_thread(&alice(), "t", &request).await.unwrap();
    assert_eq!(id, "copy");
}

#[tokio::test]
async fn four_eyes_the_owner_may_still_withdraw_the_request() {
    let probe = Probe::new();
    let h = Harness::new(RefundAgent::new(probe.clone()).four_eyes());
    let events = h
        .run_with(&user_input("t", "r1", "refund"), as_(&alice()))
        .await;
    let interrupt = interrupts(&events).remove(0);
    let cancelled = h
        .run_with(
            &resume_input("t", "r2", vec![cancel(&interrupt)]),
            as_(&alice()),
        )
        .await;
    assert_eq!(probe.calls(), 0);
    assert!(contains_run_finished(&cancelled), "{}", dump(&cancelled));
    let audit = h
        .engine
        .thread(&alice(), "t")
        .await
        .unwrap()
        .unwrap()
        .answers;
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].by, "alice");
}

#[tokio::test]
async fn effects_of_two_tenants_never_share_an_idempotency_key() {
    let probe = Probe::new();
    let h = Harness::new(RefundAgent::new(probe.clone()));
    for tenant in ["default", "acme"] {
        let who = Principal::new(tenant, "alice");
        let events = h
            .run_with(&user_input("t", "r1", "refund"), as_(&who))
            .await;
        let interrupt = interrupts(&events).remove(0);
        h.run_with(
            &resume_input("t", "r2", vec![approve(&interrupt)]),
            as_(&who),
        )
        .await;
    }
    let keys = probe.keys();
    assert_eq!(keys.len(), 2);
    assert_ne!(keys[0], keys[1]);
    assert!(keys[0].starts_with("t/"), "{keys:?}");
    assert!(keys[1].starts_with("acme:t/"), "{keys:?}");
}

/// Before, the default tenant's thread `acme/t` and tenant acme's thread `t` handed the
/// payment API the same key for the same effect.
#[tokio::test]
async fn a_thread_id_cannot_borrow_another_tenants_idempotency_key() {
    let probe = Probe::new();
    let h = Harness::new(RefundAgent::new(probe.clone()));
    for (tenant, thread) in [("default", "acme/t"), ("acme", "t")] {
        let who = Principal::new(tenant, "alice");
        let events = h
            .run_with(&user_input(thread, "r1", "refund"), as_(&who))
            .await;
        let interrupt = interrupts(&events).remove(0);
        h.run_with(
            &resume_input(thread, "r2", vec![approve(&interrupt)]),
            as_(&who),
        )
        .await;
    }
    let keys = probe.keys();
    assert_eq!(keys.len(), 2);
    assert_ne!(keys[0], keys[1], "{keys:?}");
}

/// Before, a reused runId was answered 409 before the owner check: a colleague learned
/// that the thread and the run exist.
#[tokio::test]
async fn a_reused_run_id_on_a_hidden_thread_is_not_found() {
    let h = Harness::new(RefundAgent::new(Probe::new()));
    h.run_with(&user_input("t", "r1", "refund"), as_(&alice()))
        .await;
    let probe = user_input("t", "r1", "something else");
    let err = reject_as(&h, &probe, &bob()).await;
    assert_eq!(
        (err.code().name, err.http_status()),
        ("THREAD_NOT_FOUND", 404)
    );
    let err = reject_as(&h, &probe, &alice()).await;
    assert_eq!(
        err.code().name,
        "RUN_ID_CONFLICT",
        "the owner still learns why"
    );
}

#[tokio::test]
async fn ids_with_control_characters_are_refused_before_anything() {
    let h = Harness::new(RefundAgent::new(Probe::new()));
    let mut parent = user_input("t", "r1", "hi");
    parent.parent_run_id = Some("p\u{1f}x".to_owned().into());
    for input in [
        user_input("t", "r\u{1f}1", "hi"),
        user_input("t", "r\n1", "hi"),
        parent,
    ] {
        let err = reject_as(&h, &input, &alice()).await;
        assert_eq!(
            (err.code().name, err.http_status()),
            ("INVALID_INPUT", 400),
            "{err}"
        );
    }
    let err = h.engine.stop(&alice(), "t", "r\u{1f}1").await.unwrap_err();
    assert_eq!(err.code().name, "INVALID_INPUT");
    assert!(
        h.engine.thread(&alice(), "t").await.unwrap().is_none(),
        "nothing written"
    );
}

#[tokio::test]
async fn a_thread_id_with_control_characters_is_refused_before_anything() {
    let h = Harness::new(RefundAgent::new(Probe::new()));
    let err = reject_as(
        &h,
        &user_input("acme\u{1f}t", "r1", "hi"),
        &Principal::anonymous(),
    )
    .await;
    assert_eq!(err.code().name, "INVALID_INPUT");
}
