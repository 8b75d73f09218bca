//! The TCK's fixture agent (`handoff_tests::tck_agent`), run through the engine: each
//! scenario's events are what the A2A server's mapping needs, and its custom values read as
//! the A2A types the server parses them into.

use std::sync::{Arc, Mutex};

use agui_protocol::{Event, Message, ResumeEntry, RunAgentInput, RunFinishedOutcome};
use futures::StreamExt;
use futures::future::BoxFuture;
use handoff_core::runtime::{ManualClock, SequentialIds, Sleep};
use handoff_core::{Engine, RunOptions, Runtime, store::memory::MemoryStore};
use handoff_tests::tck_agent::{ARTIFACT_EVENT, LONG_RUN_MS, MESSAGE_EVENT, Scenario, TckAgent};
use serde_json::{Value, json};

/// Records what the agent sleeps, and returns at once.
#[derive(Clone, Default)]
struct RecordedSleep(Arc<Mutex<Vec<u64>>>);

impl Sleep for RecordedSleep {
    fn sleep(&self, millis: u64) -> BoxFuture<'static, ()> {
        self.0.lock().expect("sleep log").push(millis);
        Box::pin(async {})
    }
}

/// The agent on an engine of its own, and what it sleeps.
fn engine() -> (Engine, RecordedSleep) {
    let sleep = RecordedSleep::default();
    let runtime = Runtime::new(
        ManualClock::new(1_795_000_000_000),
        SequentialIds::new("t"),
        sleep.clone(),
    );
    (
        Engine::new(TckAgent, Arc::new(MemoryStore::new()), runtime),
        sleep,
    )
}

fn events(engine: &Engine, input: RunAgentInput) -> Vec<Event> {
    futures::executor::block_on(async {
        let stream = engine
            .start(input, RunOptions::default())
            .await
            .expect("the run starts");
        stream.collect::<Vec<_>>().await
    })
}

/// The events of one run on `messages`, and the sleeps.
fn run(messages: Vec<Message>) -> (Vec<Event>, Vec<u64>) {
    let (engine, sleep) = engine();
    let events = events(&engine, RunAgentInput::new("thread", "run", messages));
    let slept = sleep.0.lock().expect("sleep log").clone();
    (events, slept)
}

fn run_one(message_id: &str) -> Vec<Event> {
    run(vec![Message::user(message_id, "TCK message")]).0
}

/// The texts the run streamed, delta by delta.
fn deltas(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TextMessageContent(c) => Some(c.delta.clone()),
            _ => None,
        })
        .collect()
}

fn customs(events: &[Event], name: &str) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Custom(c) if c.name == name => Some(c.value.clone()),
            _ => None,
        })
        .collect()
}

/// `RUN_FINISHED`'s outcome: `None` without one, `Some(None)` for a finish without outcome.
fn outcome(events: &[Event]) -> Option<Option<RunFinishedOutcome>> {
    events.iter().find_map(|e| match e {
        Event::RunFinished(f) => Some(f.outcome.clone()),
        _ => None,
    })
}

fn succeeded(events: &[Event]) -> bool {
    matches!(
        outcome(events),
        Some(None | Some(RunFinishedOutcome::Success { .. }))
    )
}

/// The one artifact a scenario sends as `a2a.artifact`, read as the server reads it and
/// written back as it answers (ProtoJSON).
fn one_artifact(events: &[Event]) -> Value {
    let values = customs(events, ARTIFACT_EVENT);
    assert_eq!(values.len(), 1, "one artifact: {values:?}");
    let artifact: a2a_types::Artifact =
        serde_json::from_value(values[0].clone()).expect("an A2A artifact");
    assert!(!artifact.artifact_id.is_empty());
    serde_json::to_value(&artifact).expect("serializes")
}

#[test]
fn prefixes_choose_the_scenarios_longest_first() {
    let cases = [
        ("tck-complete-task-abc", Scenario::Complete),
        ("tck-artifact-file-url-abc", Scenario::FileUrlArtifact),
        ("tck-artifact-file-abc", Scenario::FileArtifact),
        ("tck-stream-artifact-file-abc", Scenario::FileArtifact),
        ("tck-stream-artifact-chunked-abc", Scenario::ChunkedArtifact),
        ("tck-stream-002-abc", Scenario::CompleteSilently),
        ("test-resubscribe-message-id-abc", Scenario::LongRunning),
        ("tck-dm-test-001-abc", Scenario::Complete),
        ("", Scenario::Complete),
    ];
    for (id, scenario) in cases {
        assert_eq!(Scenario::for_message_id(id), scenario, "{id}");
    }
}

#[test]
fn text_scenarios_say_their_text_and_complete() {
    let cases = [
        ("tck-complete-task-1", "Hello from TCK"),
        ("tck-artifact-text-1", "Generated text content"),
        ("tck-stream-001-1", "Stream hello from TCK"),
        ("tck-stream-ordering-001-1", "Ordered output"),
        (
            "tck-terminal-1",
            "Unhandled messageId prefix: tck-terminal-1",
        ),
    ];
    for (id, text) in cases {
        let events = run_one(id);
        assert_eq!(deltas(&events), [text], "{id}");
        assert!(succeeded(&events), "{id}: {:?}", outcome(&events));
    }
    let silent = run_one("tck-stream-002-1");
    assert!(deltas(&silent).is_empty() && succeeded(&silent));
}

#[test]
fn file_and_data_artifacts_are_a2a_artifacts() {
    let file = one_artifact(&run_one("tck-artifact-file-1"));
    assert_eq!(
        file["parts"],
        json!([{"raw": "dGNr", "filename": "output.txt", "mediaType": "text/plain"}])
    );
    let url = one_artifact(&run_one("tck-artifact-file-url-1"));
    assert_eq!(
        url["parts"],
        json!([{"url": "https://example.com/output.txt", "filename": "output.txt", "mediaType": "text/plain"}])
    );
    let data = one_artifact(&run_one("tck-artifact-data-1"));
    assert_eq!(
        data["parts"],
        json!([{"data": {"key": "value", "count": 42}}])
    );
    let streamed = run_one("tck-stream-artifact-file-1");
    assert_eq!(
        one_artifact(&streamed)["parts"][0]["filename"],
        "output.txt"
    );
    assert!(deltas(&streamed).is_empty() && succeeded(&streamed));
}

#[test]
fn message_response_is_an_a2a_agent_message() {
    let events = run_one("tck-message-response-1");
    let values = customs(&events, MESSAGE_EVENT);
    assert_eq!(values.len(), 1);
    let message: a2a_types::Message =
        serde_json::from_value(values[0].clone()).expect("an A2A message");
    assert_eq!(message.role, a2a_types::Role::Agent);
    let wire = serde_json::to_value(&message).expect("serializes");
    assert_eq!(wire["parts"], json!([{"text": "Direct message response"}]));
    assert!(deltas(&events).is_empty() && succeeded(&events));
}

#[test]
fn input_required_is_a_text_only_interrupt() {
    let events = run_one("tck-input-required-1");
    let Some(Some(RunFinishedOutcome::Interrupt { interrupts })) = outcome(&events) else {
        panic!("an interrupt: {:?}", outcome(&events));
    };
    assert_eq!(interrupts.len(), 1);
    assert!(interrupts[0].response_schema.is_none() && interrupts[0].message.is_some());
}

#[test]
fn an_answer_to_input_required_completes() {
    let (engine, _) = engine();
    let ask = vec![Message::user("tck-input-required-1", "ask")];
    let asked = events(&engine, RunAgentInput::new("thread", "r1", ask));
    let Some(Some(RunFinishedOutcome::Interrupt { interrupts })) = outcome(&asked) else {
        panic!("an interrupt: {:?}", outcome(&asked));
    };
    let answer = ResumeEntry::resolved(interrupts[0].id.clone(), json!("Complete"));
    let resume = RunAgentInput::new("thread", "r2", Vec::new()).with_resume(vec![answer]);
    let answered = events(&engine, resume);
    assert_eq!(deltas(&answered), ["Thanks for the input: Complete"]);
    assert!(succeeded(&answered), "{:?}", outcome(&answered));
}

#[test]
fn reject_ends_the_run_with_code_rejected() {
    let events = run_one("tck-reject-task-1");
    let error = events.iter().find_map(|e| match e {
        Event::RunError(e) => Some(e.clone()),
        _ => None,
    });
    let error = error.expect("a RUN_ERROR");
    assert_eq!(error.code.as_deref(), Some("REJECTED"));
    assert!(outcome(&events).is_none());
}

#[test]
fn chunked_artifact_streams_one_message_in_two_deltas() {
    let events = run_one("tck-stream-artifact-chunked-1");
    assert_eq!(deltas(&events), ["chunk-1 ", "chunk-2"]);
    let starts = events
        .iter()
        .filter(|e| matches!(e, Event::TextMessageStart(_)))
        .count();
    assert_eq!(starts, 1);
    assert!(succeeded(&events));
}

#[test]
fn the_long_run_waits_twice_the_tck_streaming_timeout() {
    let (events, slept) = run(vec![Message::user("test-resubscribe-message-id-1", "wait")]);
    assert_eq!(slept, [LONG_RUN_MS]);
    assert!(succeeded(&events));
}

#[test]
fn the_last_user_message_chooses() {
    // A follow-up on a task: history first, the new message last.
    let history = vec![
        Message::user("tck-input-required-1", "first"),
        Message::user("tck-complete-task-2", "then"),
    ];
    let (events, _) = run(history);
    assert_eq!(deltas(&events), ["Hello from TCK"]);
}
