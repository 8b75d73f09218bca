//! The agent `make tck` serves to the A2A TCK (`tck-agent`): it acts out the TCK's scenarios
//! (`scenarios/*.feature` of the snapshot in `../shared/tools/a2a-tck`), choosing the
//! behaviour by the prefix of the A2A `messageId`.
//!
//! The A2A server maps an A2A message to an AG-UI user message whose `id` is the A2A
//! `messageId`, and maps what the agent does back to A2A:
//!
//! | the agent | A2A |
//! |---|---|
//! | assistant text ([`RunContext::say`]) | an artifact with one text part |
//! | `CUSTOM a2a.artifact` (an A2A `Artifact`, ProtoJSON) | that artifact |
//! | `CUSTOM a2a.message` (an A2A `Message`, ProtoJSON) | the reply is that message, not a task |
//! | a text-only interrupt | `TASK_STATE_INPUT_REQUIRED` |
//! | a run error with code `REJECTED` | `TASK_STATE_REJECTED` |
//! | a normal finish | `TASK_STATE_COMPLETED` |
//!
//! Status updates (`working`) come from the server, not the agent.
//!
//! A message sent to a task waiting for input is a resume: the agent sees the answer (the
//! message's text) but not the new `messageId`, so every answer completes the task.

use agui_protocol::{Interrupt, Message};
use handoff_core::{Agent, AgentError, Finish, RunContext, codes};
use serde_json::{Value, json};

/// The name the agent gives itself (and its card).
pub const NAME: &str = "handoff-tck-agent";

/// The custom event whose value is an A2A `Artifact`.
pub const ARTIFACT_EVENT: &str = "a2a.artifact";
/// The custom event whose value is an A2A `Message` answering instead of a task.
pub const MESSAGE_EVENT: &str = "a2a.message";

/// How long the resubscription scenario keeps its task working: twice the TCK's streaming
/// timeout (2 s), as its scenario says.
pub const LONG_RUN_MS: u64 = 4_000;

/// What a scenario does, chosen by the `messageId`'s prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// `tck-complete-task` and any unknown prefix: say something, complete.
    Complete,
    /// `tck-artifact-text`, `tck-stream-*` with a text artifact: one text artifact.
    TextArtifact(&'static str),
    /// `tck-artifact-file`, `tck-stream-artifact-file`: a file part with bytes.
    FileArtifact,
    /// `tck-artifact-file-url`: a file part by URL.
    FileUrlArtifact,
    /// `tck-artifact-data`: a data part.
    DataArtifact,
    /// `tck-stream-artifact-chunked`: one text artifact streamed in two chunks.
    ChunkedArtifact,
    /// `tck-message-response`: a message instead of a task.
    MessageResponse,
    /// `tck-input-required`: the task waits for the user.
    InputRequired,
    /// `tck-reject-task`: the agent rejects the task.
    Reject,
    /// `tck-stream-002`: complete without output.
    CompleteSilently,
    /// `test-resubscribe-message-id`: stay working for [`LONG_RUN_MS`], then complete.
    LongRunning,
}

/// Longest prefix first where one prefix begins another (`tck-artifact-file-url` before
/// `tck-artifact-file`, `tck-stream-artifact-file` after `-chunked`).
const PREFIXES: &[(&str, Scenario)] = &[
    ("tck-complete-task", Scenario::Complete),
    (
        "tck-artifact-text",
        Scenario::TextArtifact("Generated text content"),
    ),
    ("tck-artifact-file-url", Scenario::FileUrlArtifact),
    ("tck-artifact-file", Scenario::FileArtifact),
    ("tck-artifact-data", Scenario::DataArtifact),
    ("tck-message-response", Scenario::MessageResponse),
    ("tck-input-required", Scenario::InputRequired),
    ("tck-reject-task", Scenario::Reject),
    (
        "tck-stream-001",
        Scenario::TextArtifact("Stream hello from TCK"),
    ),
    ("tck-stream-002", Scenario::CompleteSilently),
    (
        "tck-stream-003",
        Scenario::TextArtifact("Stream task lifecycle"),
    ),
    (
        "tck-stream-ordering-001",
        Scenario::TextArtifact("Ordered output"),
    ),
    (
        "tck-stream-artifact-text",
        Scenario::TextArtifact("Streamed text content"),
    ),
    ("tck-stream-artifact-chunked", Scenario::ChunkedArtifact),
    ("tck-stream-artifact-file", Scenario::FileArtifact),
    ("test-resubscribe-message-id", Scenario::LongRunning),
];

impl Scenario {
    /// The scenario a `messageId` asks for ([`Scenario::Complete`] when none matches).
    pub fn for_message_id(message_id: &str) -> Scenario {
        PREFIXES
            .iter()
            .find(|(prefix, _)| message_id.starts_with(prefix))
            .map_or(Scenario::Complete, |(_, scenario)| *scenario)
    }
}

/// The agent: see the [module docs](self).
#[derive(Debug, Clone, Copy, Default)]
pub struct TckAgent;

/// The id of the message this run answers: the last user message's (the A2A `messageId`).
pub fn incoming_message_id(ctx: &RunContext) -> Option<String> {
    ctx.messages().iter().rev().find_map(|m| match m {
        Message::User(user) => Some(user.id.as_str().to_owned()),
        _ => None,
    })
}

/// An A2A artifact (ProtoJSON) with one part.
fn artifact(ctx: &RunContext, name: &str, part: Value) -> Value {
    json!({ "artifactId": ctx.new_id("artifact"), "name": name, "parts": [part] })
}

#[async_trait::async_trait]
impl Agent for TckAgent {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Acts out the A2A TCK's scenarios, chosen by the messageId's prefix"
    }

    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        // A message on an input-required task arrives as the answer to its interrupt, and
        // the answering message's id does not reach the agent (the last user message is
        // still the one that asked): the scenario's default, complete.
        if let Some(answer) = ctx.decisions().first().cloned() {
            let said = match answer.payload.as_ref() {
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => "nothing".to_owned(),
            };
            ctx.say(&format!("Thanks for the input: {said}"));
            return Ok(Finish::done());
        }
        let message_id = incoming_message_id(ctx).unwrap_or_default();
        match Scenario::for_message_id(&message_id) {
            Scenario::Complete if message_id.starts_with("tck-complete-task") => {
                ctx.say("Hello from TCK");
            }
            Scenario::Complete => {
                ctx.say(&format!("Unhandled messageId prefix: {message_id}"));
            }
            Scenario::TextArtifact(text) => {
                ctx.say(text);
            }
            Scenario::FileArtifact => {
                // "tck" in base64: ProtoJSON writes `bytes` as base64.
                let part =
                    json!({ "raw": "dGNr", "filename": "output.txt", "mediaType": "text/plain" });
                let value = artifact(ctx, "output.txt", part);
                ctx.custom(ARTIFACT_EVENT, value);
            }
            Scenario::FileUrlArtifact => {
                let part = json!({ "url": "https://example.com/output.txt",
                    "filename": "output.txt", "mediaType": "text/plain" });
                let value = artifact(ctx, "output.txt", part);
                ctx.custom(ARTIFACT_EVENT, value);
            }
            Scenario::DataArtifact => {
                let part = json!({ "data": { "key": "value", "count": 42 } });
                let value = artifact(ctx, "data", part);
                ctx.custom(ARTIFACT_EVENT, value);
            }
            Scenario::ChunkedArtifact => {
                // One text message streamed as two deltas: the server's chunks.
                let id = ctx.text_start();
                ctx.text_delta(&id, "chunk-1 ");
                ctx.text_delta(&id, "chunk-2");
                ctx.text_end(&id);
            }
            Scenario::MessageResponse => {
                let message = json!({
                    "messageId": ctx.new_id("msg"),
                    "role": "ROLE_AGENT",
                    "parts": [{ "text": "Direct message response" }],
                });
                ctx.custom(MESSAGE_EVENT, message);
            }
            Scenario::InputRequired => {
                let ask = Interrupt::new(ctx.new_id("int"), "input_required")
                    .with_message("More input is needed to go on.");
                return Ok(Finish::interrupt(ask));
            }
            Scenario::Reject => {
                return Err(ctx.fail_with(
                    codes::REJECTED,
                    "rejected",
                    false,
                    "the TCK asked for a rejection",
                ));
            }
            Scenario::CompleteSilently => {}
            Scenario::LongRunning => {
                let wait = ctx.runtime().sleep.sleep(LONG_RUN_MS);
                wait.await;
            }
        }
        Ok(Finish::done())
    }
}
