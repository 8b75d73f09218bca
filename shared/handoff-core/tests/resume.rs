//! Guarantee 3: the resume contract, checked before anything is written, plus
//! what a resumed run sees (decisions and the authoritative state).

mod support;

use agui_protocol::{EventType, Interrupt, ResumeEntry, RunFinishedOutcome};
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::records::{RunStatus, ThreadStatus};
use handoff_core::{CoreError, ThreadView};
use serde_json::{Value, json};
use support::*;

/// Runs `r1` on `thread` and returns the interrupts it raised.
async fn interrupted(h: &Harness, thread: &str) -> Vec<Interrupt> {
    let events = h.run(&user_input(thread, "r1", "refund order 7")).await;
    interrupts(&events)
}

#[track_caller]
fn assert_rejected(err: &CoreError, code: &str, status: u16) {
    let got = (err.code().name, err.http_status());
    assert_eq!(got, (code, status), "{err}");
    assert!(!err.retryable(), "{code} must not be retryable");
}

#[test]
fn an_approved_resume_runs_the_effect_once_and_finishes() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let raised = interrupted(&h, "t").await;
        let input = resume_input("t", "r2", vec![approve(&raised[0])]);
        let events = h.run(&input).await;

        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        let results = tool_results(&events);
        assert_eq!(results.len(), 1);
        assert_eq!(
            Some(&results[0].tool_call_id),
            raised[0].tool_call_id.as_ref()
        );
        let receipt: Value = serde_json::from_str(&results[0].content.text()).unwrap();
        assert_eq!(receipt, json!({ "refundId": "rf-1", "amount": 40 }));
        assert_eq!(probe.calls(), 1);
        let call = raised[0].tool_call_id.as_ref().unwrap();
        assert_eq!(probe.keys(), vec![format!("t/refund-{call}")]);

        let view = h.thread("t").await;
        assert_eq!(view.status, ThreadStatus::Idle);
        assert!(view.pending_interrupts.is_empty());
        assert_eq!(
            view.last_run.map(|r| (r.run_id.to_string(), r.status)),
            Some(("r2".to_owned(), RunStatus::Succeeded))
        );
    });
}

/// A first attempt writes its "started" record under `Absent` without reading the key first
/// (on DynamoDB a read is a round trip); the in-doubt and replay paths, which do read it,
/// are in `leases.rs`.
#[test]
fn a_first_effect_is_recorded_without_reading_its_record_first() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let raised = interrupted(&h, "t").await;
        let before = h.store.keys_read().len();
        let events = h
            .run(&resume_input("t", "r2", vec![approve(&raised[0])]))
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(probe.calls(), 1);
        let read: Vec<_> = h.store.keys_read().split_off(before);
        assert!(
            !read.iter().any(|key| key.starts_with("effect#")),
            "the resume read its effect record: {read:?}"
        );
        let call = raised[0].tool_call_id.as_ref().unwrap();
        let record = h.item("t", &format!("effect#refund-{call}")).await;
        assert!(
            record.is_some_and(|item| item.version == 2),
            "started, then done"
        );
    });
}

#[test]
fn a_resume_on_a_thread_that_does_not_exist_is_thread_not_found() {
    block_on(async {
        let h = Harness::new(RefundAgent::new(Probe::new()));
        let raised = interrupted(&h, "t").await;
        let before = h.thread("t").await;
        let err = h
            .reject(&resume_input("t-other", "r2", vec![approve(&raised[0])]))
            .await;
        // The same answer as for a thread the caller may not see: neither reveals anything.
        assert_rejected(&err, "THREAD_NOT_FOUND", 404);
        assert_eq!(h.thread("t").await, before);
        assert!(
            h.engine
                .thread(&handoff_core::Principal::anonymous(), "t-other")
                .await
                .unwrap()
                .is_none(),
            "a rejected request created a thread"
        );
    });
}

#[test]
fn an_unknown_interrupt_id_is_rejected() {
    block_on(async {
        let h = Harness::new(RefundAgent::new(Probe::new()));
        let raised = interrupted(&h, "t").await;
        let entries = vec![
            approve(&raised[0]),
            ResumeEntry::resolved("int-made-up", json!({ "approved": true })),
        ];
        let err = h.reject(&resume_input("t", "r2", entries)).await;
        assert_rejected(&err, "INTERRUPT_NOT_PENDING", 409);
        assert!(matches!(&err, CoreError::InterruptNotPending { id } if id == "int-made-up"));
    });
}

#[test]
fn partial_coverage_is_incomplete() {
    block_on(async {
        let h = Harness::new(RefundAgent::new(Probe::new()).with_interrupts(2));
        let raised = interrupted(&h, "t").await;
        let err = h
            .reject(&resume_input("t", "r2", vec![approve(&raised[0])]))
            .await;
        assert_rejected(&err, "RESUME_INCOMPLETE", 409);
        assert!(
            matches!(&err, CoreError::ResumeIncomplete { missing } if *missing == vec![raised[1].id.to_string()])
        );
    });
}

#[test]
fn a_new_message_without_resume_on_an_interrupted_thread_is_incomplete() {
    block_on(async {
        let h = Harness::new(RefundAgent::new(Probe::new()));
        let raised = interrupted(&h, "t").await;
        let err = h
            .reject(&user_input("t", "r2", "actually, never mind"))
            .await;
        assert_rejected(&err, "RESUME_INCOMPLETE", 409);
        assert!(
            matches!(&err, CoreError::ResumeIncomplete { missing } if *missing == vec![raised[0].id.to_string()])
        );
        // An empty resume array is no answer either.
        let err = h.reject(&resume_input("t", "r3", Vec::new())).await;
        assert_rejected(&err, "RESUME_INCOMPLETE", 409);
    });
}

#[test]
fn a_payload_violating_the_response_schema_is_rejected() {
    block_on(async {
        let h = Harness::new(RefundAgent::new(Probe::new()));
        let raised = interrupted(&h, "t").await;
        let id = raised[0].id.clone();
        let bad = [
            ResumeEntry::resolved(id.clone(), json!({ "approved": "yes" })),
            ResumeEntry::resolved(id.clone(), json!({ "editedArgs": { "amount": 1 } })),
            ResumeEntry::resolved(id.clone(), json!({ "approved": true, "editedArgs": 5 })),
            ResumeEntry {
                payload: None,
                ..ResumeEntry::resolved(id.clone(), Value::Null)
            },
        ];
        for (i, entry) in bad.into_iter().enumerate() {
            let err = h
                .reject(&resume_input("t", &format!("bad-{i}"), vec![entry]))
                .await;
            assert_rejected(&err, "RESUME_PAYLOAD_INVALID", 422);
        }
        // A cancellation needs no payload.
        let events = h
            .run(&resume_input("t", "r2", vec![cancel(&raised[0])]))
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
    });
}

#[test]
fn an_expired_interrupt_can_only_be_cancelled() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()).expiring_in(60_000));
        let raised = interrupted(&h, "t").await;
        assert!(raised[0].expires_at.is_some());
        h.advance(60_000); // exactly at expiresAt: expired

        let err = h
            .reject(&resume_input("t", "r2", vec![approve(&raised[0])]))
            .await;
        assert_rejected(&err, "INTERRUPT_EXPIRED", 422);
        assert!(
            matches!(&err, CoreError::InterruptExpired { expires_at, .. } if Some(expires_at) == raised[0].expires_at.as_ref())
        );
        assert_eq!(h.thread("t").await.pending_interrupts, raised);

        let events = h
            .run(&resume_input("t", "r3", vec![cancel(&raised[0])]))
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(tool_results(&events)[0].content.text(), "cancelled");
        assert_eq!(probe.calls(), 0, "a cancelled action executed");
        assert!(probe.seen()[0].cancelled);
    });
}

#[test]
fn an_interrupt_answered_just_before_it_expires_is_accepted() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()).expiring_in(60_000));
        let raised = interrupted(&h, "t").await;
        h.advance(59_999);
        let events = h
            .run(&resume_input("t", "r2", vec![approve(&raised[0])]))
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert_eq!(probe.calls(), 1);
    });
}

#[test]
fn a_rejected_resume_changes_nothing_and_a_correct_one_still_works() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(
            RefundAgent::new(probe.clone())
                .with_interrupts(2)
                .expiring_in(60_000),
        );
        let raised = interrupted(&h, "t").await;
        let before: ThreadView = h.thread("t").await;
        let commits = h.store.commits();
        let runs = probe.runs.load(std::sync::atomic::Ordering::SeqCst);

        let attempts = vec![
            ("bad-1", vec![approve(&raised[0])]),
            (
                "bad-2",
                vec![
                    approve(&raised[0]),
                    approve(&raised[1]),
                    ResumeEntry::cancelled("int-zzz"),
                ],
            ),
            (
                "bad-3",
                vec![
                    approve(&raised[0]),
                    ResumeEntry::resolved(raised[1].id.clone(), json!({ "approved": 1 })),
                ],
            ),
            ("bad-4", Vec::new()),
        ];
        for (run, entries) in &attempts {
            let err = h.reject(&resume_input("t", run, entries.clone())).await;
            assert_ne!(err.code().name, "THREAD_BUSY", "{run}");
            assert_eq!(h.thread("t").await, before, "{run} changed the thread");
            assert!(
                h.run_record("t", run).await.is_none(),
                "{run} left a run record"
            );
        }
        h.advance(60_000);
        let err = h
            .reject(&resume_input(
                "t",
                "bad-5",
                vec![approve(&raised[0]), approve(&raised[1])],
            ))
            .await;
        assert_eq!(err.code().name, "INTERRUPT_EXPIRED");
        assert_eq!(h.thread("t").await, before);
        assert_eq!(
            h.store.commits(),
            commits,
            "a rejected request wrote to the store"
        );
        assert_eq!(
            probe.runs.load(std::sync::atomic::Ordering::SeqCst),
            runs,
            "a rejected request reached the agent"
        );

        // A correct answer afterwards works, even reusing a rejected runId.
        let input = resume_input("t", "bad-1", vec![cancel(&raised[0]), cancel(&raised[1])]);
        let events = h.run(&input).await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
        assert!(h.thread("t").await.pending_interrupts.is_empty());
    });
}

#[test]
fn a_second_different_answer_to_an_applied_interrupt_is_not_pending() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let raised = interrupted(&h, "t").await;
        h.run(&resume_input("t", "r2", vec![approve(&raised[0])]))
            .await;
        let err = h
            .reject(&resume_input("t", "r3", vec![deny(&raised[0])]))
            .await;
        assert_rejected(&err, "INTERRUPT_NOT_PENDING", 409);
        assert_eq!(probe.calls(), 1);
    });
}

#[test]
fn decisions_expose_approved_denied_edited_and_cancelled() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        type Answer = fn(&Interrupt) -> ResumeEntry;
        let cases: Vec<(&str, Answer)> = vec![
            ("approve", approve),
            ("deny", deny),
            ("edit", |i| {
                ResumeEntry::resolved(
                    i.id.clone(),
                    json!({ "approved": true, "editedArgs": { "amount": 5 } }),
                )
            }),
            ("cancel", cancel),
            ("edit-denied", |i| {
                ResumeEntry::resolved(
                    i.id.clone(),
                    json!({ "approved": false, "editedArgs": { "amount": 5 } }),
                )
            }),
        ];
        let mut results = Vec::new();
        for (thread, answer) in &cases {
            let raised = interrupted(&h, thread).await;
            let events = h
                .run(&resume_input(thread, "r2", vec![answer(&raised[0])]))
                .await;
            results.push(tool_results(&events)[0].content.text());
        }
        let seen: Vec<(bool, bool, bool, Option<Value>)> = probe
            .seen()
            .into_iter()
            .map(|s| (s.approved, s.denied, s.cancelled, s.edited_args))
            .collect();
        let edited = Some(json!({ "amount": 5 }));
        assert_eq!(
            seen,
            vec![
                (true, false, false, None),
                (false, true, false, None),
                (true, false, false, edited.clone()),
                (false, false, true, None),
                (false, true, false, edited),
            ]
        );
        // Only the two approvals executed; the edit replaced the amount.
        assert_eq!(probe.calls(), 2);
        let receipts: Vec<Value> = [&results[0], &results[2]]
            .iter()
            .map(|r| serde_json::from_str(r).unwrap())
            .collect();
        assert_eq!(receipts[0]["amount"], json!(40));
        assert_eq!(receipts[1]["amount"], json!(5));
        assert_eq!(
            (
                results[1].as_str(),
                results[3].as_str(),
                results[4].as_str()
            ),
            ("denied", "cancelled", "denied")
        );
    });
}

#[test]
fn decision_helpers_read_the_payload_as_documented() {
    use agui_protocol::ResumeStatus;
    use handoff_core::Decision;
    let decision = |status, payload: Option<Value>| Decision {
        interrupt: Interrupt::new("i", "confirmation"),
        status,
        payload,
        metadata: None,
        proposed_args: Some(json!({ "a": 0, "b": 2 })),
        approval: None,
    };
    let approved = decision(
        ResumeStatus::Resolved,
        Some(json!({ "approved": true, "editedArgs": { "a": 1 } })),
    );
    assert!(approved.approved() && !approved.denied() && !approved.is_cancelled());
    assert_eq!(approved.edited_args(), Some(&json!({ "a": 1 })));
    assert_eq!(
        approved.args(),
        Some(&json!({ "a": 1 })),
        "editedArgs replace"
    );
    let plain = decision(ResumeStatus::Resolved, Some(json!({ "approved": true })));
    assert_eq!(
        plain.args(),
        Some(&json!({ "a": 0, "b": 2 })),
        "else as proposed"
    );
    // Truthy is not true; editedArgs must be an object.
    let loose = decision(
        ResumeStatus::Resolved,
        Some(json!({ "approved": "true", "editedArgs": [1] })),
    );
    assert!(!loose.approved() && !loose.denied());
    assert_eq!(loose.edited_args(), None);
    // A cancelled entry is neither approved nor denied, whatever its payload says.
    let cancelled = decision(ResumeStatus::Cancelled, Some(json!({ "approved": true })));
    assert!(cancelled.is_cancelled() && !cancelled.approved() && !cancelled.denied());
    #[derive(serde::Deserialize, PartialEq, Debug)]
    struct Answer {
        approved: bool,
    }
    assert_eq!(
        approved.payload_as::<Answer>().unwrap(),
        Answer { approved: true }
    );
    assert!(
        decision(ResumeStatus::Cancelled, None)
            .payload_as::<Answer>()
            .is_err()
    );
}

#[test]
fn state_patches_are_authoritative_across_the_resume() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let raised = interrupted(&h, "t").await;
        assert_eq!(
            h.thread("t").await.state,
            json!({ "stage": "awaiting_approval" })
        );

        // The client's copy of the state is not trusted on a resume.
        let mut input = resume_input("t", "r2", vec![approve(&raised[0])]);
        input.state = Some(json!({ "stage": "forged", "admin": true }));
        let events = h.run(&input).await;

        assert_eq!(probe.states()[1], json!({ "stage": "awaiting_approval" }));
        assert!(position(&events, EventType::StateDelta).is_some());
        assert_eq!(h.thread("t").await.state, json!({ "stage": "done" }));
    });
}

#[test]
fn a_mixed_answer_to_several_interrupts_executes_only_the_approved_one() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()).with_interrupts(3));
        let raised = interrupted(&h, "t").await;
        // Answers may come in any order; the agent sees them in the order raised.
        let entries = vec![cancel(&raised[2]), deny(&raised[1]), approve(&raised[0])];
        let events = h.run(&resume_input("t", "r2", entries)).await;
        let results: Vec<String> = tool_results(&events)
            .iter()
            .map(|r| r.content.text())
            .collect();
        assert!(results[0].contains("rf-1"));
        assert_eq!(&results[1..], ["denied", "cancelled"]);
        assert_eq!(probe.calls(), 1);
        let order: Vec<String> = probe.seen().into_iter().map(|s| s.interrupt_id).collect();
        assert_eq!(
            order,
            raised.iter().map(|i| i.id.to_string()).collect::<Vec<_>>()
        );
    });
}

#[test]
fn a_resume_that_fails_after_its_effect_executed_consumes_the_answer() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let raised = interrupted(&h, "t").await;
        probe
            .fail_next_resume
            .store(true, std::sync::atomic::Ordering::SeqCst);

        let events = h
            .run(&resume_input("t", "r2", vec![approve(&raised[0])]))
            .await;
        assert_eq!(run_error(&events).code.as_deref(), Some("AGENT_ERROR"));
        assert!(events.iter().all(|e| !e.to_json().contains("hunter2")));
        assert_eq!(probe.calls(), 1);
        // The money moved: the question is answered and history says what executed.
        let view = h.thread("t").await;
        assert_eq!(view.status, ThreadStatus::Idle);
        assert!(view.pending_interrupts.is_empty());
        assert_eq!(view.last_run.map(|r| r.status), Some(RunStatus::Errored));
        assert!(
            view.messages
                .iter()
                .any(|m| matches!(m, agui_protocol::Message::Tool(t) if t.content.text().contains("rf-1"))),
            "the executed refund is not in the history"
        );

        // A duplicate of the answer replays the failure; nothing executes again…
        let replay = h
            .run(&resume_input("t", "r3", vec![approve(&raised[0])]))
            .await;
        assert_eq!(run_error(&replay).code.as_deref(), Some("AGENT_ERROR"));
        assert_eq!(probe.calls(), 1);
        // …and a later "deny" cannot reach the decline path.
        let err = h
            .reject(&resume_input("t", "r4", vec![deny(&raised[0])]))
            .await;
        assert_rejected(&err, "INTERRUPT_NOT_PENDING", 409);
    });
}

#[test]
fn a_resume_that_fails_before_any_effect_leaves_the_interrupt_answerable() {
    block_on(async {
        let h = Harness::new(Scripted(|ctx| {
            if ctx.is_resume() {
                return Err("downstream down".into());
            }
            let call = ctx.tool_call("refund", &json!({ "amount": 1 }));
            Ok(handoff_core::Finish::interrupt(
                Interrupt::new(format!("int-{call}"), "tool_call").with_tool_call(call),
            ))
        }));
        let raised = interrupted(&h, "t").await;
        let before = h.thread("t").await;
        let events = h
            .run(&resume_input("t", "r2", vec![approve(&raised[0])]))
            .await;
        assert_eq!(run_error(&events).code.as_deref(), Some("AGENT_ERROR"));
        let view = h.thread("t").await;
        assert_eq!(view.pending_interrupts, before.pending_interrupts);
        assert_eq!(view.messages, before.messages);
        assert_eq!(view.status, ThreadStatus::Interrupted);
        // Nothing executed, so any answer may follow, a denial included.
        h.run(&resume_input("t", "r3", vec![deny(&raised[0])]))
            .await;
    });
}

#[test]
fn resume_answers_are_kept_apart_per_thread() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let a = interrupted(&h, "a").await;
        let b = interrupted(&h, "b").await;
        // Sequential ids make the two interrupts differ; the effect keys are per thread anyway.
        h.run(&resume_input("a", "r2", vec![approve(&a[0])])).await;
        h.run(&resume_input("b", "r2", vec![approve(&b[0])])).await;
        assert_eq!(probe.calls(), 2);
        let keys = probe.keys();
        assert!(
            keys[0].starts_with("a/") && keys[1].starts_with("b/"),
            "{keys:?}"
        );
    });
}

#[test]
fn answering_one_interrupt_twice_in_one_resume_is_invalid_input() {
    block_on(async {
        let probe = Probe::new();
        let h = Harness::new(RefundAgent::new(probe.clone()));
        let raised = interrupted(&h, "t").await;
        let before = h.thread("t").await;
        let err = h
            .reject(&resume_input(
                "t",
                "r2",
                vec![approve(&raised[0]), cancel(&raised[0])],
            ))
            .await;
        assert_eq!(
            (err.code().name, err.http_status(), err.retryable()),
            ("INVALID_INPUT", 400, false),
            "{err}"
        );
        assert_eq!(h.thread("t").await, before);
        assert_eq!(probe.calls(), 0);
        // One answer per interrupt is accepted.
        let events = h
            .run(&resume_input("t", "r3", vec![cancel(&raised[0])]))
            .await;
        assert_eq!(outcome(&events), &RunFinishedOutcome::success());
    });
}
