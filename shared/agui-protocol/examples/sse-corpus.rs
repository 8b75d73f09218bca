//! Writes the issue-16 encoder corpus for `tests/node/encoder-corpus.test.mjs`:
//! `events.jsonl` (one event per line, as `serde_json` serializes it) and `ours.sse`
//! (the same events through `SseEncoder`), which the official `@ag-ui/encoder`
//! must reproduce byte for byte.
//!
//!   cargo run -q -p agui-protocol --example sse-corpus -- [dir] [events]
//!   (defaults: target/agui-sse-corpus, 100000)

use std::fs;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use agui_protocol::bench_corpus;
use agui_protocol::sse::SseEncoder;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .map_or_else(|| PathBuf::from("target/agui-sse-corpus"), PathBuf::from);
    let len = match args.next() {
        Some(n) => n.parse()?,
        None => bench_corpus::DEFAULT_LEN,
    };
    fs::create_dir_all(&dir)?;
    let events = bench_corpus::mix(len);
    let mut lines = BufWriter::new(fs::File::create(dir.join("events.jsonl"))?);
    let mut sse = BufWriter::new(fs::File::create(dir.join("ours.sse"))?);
    let mut encoder = SseEncoder::new();
    for event in &events {
        serde_json::to_writer(&mut lines, event)?;
        lines.write_all(b"\n")?;
        sse.write_all(&encoder.encode(event))?;
    }
    lines.flush()?;
    sse.flush()?;
    eprintln!("wrote {len} events to {}", dir.display());
    Ok(())
}
