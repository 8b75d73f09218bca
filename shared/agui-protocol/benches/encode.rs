//! SSE and A2UI encoding throughput on a realistic mix of events:
//! text deltas, streamed tool arguments, state deltas and snapshots; and the
//! issue-16 corpus mix (`sse_corpus_mix`, 100,000 events) against `serde_json`.

use agui_protocol::a2ui::A2uiEncoder;
use agui_protocol::bench_corpus;
use agui_protocol::event::{
    MessagesSnapshot, RunFinished, RunStarted, StateDelta, StateSnapshot, TextMessageContent,
    TextMessageEnd, TextMessageStart, ToolCallArgs, ToolCallEnd, ToolCallResult, ToolCallStart,
};
use agui_protocol::sse::SseEncoder;
use agui_protocol::{Event, Message, PatchOp, RunFinishedOutcome};
use bytes::BytesMut;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::Duration;

fn realistic_run() -> Vec<Event> {
    let mut events: Vec<Event> = vec![RunStarted::new("t1", "r1").into()];
    for turn in 0..10 {
        let msg = format!("m{turn}");
        events.push(TextMessageStart::new(msg.as_str()).into());
        for word in 0..60 {
            events.push(TextMessageContent::new(msg.as_str(), format!("token{word} ")).into());
        }
        events.push(TextMessageEnd::new(msg.as_str()).into());
        let call = format!("tc{turn}");
        events.push(ToolCallStart::new(call.as_str(), "search").into());
        for fragment in 0..20 {
            events.push(
                ToolCallArgs::new(call.as_str(), format!("{{\"q{fragment}\":\"value\",")).into(),
            );
        }
        events.push(ToolCallEnd::new(call.as_str()).into());
        events.push(
            ToolCallResult::new(format!("res{turn}"), call.as_str(), "{\"hits\":[1,2,3]}").into(),
        );
        for step in 0..5 {
            events.push(
                StateDelta::new(vec![
                    PatchOp::replace("/progress", json!(step)),
                    PatchOp::add(format!("/log/{step}"), json!({"turn": turn})),
                ])
                .into(),
            );
        }
        events.push(StateSnapshot::new(json!({"turn": turn, "items": (0..50).collect::<Vec<_>>(), "user": {"name": "Ada", "plan": "pro"}})).into());
    }
    let history: Vec<Message> = (0..30)
        .map(|i| Message::user(format!("u{i}"), "a previous question about orders"))
        .collect();
    events.push(MessagesSnapshot::new(history).into());
    let mut finished = RunFinished::new("t1", "r1");
    finished.outcome = Some(RunFinishedOutcome::success());
    events.push(finished.into());
    events
        .into_iter()
        .map(|e| e.with_timestamp(1_764_421_200_000))
        .collect()
}

fn bench(c: &mut Criterion) {
    let events = realistic_run();
    let bytes: usize = {
        let mut encoder = SseEncoder::new();
        events.iter().map(|e| encoder.encode(e).len()).sum()
    };
    let mut group = c.benchmark_group("sse");
    group.throughput(Throughput::Elements(events.len() as u64));
    group.bench_function("agui_events", |b| {
        b.iter(|| {
            let mut encoder = SseEncoder::new();
            for event in &events {
                black_box(encoder.encode(black_box(event)));
            }
        })
    });
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("agui_bytes", |b| {
        b.iter(|| {
            let mut encoder = SseEncoder::new();
            for event in &events {
                black_box(encoder.encode(black_box(event)));
            }
        })
    });
    group.finish();

    let mut group = c.benchmark_group("a2ui");
    group.throughput(Throughput::Elements(events.len() as u64));
    group.bench_function("named_frames", |b| {
        b.iter(|| {
            let mut encoder = A2uiEncoder::new("bench");
            for event in &events {
                black_box(encoder.encode(black_box(event), 0));
            }
        })
    });
    group.bench_function("legacy", |b| {
        b.iter(|| {
            let mut encoder = A2uiEncoder::new("bench");
            for event in &events {
                black_box(encoder.encode_legacy(black_box(event), 0));
            }
        })
    });
    group.finish();
}

/// The issue-16 target: ≥ 4 M events/s on this mix, byte-identical to the official
/// encoder (checked by `tests/node/encoder-corpus.test.mjs`).
fn corpus_mix(c: &mut Criterion) {
    let events = bench_corpus::mix(bench_corpus::DEFAULT_LEN);
    let values: Vec<Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).expect("events serialize"))
        .collect();
    let mut group = c.benchmark_group("sse_corpus_mix");
    group.throughput(Throughput::Elements(events.len() as u64));
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(8));
    group.bench_function("encode", |b| {
        b.iter(|| {
            let mut encoder = SseEncoder::new();
            for event in &events {
                black_box(encoder.encode(black_box(event)));
            }
        })
    });
    // The same mix, 1,000 events that stay in the cache: the encoder's own speed. The full
    // corpus (tens of MB) is read from memory on every pass, and on a machine whose cache
    // is smaller than that, encoding waits on those reads (the string bytes and map nodes
    // each event points to) as much as it computes.
    let warm = bench_corpus::mix(1_000);
    group.bench_function("encode_warm_1k_x100", |b| {
        b.iter(|| {
            for _ in 0..100 {
                let mut encoder = SseEncoder::new();
                for event in &warm {
                    black_box(encoder.encode(black_box(event)));
                }
            }
        })
    });
    let mut buf = BytesMut::with_capacity(64 * 1024);
    group.bench_function("encode_into_reused", |b| {
        b.iter(|| {
            let mut encoder = SseEncoder::new();
            for event in &events {
                buf.clear();
                encoder.encode_into(&mut buf, black_box(event));
                black_box(&buf);
            }
        })
    });
    let mut out: Vec<u8> = Vec::with_capacity(64 * 1024);
    group.bench_function("serde_json_value_to_vec", |b| {
        b.iter(|| {
            for value in &values {
                out.clear();
                out.extend_from_slice(b"data: ");
                serde_json::to_writer(&mut out, black_box(value)).expect("serializes");
                out.extend_from_slice(b"\n\n");
                black_box(&out);
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench, corpus_mix);
criterion_main!(benches);
