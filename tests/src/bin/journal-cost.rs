//! `make bench`: what the LLM agent's model-call journal costs (issue 53). One run in which
//! the model asks for a tool three times and then answers (four model calls), over the
//! in-memory store with every store call counted by key: the journal's writes and reads
//! per model call, and the run's other store calls beside them. A first execution never
//! reads the journal; each model call is one write.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::StreamExt;
use handoff_core::outbound::{Body, Outbound, OutboundError};
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, IndexHit, Item, RunOptions, Store, StoreError, Write};
use handoff_llm::{BackendTool, LlmAgent, Provider};
use serde_json::json;

const MODEL_CALLS: usize = 4;

/// The memory store, its calls counted: journal keys apart from the rest.
#[derive(Default)]
struct Counted {
    inner: MemoryStore,
    journal_writes: AtomicUsize,
    journal_reads: AtomicUsize,
    other_commits: AtomicUsize,
    other_reads: AtomicUsize,
}

fn journal(key: &str) -> bool {
    key.starts_with("journal#")
}

#[async_trait]
impl Store for Counted {
    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        let counter = match keys.iter().any(|k| journal(k)) {
            true => &self.journal_reads,
            false => &self.other_reads,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.inner.get(partition, keys, now_ms).await
    }
    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let counter = match writes.iter().any(|w| journal(&w.key)) {
            true => &self.journal_writes,
            false => &self.other_commits,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.inner.commit(partition, writes, now_ms).await
    }
    async fn list(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        self.other_reads.fetch_add(1, Ordering::Relaxed);
        self.inner.list(partition, prefix, now_ms).await
    }
    async fn list_index(
        &self,
        scope: &str,
        after: Option<&IndexHit>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<IndexHit>, StoreError> {
        self.other_reads.fetch_add(1, Ordering::Relaxed);
        self.inner.list_index(scope, after, limit, now_ms).await
    }
}

/// An OpenAI-compatible model answering from a script.
struct Script(Mutex<VecDeque<String>>);

#[async_trait]
impl Outbound for Script {
    async fn send(
        &self,
        _request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError> {
        let turn = self.0.lock().unwrap().pop_front().unwrap_or_default();
        Ok(http::Response::new(handoff_core::outbound::whole(
            turn.into_bytes(),
        )))
    }
}

fn frame(delta: serde_json::Value, finish: Option<&str>) -> String {
    let chunk = json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] });
    format!("data: {chunk}\n\n")
}

fn lookup_turn(n: usize) -> String {
    let call = json!({ "tool_calls": [{ "index": 0, "id": format!("call_{n}"),
        "function": { "name": "lookup", "arguments": format!("{{\"n\":{n}}}") } }] });
    frame(call, None) + &frame(json!({}), Some("tool_calls")) + "data: [DONE]\n\n"
}

#[allow(clippy::print_stdout, clippy::print_stderr)] // The report is the output.
fn main() {
    let mut turns: VecDeque<String> = (1..MODEL_CALLS).map(lookup_turn).collect();
    turns.push_back(frame(json!({ "content": "Done." }), None) + &frame(json!({}), Some("stop")));
    let store = Arc::new(Counted::default());
    let provider = Provider::OpenAi {
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key: "sk-bench".into(),
        model: "bench".into(),
    };
    let schema = json!({ "type": "object", "properties": { "n": { "type": "integer" } } });
    let tool = BackendTool::new("lookup", "Look n up", schema, |args, _key| async move {
        Ok::<_, handoff_llm::ToolError>(json!({ "n": args["n"] }))
    });
    let agent = LlmAgent::new(
        "journal-cost",
        provider,
        Arc::new(Script(Mutex::new(turns))),
    )
    .tool(tool)
    .max_steps(MODEL_CALLS + 1);
    let clock = Arc::new(ManualClock::new(1_800_000_000_000));
    let runtime = Runtime::new(clock, SequentialIds::new("j"), NeverSleep);
    let engine = Engine::new(agent, store.clone(), runtime);
    let input: agui_protocol::RunAgentInput = serde_json::from_value(json!({
        "threadId": "t", "runId": "r1", "state": {}, "tools": [], "context": [], "forwardedProps": {},
        "messages": [{ "id": "m1", "role": "user", "content": "look four things up" }]
    }))
    .expect("input");
    let events: Vec<_> = futures::executor::block_on(async {
        let stream = engine
            .start(input, RunOptions::default())
            .await
            .expect("run");
        stream.collect().await
    });
    assert!(
        matches!(events.last(), Some(agui_protocol::Event::RunFinished(_))),
        "the run finished"
    );
    let writes = store.journal_writes.load(Ordering::Relaxed);
    let reads = store.journal_reads.load(Ordering::Relaxed);
    println!(
        "journal: {MODEL_CALLS} model calls, {writes} journal writes ({:.2} per model call), {reads} journal reads; the run's other store calls: {} commits, {} reads",
        writes as f64 / MODEL_CALLS as f64,
        store.other_commits.load(Ordering::Relaxed),
        store.other_reads.load(Ordering::Relaxed),
    );
    if writes != MODEL_CALLS || reads != 0 {
        eprintln!("journal-cost: expected one write and no read per model call");
        std::process::exit(1);
    }
}
