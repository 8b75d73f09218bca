//! Stage 0, before anything is read: what one request asks, worked out once for every
//! attempt of its claim (the partition, the input's hash, the resume record's key), and
//! its ids checked.

use agui_protocol::{Message, ResumeEntry, RunAgentInput};

use super::super::digest::Chain;
use super::super::hash::{input_hash, resume_hash};
use super::super::{Inner, RunOptions};
use crate::access::Access;
use crate::error::CoreError;
use crate::principal::{Principal, check_id};
use crate::records::{resume_key, run_key};

/// One run request, as every stage of its claim sees it.
pub(crate) struct Request<'a> {
    pub(crate) input: &'a RunAgentInput,
    pub(crate) principal: &'a Principal,
    /// The agent the run is for (the options' choice, else the engine's agent).
    pub(crate) agent_id: &'a str,
    pub(crate) deadline_ms: Option<u64>,
    /// Sent while another run streamed (double-texting).
    pub(crate) after_running: bool,
    /// The thread's store partition.
    pub(crate) partition: String,
    /// Each message written and hashed once: the input's hash and the run's check for a
    /// resent history share this chain.
    pub(crate) chain: Chain,
    pub(crate) hash: String,
    /// The key of the resume record of this request's answers (`None`: no answers).
    pub(crate) resume: Option<String>,
    /// The key of this run's record.
    pub(crate) run_key: String,
}

impl<'a> Request<'a> {
    /// The request, or 400 `INVALID_INPUT` for an id that could split a key.
    pub(crate) fn new(
        inner: &'a Inner,
        input: &'a RunAgentInput,
        options: &'a RunOptions,
        after_running: bool,
    ) -> Result<Self, CoreError> {
        let principal = &options.principal;
        let partition = principal.partition(&input.thread_id)?;
        check_input_ids(input)?;
        let chain = Chain::of(&input.messages);
        let hash = input_hash(input, &chain);
        let entries = input.resume_entries();
        let resume = (!entries.is_empty()).then(|| resume_key(&resume_hash(&partition, entries)));
        Ok(Request {
            input,
            principal,
            agent_id: options.agent_id.as_deref().unwrap_or(inner.agent.name()),
            deadline_ms: options.deadline_ms,
            after_running,
            partition,
            chain,
            hash,
            resume,
            run_key: run_key(&input.run_id),
        })
    }

    /// The request's answers.
    pub(crate) fn entries(&self) -> &'a [ResumeEntry] {
        self.input.resume_entries()
    }

    /// Whether the first attempt may skip its read. A request whose history shows no run
    /// yet most likely starts a thread: its first attempt reads nothing and commits as if
    /// nothing were stored. Every such assumption is a condition of that commit (no head,
    /// no record of this run, no marker of leftovers), so if anything exists the commit is
    /// refused and the claim reads as usual.
    pub(crate) fn may_assume_new(&self, inner: &Inner) -> bool {
        self.entries().is_empty()
            && no_run_answered(&self.input.messages)
            && inner.authorize(self.principal, None, Access::Read).is_ok()
            && inner.authorize(self.principal, None, Access::Run).is_ok()
    }
}

/// Whether a history shows no run yet: it holds only what a person or the application
/// wrote (no assistant or tool message). With no answers in the request, that reads as a
/// thread's first run; a client that sends only its new message also reads so on later
/// turns, and its claims then pay one refused commit before their read.
fn no_run_answered(messages: &[Message]) -> bool {
    !messages.is_empty()
        && messages.iter().all(|m| {
            matches!(
                m,
                Message::User(_) | Message::System(_) | Message::Developer(_)
            )
        })
}

/// Every id of the request is free of control characters (keys are joined with them)
/// and of sane length: 400 `INVALID_INPUT` naming the field, before anything is read.
fn check_input_ids(input: &RunAgentInput) -> Result<(), CoreError> {
    check_id("runId", &input.run_id)?;
    if let Some(parent) = &input.parent_run_id {
        check_id("parentRunId", parent)?;
    }
    for entry in input.resume_entries() {
        check_id("resume[].interruptId", &entry.interrupt_id)?;
    }
    // History ids are the client's; only what could split a key is refused.
    // Printable ASCII (most ids) needs no decoding to be free of control characters.
    let has_control = |id: &str| {
        !id.bytes().all(|b| (b' '..=b'~').contains(&b)) && id.chars().any(char::is_control)
    };
    let control = |name: &str, id: &str| match has_control(id) {
        true => Err(CoreError::InvalidInput(format!(
            "{name} must not contain control characters"
        ))),
        false => Ok(()),
    };
    for message in &input.messages {
        control("messages[].id", message.id())?;
        if let Message::Assistant(a) = message {
            for call in a.tool_calls.iter().flatten() {
                control("messages[].toolCalls[].id", &call.id)?;
            }
        }
        if let Message::Tool(t) = message {
            control("messages[].toolCallId", &t.tool_call_id)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use agui_protocol::{Message, RunAgentInput};

    use super::{check_input_ids, no_run_answered};
    use crate::error::CoreError;

    #[test]
    fn only_a_history_without_replies_looks_new() {
        assert!(no_run_answered(&[Message::user("u1", "hi")]));
        assert!(!no_run_answered(&[]), "an empty history is no first turn");
        assert!(!no_run_answered(&[
            Message::user("u1", "hi"),
            Message::assistant("a1", "hello"),
        ]));
    }

    #[test]
    fn an_id_with_a_control_character_is_refused_by_field() {
        let input = RunAgentInput::new("t", "r1", vec![Message::user("u\u{1}", "hi")]);
        match check_input_ids(&input) {
            Err(CoreError::InvalidInput(text)) => assert!(text.contains("messages[].id"), "{text}"),
            other => panic!("{other:?}"),
        }
        let input = RunAgentInput::new("t", "r1", vec![Message::user("ü-1", "hi")]);
        assert!(
            check_input_ids(&input).is_ok(),
            "non-ASCII without controls is fine"
        );
        let input = RunAgentInput::new("t", "r\u{1e}1", vec![]);
        assert!(matches!(
            check_input_ids(&input),
            Err(CoreError::InvalidInput(_))
        ));
    }
}
