//! The mapping's rules, one by one (the routes are tested end to end in `tests/` and by the
//! official clients in `tests/node/a2a-*.test.mjs`).

use a2a_types::{Message, Part, Role, TaskState};
use agui_protocol::event::{
    RunError, RunFinished, TextMessageContent, TextMessageEnd, TextMessageStart,
};
use agui_protocol::{Event, Interrupt, ResumeStatus, RunFinishedOutcome};
use serde_json::json;

use super::fold::Folded;
use super::input::answers;

fn message(parts: Vec<Part>) -> Message {
    Message::new("m1", Role::User, parts)
}

fn question(id: &str, schema: bool) -> Interrupt {
    let interrupt = Interrupt::new(id, "tool_call").with_message("Refund?");
    if schema {
        interrupt.with_response_schema(json!({"type": "object"}))
    } else {
        interrupt
    }
}

#[test]
fn an_answer_names_its_interrupt_or_is_the_only_one_open() {
    let named = message(vec![Part::data(
        json!({"interruptId": "i2", "payload": {"approved": true}}),
    )]);
    let open = [question("i1", true), question("i2", true)];
    let entries = answers(&named, &open).unwrap();
    assert_eq!(
        (entries[0].interrupt_id.as_str(), entries[0].payload.clone()),
        ("i2", Some(json!({"approved": true})))
    );

    let bare = message(vec![Part::data(json!({"approved": true}))]);
    assert!(
        answers(&bare, &open).is_err(),
        "two open: each answer must name its interrupt"
    );
    let entries = answers(&bare, &open[..1]).unwrap();
    assert_eq!(entries[0].interrupt_id.as_str(), "i1");

    let cancel = message(vec![Part::data(
        json!({"interruptId": "i1", "cancelled": true}),
    )]);
    assert_eq!(
        answers(&cancel, &open).unwrap()[0].status,
        ResumeStatus::Cancelled
    );
    let no_payload = message(vec![Part::data(json!({"interruptId": "i1"}))]);
    assert!(answers(&no_payload, &open).is_err());
}

#[test]
fn text_answers_only_an_interrupt_without_a_schema() {
    let text = message(vec![Part::text("yes, go ahead")]);
    assert!(answers(&text, &[question("i1", true)]).is_err());
    let entries = answers(&text, &[question("i1", false)]).unwrap();
    assert_eq!(entries[0].payload, Some(json!("yes, go ahead")));
}

#[test]
fn runs_fold_into_task_states_and_artifacts() {
    let mut folded = Folded::default();
    for event in [
        Event::from(TextMessageStart::new("msg-1")),
        Event::from(TextMessageContent::new("msg-1", "Refunded ")),
        Event::from(TextMessageContent::new("msg-1", "128.00 USD.")),
        Event::from(TextMessageEnd::new("msg-1")),
    ] {
        folded.push(&event);
    }
    assert_eq!(
        folded.task_state(),
        TaskState::Working,
        "no terminal event yet"
    );
    assert_eq!(
        folded.artifacts[0].parts[0].as_text(),
        Some("Refunded 128.00 USD.")
    );

    let mut finished = RunFinished::new("t".to_owned(), "r".to_owned());
    finished.outcome = Some(RunFinishedOutcome::Interrupt {
        interrupts: vec![question("i1", true)],
    });
    folded.push(&Event::from(finished));
    assert_eq!(folded.task_state(), TaskState::InputRequired);
    assert_eq!(
        folded.status_parts[1].content,
        a2a_types::PartContent::Data(json!({
            "interruptId": "i1", "reason": "tool_call", "message": "Refund?", "responseSchema": {"type": "object"}
        }))
    );

    let mut rejected = Folded::default();
    let mut error = RunError::new("not for us");
    error.code = Some("REJECTED".into());
    rejected.push(&Event::from(error));
    assert_eq!(rejected.task_state(), TaskState::Rejected);
    let mut failed = Folded::default();
    failed.push(&Event::from(RunError::new("model down")));
    assert_eq!(failed.task_state(), TaskState::Failed);
}
