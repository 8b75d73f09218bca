//! `POST /__test/turns/{thread}`: what one turn costs KV as a thread grows, measured
//! inside workerd on the Worker's own store (`HANDOFF_INLINE_LIMIT`, default 32 KiB).
//!
//! Body `{count, text, replyBytes?, inlineLimit?}`: `count` turns the way an AG-UI
//! client makes them (the whole stored history plus a new user message `text`) of
//! the demo agent; a turn that ends with an interrupt is resumed with an approval,
//! both runs counting as the turn. `replyBytes` adds that much text to every reply
//! that finishes a run (a long model answer); `inlineLimit` overrides the store's
//! limit. Answers `{messages, turns: [{messagesBefore, runs, kvPuts, kvPutBytes,
//! commits, bytesWritten}]}`: KV puts and bytes as the store made them, commits and
//! bytes written as the engine asked for them (ledger partition included).

use std::sync::Arc;

use agui_protocol::{Event, Message, ResumeEntry, RunAgentInput, RunFinishedOutcome};
use async_trait::async_trait;
use axum::Json;
use axum::Router;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::routing::post;
use futures::StreamExt;
use handoff_core::codes::ErrorCode;
use handoff_core::store::counting::CountingStore;
use handoff_core::{
    Agent, AgentError, CoreError, Decision, Engine, Finish, IdGen, Readiness, RunContext,
    RunOptions, Runtime, Store,
};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_store_cloudflare::DurableStore;
use serde::Deserialize;
use serde_json::{Value, json};
use worker::Env;

use crate::{RandomIds, WorkerClock, WorkerSleep};
use handoff::worker::WorkerSchema;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Turns {
    count: usize,
    text: String,
    #[serde(default)]
    reply_bytes: usize,
    inline_limit: Option<usize>,
}

pub(crate) fn routes(env: &Env) -> worker::Result<Router> {
    let store = crate::store(env)?;
    Ok(Router::new().route(
        "/__test/turns/{thread}",
        post(
            move |Path(thread): Path<String>, Json(turns): Json<Turns>| async move {
                let store = match turns.inline_limit {
                    Some(limit) => store.with_inline_limit(limit),
                    None => store,
                };
                run_turns(store, &thread, turns)
                    .await
                    .map(Json)
                    .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e))
            },
        ),
    ))
}

async fn run_turns(store: DurableStore, thread: &str, turns: Turns) -> Result<Value, String> {
    let counted = Arc::new(CountingStore::new(store.clone()));
    let shared: Arc<dyn Store> = counted.clone();
    let agent = LongReplies {
        demo: DemoAgent::new(shared.clone(), DemoConfig::default()),
        reply: reply_text(turns.reply_bytes),
    };
    // No spawner: each run is driven by the stream collected below.
    let engine = Engine::new(
        agent,
        shared,
        Runtime::new(WorkerClock, RandomIds, WorkerSleep),
    )
    .with_schema_validator(Some(std::sync::Arc::new(WorkerSchema)));
    let mut costs = Vec::with_capacity(turns.count);
    for _ in 0..turns.count {
        let history = history(&engine, thread).await?;
        let messages_before = history.len();
        let kv_before = store.blob_stats();
        counted.take();
        let runs = turn(&engine, thread, history, &turns.text).await?;
        let kv = store.blob_stats();
        let engine_cost = counted.take();
        costs.push(json!({
            "messagesBefore": messages_before,
            "runs": runs,
            "kvPuts": kv.kv_puts - kv_before.kv_puts,
            "kvPutBytes": kv.kv_put_bytes - kv_before.kv_put_bytes,
            "commits": engine_cost.commits,
            "bytesWritten": engine_cost.bytes_written,
        }));
    }
    let messages = history(&engine, thread).await?.len();
    Ok(json!({ "messages": messages, "turns": costs }))
}

async fn history(engine: &Engine, thread: &str) -> Result<Vec<Message>, String> {
    match engine
        .thread(&handoff_core::Principal::anonymous(), thread)
        .await
    {
        Ok(view) => Ok(view.map(|v| v.messages).unwrap_or_default()),
        Err(err) => Err(format!("thread read: {err}")),
    }
}

/// One client turn; answers the outcome of each run (`interrupt`, then `success`).
async fn turn(
    engine: &Engine,
    thread: &str,
    mut messages: Vec<Message>,
    text: &str,
) -> Result<Vec<&'static str>, String> {
    messages.push(Message::user(RandomIds.next_id("msg"), text));
    let input = RunAgentInput::new(thread, RandomIds.next_id("run").as_str(), messages);
    let mut outcomes = Vec::new();
    let mut outcome = run(engine, input).await?;
    while let RunFinishedOutcome::Interrupt { interrupts } = outcome {
        outcomes.push("interrupt");
        if outcomes.len() > 4 {
            return Err("the agent keeps interrupting".to_owned());
        }
        let answers = interrupts
            .iter()
            .map(|i| ResumeEntry::resolved(i.id.clone(), json!({ "approved": true })))
            .collect();
        let resume = RunAgentInput::new(thread, RandomIds.next_id("run").as_str(), Vec::new())
            .with_resume(answers);
        outcome = run(engine, resume).await?;
    }
    outcomes.push(match outcome {
        RunFinishedOutcome::Success { .. } => "success",
        _ => "other",
    });
    Ok(outcomes)
}

async fn run(engine: &Engine, input: RunAgentInput) -> Result<RunFinishedOutcome, String> {
    let stream = engine
        .start(input, RunOptions::default())
        .await
        .map_err(|e| format!("run refused: {} ({e})", e.code()))?;
    let events: Vec<Event> = stream.collect().await;
    match events.last() {
        Some(Event::RunFinished(finished)) => Ok(finished
            .outcome
            .clone()
            .unwrap_or(RunFinishedOutcome::success())),
        other => Err(format!("run did not finish: {other:?}")),
    }
}

fn reply_text(bytes: usize) -> String {
    let words = "a long answer the model streamed, ";
    words.chars().cycle().take(bytes).collect()
}

/// The demo agent, with `reply` added to every reply that finishes a run.
struct LongReplies {
    demo: DemoAgent,
    reply: String,
}

#[async_trait]
impl Agent for LongReplies {
    fn name(&self) -> &str {
        self.demo.name()
    }

    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        let finish = self.demo.run(ctx).await?;
        if !self.reply.is_empty() && matches!(finish, Finish::Success { .. }) {
            ctx.say(&self.reply);
        }
        Ok(finish)
    }

    async fn readiness(
        &self,
        thread_id: &str,
        decision: &Decision,
    ) -> Result<Readiness, CoreError> {
        self.demo.readiness(thread_id, decision).await
    }
}
