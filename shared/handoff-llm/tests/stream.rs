//! Recorded provider streams, fed in chunks of every awkward size, streamed into a real
//! run: the AG-UI stream is valid, arguments are forwarded as they arrive, and the turn
//! is assembled; provider errors end the run with stable, redacted codes.

use std::sync::{Arc, Mutex};

use agui_protocol::verify::{VerifyOptions, verify_events};
use agui_protocol::{Event, EventType, RunAgentInput, TokenUsage};
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Agent, AgentError, Engine, Finish, RunContext, RunOptions};
use handoff_llm::anthropic::EventParser;
use handoff_llm::openai::ChunkParser;
use handoff_llm::sse::FrameParser;
use handoff_llm::{FinishReason, ModelTurn, ProviderStream, TurnEmitter};

const OPENAI: &str = include_str!("fixtures/openai-tools.sse");
const ANTHROPIC: &str = include_str!("fixtures/anthropic-tools.sse");

/// Streams `body` (cut every `chunk` bytes) through `parser` into the run.
struct Replay<P> {
    body: String,
    chunk: usize,
    parser: fn() -> P,
    turn: Arc<Mutex<Option<ModelTurn>>>,
}

#[async_trait::async_trait]
impl<P: FrameParser + Send + Sync + 'static> Agent for Replay<P> {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        let mut stream = ProviderStream::new((self.parser)());
        let mut emitter = TurnEmitter::new();
        for piece in self.body.as_bytes().chunks(self.chunk) {
            let deltas = match stream.feed(piece) {
                Ok(deltas) => deltas,
                Err(error) => return Err(error.fail_run(ctx)),
            };
            for delta in deltas {
                emitter.apply(ctx, delta).map_err(|e| e.fail_run(ctx))?;
            }
        }
        let turn = emitter.finish(ctx);
        *self.turn.lock().unwrap() = Some(turn);
        Ok(Finish::done())
    }
}

fn run<P: FrameParser + Send + Sync + 'static>(
    body: &str,
    chunk: usize,
    parser: fn() -> P,
) -> (Vec<Event>, Option<ModelTurn>) {
    let turn = Arc::new(Mutex::new(None));
    let agent = Replay {
        body: body.to_owned(),
        chunk,
        parser,
        turn: turn.clone(),
    };
    let runtime = Runtime::new(
        ManualClock::new(1_764_421_200_000),
        SequentialIds::new("t"),
        NeverSleep,
    );
    let engine = Engine::new(agent, Arc::new(MemoryStore::new()), runtime);
    let input: RunAgentInput = serde_json::from_value(serde_json::json!({
        "threadId": "t1", "runId": "r1",
        "messages": [{"id": "m1", "role": "user", "content": "Refund order A1024"}],
    }))
    .unwrap();
    let events = block_on(async {
        let stream = engine
            .start(input.clone(), RunOptions::default())
            .await
            .unwrap();
        stream.collect::<Vec<_>>().await
    });
    verify_events(&events, VerifyOptions::strict().with_input(input)).expect("valid stream");
    let turn = turn.lock().unwrap().take();
    (events, turn)
}

fn count(events: &[Event], ty: EventType) -> usize {
    events.iter().filter(|e| e.event_type() == ty).count()
}

fn assert_tool_turn(events: &[Event], turn: &ModelTurn, usage: TokenUsage) {
    assert_eq!(turn.text, "Let me check — 注文");
    assert_eq!(turn.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(turn.usage, usage);
    let calls: Vec<(&str, &str)> = turn
        .tool_calls
        .iter()
        .map(|c| (c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("get_order", "{\"orderId\": \"A1024\"}"),
            ("get_customer", "{\"id\":7}")
        ]
    );
    assert_eq!(count(events, EventType::ToolCallStart), 2);
    assert_eq!(count(events, EventType::ToolCallEnd), 2);
    assert_eq!(
        count(events, EventType::TextMessageContent),
        2,
        "text forwarded as it came"
    );
    assert_eq!(count(events, EventType::ReasoningMessageContent).min(1), 1);
    assert_eq!(count(events, EventType::ReasoningEnd), 1);
    assert!(
        count(events, EventType::ToolCallArgs) >= 3,
        "arguments forwarded as they came"
    );
}

#[test]
fn openai_chunks_stream_text_reasoning_and_two_tool_calls_whatever_the_cuts() {
    for chunk in [1, 3, 7, 64, 4096] {
        let (events, turn) = run(OPENAI, chunk, ChunkParser::default);
        let usage = TokenUsage {
            input_tokens: Some(120),
            output_tokens: Some(31),
            total_tokens: Some(151),
            ..TokenUsage::default()
        };
        assert_tool_turn(&events, &turn.expect("turn"), usage);
    }
}

#[test]
fn anthropic_events_stream_text_thinking_and_two_tool_uses_whatever_the_cuts() {
    for chunk in [1, 5, 64, 4096] {
        let (events, turn) = run(ANTHROPIC, chunk, EventParser::default);
        let usage = TokenUsage {
            input_tokens: Some(95),
            output_tokens: Some(31),
            total_tokens: Some(126),
            ..TokenUsage::default()
        };
        assert_tool_turn(&events, &turn.expect("turn"), usage);
    }
}

fn run_error(events: &[Event]) -> (String, String) {
    match events.last() {
        Some(Event::RunError(e)) => (e.code.clone().unwrap_or_default(), e.message.clone()),
        other => panic!("expected RUN_ERROR, got {other:?}"),
    }
}

#[test]
fn provider_error_frames_end_the_run_with_stable_redacted_codes() {
    let openai = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n\
                  data: {\"error\":{\"message\":\"Rate limit reached for org-secret\",\"type\":\"tokens\",\"code\":\"rate_limit_exceeded\"}}\n\n";
    let (events, turn) = run(openai, 16, ChunkParser::default);
    assert!(turn.is_none());
    let (code, message) = run_error(&events);
    assert_eq!(code, "MODEL_RATE_LIMITED");
    assert!(!message.contains("org-secret"), "{message}");

    let anthropic = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded (req abc)\"}}\n\n";
    let (events, _) = run(anthropic, 4096, EventParser::default);
    let (code, message) = run_error(&events);
    assert_eq!(code, "MODEL_UNAVAILABLE");
    assert!(!message.contains("req abc"));

    let garbage = "data: {not json\n\n";
    let (events, _) = run(garbage, 4096, ChunkParser::default);
    assert_eq!(run_error(&events).0, "MODEL_ERROR");
}

#[test]
fn anthropic_input_counts_cache_reads_and_writes_as_agui_does() {
    let body = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":",
        "{\"input_tokens\":10,\"cache_read_input_tokens\":100,\"cache_creation_input_tokens\":20,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"Hi\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":7}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    let (_, turn) = run(body, 4096, EventParser::default);
    let usage = turn.expect("turn").usage;
    assert_eq!(
        usage,
        TokenUsage {
            input_tokens: Some(130),
            output_tokens: Some(7),
            total_tokens: Some(137),
            cached_input_tokens: Some(100),
            cache_write_input_tokens: Some(20),
            ..TokenUsage::default()
        }
    );
}
