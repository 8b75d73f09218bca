//! Reading a `RunAgentInput` POST body (`lenient::parse_input`): a new run's short body and
//! the long history a client such as CopilotKit resends on every run of a thread.

use agui_protocol::lenient::parse_input;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use std::hint::black_box;

/// A thread's POST after `turns` turns of user text, assistant text and a tool round trip.
fn history_body(turns: usize) -> Vec<u8> {
    let mut messages = Vec::new();
    for turn in 0..turns {
        messages.push(json!({"id": format!("u{turn}"), "role": "user", "content": "Refund order A1024, please; it arrived broken."}));
        messages.push(json!({
            "id": format!("a{turn}"), "role": "assistant", "content": "Let me look that order up.",
            "toolCalls": [{"id": format!("tc{turn}"), "type": "function",
                "function": {"name": "get_order", "arguments": "{\"orderId\":\"A1024\"}"}}]
        }));
        messages.push(json!({"id": format!("t{turn}"), "role": "tool", "toolCallId": format!("tc{turn}"),
            "content": "{\"orderId\":\"A1024\",\"item\":\"Wireless headphones\",\"amountCents\":12800}"}));
    }
    serde_json::to_vec(&json!({
        "threadId": "thread-1", "runId": "run-9", "state": {"orders": {"A1024": {"status": "open"}}},
        "messages": messages, "tools": [], "context": [], "forwardedProps": {}
    }))
    .expect("json")
}

/// [`history_body`] with each object's members in the order a JavaScript client writes them
/// (`id`, `role`, then the rest; `serde_json::Value` sorts them, which no client does).
fn client_order_body(turns: usize) -> Vec<u8> {
    let mut messages = Vec::new();
    for turn in 0..turns {
        messages.push(format!(r#"{{"id":"u{turn}","role":"user","content":"Refund order A1024, please; it arrived broken."}}"#));
        messages.push(format!(
            r#"{{"id":"a{turn}","role":"assistant","content":"Let me look that order up.","toolCalls":[{{"id":"tc{turn}","type":"function","function":{{"name":"get_order","arguments":"{{\"orderId\":\"A1024\"}}"}}}}]}}"#
        ));
        messages.push(format!(
            r#"{{"id":"t{turn}","toolCallId":"tc{turn}","role":"tool","content":"{{\"orderId\":\"A1024\",\"item\":\"Wireless headphones\",\"amountCents\":12800}}"}}"#
        ));
    }
    format!(
        r#"{{"threadId":"thread-1","runId":"run-9","tools":[],"context":[],"forwardedProps":{{}},"state":{{"orders":{{"A1024":{{"status":"open"}}}}}},"messages":[{}]}}"#,
        messages.join(",")
    )
    .into_bytes()
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse_input");
    let new_run = br#"{"threadId":"t-1","runId":"r1","messages":[{"id":"m1","role":"user","content":"Refund order B100"}]}"#.to_vec();
    let bodies = [
        ("new run", new_run),
        ("20-turn history", history_body(20)),
        ("20-turn history, client order", client_order_body(20)),
    ];
    for (name, body) in bodies {
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| parse_input(black_box(&body)).expect("valid"))
        });
    }
    group.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
