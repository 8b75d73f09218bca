//! What one turn costs a store as a thread grows: used by `make bench` (per store) and
//! by the test that holds the engine to "cost per turn independent of history length".
//!
//! A turn is what AG-UI clients do: resend the whole history plus a new user message.
//! Two kinds alternate: a chat turn (user → assistant), and an approval turn (a run
//! that stops with an interrupt, then the resume that executes the effect).

use std::sync::Arc;

use agui_protocol::{Interrupt, Message, ResumeEntry, RunAgentInput, RunFinishedOutcome};
use futures::StreamExt;
use handoff_core::codes::ErrorCode;
use handoff_core::runtime::{ManualClock, NeverSleep, SequentialIds};
use handoff_core::store::counting::{CountingStore, StoreCost};
use handoff_core::{Agent, AgentError, Engine, Finish, RunContext, RunOptions, Runtime, Store};
use serde_json::json;

/// Answers chat; asks for approval when the user says "refund", refunds on resume.
pub struct TurnAgent;

#[async_trait::async_trait]
impl Agent for TurnAgent {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        if let Some(decision) = ctx.decisions().first().cloned() {
            let call = decision.tool_call_id().cloned().ok_or("no tool call")?;
            let receipt: serde_json::Value = ctx
                .effect(&format!("refund-{call}"), |key| async move {
                    Ok::<_, String>(json!({ "refundId": key }))
                })
                .await?;
            ctx.tool_result(&call, receipt.to_string());
            ctx.say("Refunded.");
            return Ok(Finish::done());
        }
        let text = ctx.last_user_text().unwrap_or_default();
        if text.starts_with("refund") {
            let call = ctx.tool_call("refund_order", &json!({ "orderId": "A1024", "amount": 40 }));
            let interrupt = Interrupt::new(format!("int-{call}"), "tool_call")
                .with_tool_call(call)
                .with_message("Refund 40 EUR on A1024?");
            return Ok(Finish::interrupt(interrupt));
        }
        ctx.say("Sure: here is a short answer of a typical length for a chat turn.");
        Ok(Finish::done())
    }
}

/// The edges of a measured turn (see [`Conversation::measure_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// A measured turn starts.
    Start,
    /// It has ended.
    End,
}

/// What a resume's body carries besides the answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResumeBody {
    /// The history the client holds, as `@ag-ui/client`'s `HttpAgent` sends on every run
    /// (the default: what `make bench` measures).
    WithHistory,
    /// No messages: the engine reads the history from its pages.
    AnswersOnly,
}

/// A thread driven turn by turn over a counted store.
pub struct Conversation<S> {
    store: Arc<CountingStore<S>>,
    engine: Engine,
    thread: String,
    turns: usize,
    resume_body: ResumeBody,
}

/// The cost of one turn of each kind.
#[derive(Debug, Clone, Copy)]
pub struct TurnCost {
    /// Messages on the thread before the turn.
    pub messages: usize,
    /// A chat turn.
    pub chat: StoreCost,
    /// An approval turn (interrupting run plus resume).
    pub approval: StoreCost,
}

impl<S: Store> Conversation<S> {
    /// A new thread over `store`.
    pub fn new(store: S, thread: &str) -> Self {
        let store = Arc::new(CountingStore::new(store));
        let runtime = Runtime::new(
            ManualClock::new(1_795_000_000_000),
            SequentialIds::new("c"),
            NeverSleep,
        );
        let engine = Engine::new(TurnAgent, store.clone(), runtime);
        Conversation {
            store,
            engine,
            thread: thread.to_owned(),
            turns: 0,
            resume_body: ResumeBody::WithHistory,
        }
    }

    /// What the resumes' bodies carry from now on.
    pub fn with_resume_body(mut self, body: ResumeBody) -> Self {
        self.resume_body = body;
        self
    }

    /// Messages on the thread.
    pub async fn message_count(&self) -> usize {
        self.history().await.len()
    }

    async fn history(&self) -> Vec<Message> {
        match self
            .engine
            .thread(&handoff_core::Principal::anonymous(), &self.thread)
            .await
        {
            Ok(Some(view)) => view.messages,
            Ok(None) => Vec::new(),
            Err(e) => panic!("thread read failed: {e}"),
        }
    }

    /// Runs `input` to its end: the outcome, and the messages of the run's last
    /// `MESSAGES_SNAPSHOT` (the history a client holds afterwards).
    async fn run(&self, input: RunAgentInput) -> (RunFinishedOutcome, Option<Vec<Message>>) {
        let events: Vec<_> = match self.engine.start(input, RunOptions::default()).await {
            Ok(stream) => stream.collect().await,
            Err(e) => panic!("run refused: {} ({e})", e.code().name),
        };
        let snapshot = events.iter().rev().find_map(|event| match event {
            agui_protocol::Event::MessagesSnapshot(s) => Some(s.messages.clone()),
            _ => None,
        });
        match events.last() {
            Some(agui_protocol::Event::RunFinished(f)) => (
                f.outcome.clone().unwrap_or(RunFinishedOutcome::success()),
                snapshot,
            ),
            other => panic!("run did not finish: {other:?}"),
        }
    }

    /// One turn: the client resends the history with a new user message.
    pub async fn turn(&mut self, text: &str) {
        let history = self.history().await;
        self.turn_after(history, text).await;
    }

    /// [`Conversation::turn`] with the history the client holds (read before a
    /// measurement starts, so that only the turn is counted).
    async fn turn_after(&mut self, history: Vec<Message>, text: &str) {
        self.turns += 1;
        let mut messages = history;
        messages.push(Message::user(format!("u-{}", self.turns), text));
        let run = format!("r-{}", self.turns);
        let input = RunAgentInput::new(self.thread.as_str(), run.as_str(), messages);
        if let (RunFinishedOutcome::Interrupt { interrupts }, snapshot) = self.run(input).await {
            let answers = interrupts
                .iter()
                .map(|i| ResumeEntry::resolved(i.id.clone(), json!({ "approved": true })))
                .collect();
            // `@ag-ui/client` sends the whole history it holds with the answers too: the
            // interrupted run's snapshot. A client sending none makes the resume read the
            // history pages (one `scan`).
            let held = match self.resume_body {
                ResumeBody::WithHistory => snapshot.unwrap_or_default(),
                ResumeBody::AnswersOnly => Vec::new(),
            };
            let resume = RunAgentInput::new(self.thread.as_str(), format!("{run}-resume"), held)
                .with_resume(answers);
            self.run(resume).await;
        }
    }

    /// Grows the thread to at least `messages` with chat turns (two messages each).
    pub async fn grow_to(&mut self, messages: usize) {
        let mut len = self.message_count().await;
        while len < messages {
            self.turn("tell me something").await;
            len += 2;
        }
    }

    /// Measures one chat turn and one approval turn at the current length.
    pub async fn measure(&mut self) -> TurnCost {
        self.measure_with(|_| {}).await
    }

    /// [`Conversation::measure`], calling `window(Window::Start)` just before each measured
    /// turn and `window(Window::End)` just after it: the reads of the history the client
    /// holds, before each turn, fall outside (a backend's own counters measure the turns
    /// alone, like the store costs returned).
    pub async fn measure_with(&mut self, mut window: impl FnMut(Window)) -> TurnCost {
        let history = self.history().await;
        let messages = history.len();
        self.store.take();
        window(Window::Start);
        self.turn_after(history, "tell me something").await;
        window(Window::End);
        let chat = self.store.take();
        let history = self.history().await;
        self.store.take();
        window(Window::Start);
        self.turn_after(history, "refund order A1024").await;
        window(Window::End);
        let approval = self.store.take();
        TurnCost {
            messages,
            chat,
            approval,
        }
    }
}
