#![allow(clippy::disallowed_methods)] // A load test measures wall-clock time; it is not engine code.
//! `make bench` load test of the dev server: new runs/s and resumes/s, and p50/p99
//! time to first byte, with the in-memory and the embedded (SQLite) store.
//!
//! `load [--bin-dir DIR] [--runs N] [--concurrency C]` starts one dev-server per
//! store on a free loopback port, sends N refund runs (each ends in an interrupt)
//! from C client threads, then N approvals, and prints a table.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Server {
    child: Child,
    url: String,
    _dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(bin_dir: &std::path::Path, store: &str) -> Server {
    let dir = std::env::temp_dir().join(format!("handoff-load-{}-{store}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut child = Command::new(bin_dir.join("dev-server"))
        .env("PORT", "0")
        .env("HANDOFF_STORE", store)
        .env("HANDOFF_DATA_DIR", &dir)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start dev-server (build it first)");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("banner");
    // Keep draining so the server never writes into a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .expect("url in banner")
        .to_owned();
    Server {
        child,
        url,
        _dir: dir,
    }
}

/// POSTs a body; returns (time to first byte, whole body).
fn post(agent: &ureq::Agent, url: &str, body: &str) -> (Duration, String) {
    let started = Instant::now();
    let response = agent
        .post(url)
        .header("content-type", "application/json")
        .send(body)
        .expect("request");
    let mut reader = response.into_body().into_reader();
    let mut first = [0u8; 1];
    reader.read_exact(&mut first).expect("first byte");
    let ttfb = started.elapsed();
    let mut rest = Vec::new();
    reader.read_to_end(&mut rest).expect("body");
    let mut text = String::from_utf8_lossy(&first).into_owned();
    text.push_str(&String::from_utf8_lossy(&rest));
    (ttfb, text)
}

fn interrupt_id(stream: &str) -> Option<String> {
    let start = stream.find("\"interrupts\":[{\"id\":\"")? + "\"interrupts\":[{\"id\":\"".len();
    Some(stream[start..].split('"').next()?.to_owned())
}

struct Phase {
    per_second: f64,
    p50: Duration,
    p99: Duration,
}

fn run_phase(
    concurrency: usize,
    jobs: Vec<(String, String)>,
    check: fn(&str) -> bool,
) -> (Phase, Vec<String>) {
    let queue = Arc::new(Mutex::new(jobs.into_iter().enumerate().collect::<Vec<_>>()));
    let results = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (queue, results) = (queue.clone(), results.clone());
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(true)
                    .build()
                    .into();
                while let Some((index, (url, body))) = queue.lock().expect("queue").pop() {
                    let (ttfb, text) = post(&agent, &url, &body);
                    assert!(check(&text), "unexpected stream: {text}");
                    results.lock().expect("results").push((index, ttfb, text));
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("worker");
    }
    let elapsed = started.elapsed();
    let mut results = std::mem::take(&mut *results.lock().expect("results"));
    results.sort_by_key(|(index, _, _)| *index);
    let mut ttfbs: Vec<Duration> = results.iter().map(|(_, t, _)| *t).collect();
    ttfbs.sort();
    let pick = |q: f64| ttfbs[((ttfbs.len() as f64 * q) as usize).min(ttfbs.len() - 1)];
    let phase = Phase {
        per_second: results.len() as f64 / elapsed.as_secs_f64(),
        p50: pick(0.50),
        p99: pick(0.99),
    };
    (
        phase,
        results.into_iter().map(|(_, _, text)| text).collect(),
    )
}

#[allow(clippy::print_stdout)] // The table is the output.
fn main() {
    let mut args = std::env::args().skip(1);
    let (mut bin_dir, mut runs, mut concurrency) =
        (PathBuf::from("target/release"), 400usize, 8usize);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--bin-dir" => bin_dir = args.next().expect("--bin-dir DIR").into(),
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--concurrency" => {
                concurrency = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--concurrency C")
            }
            other => panic!("unknown argument {other}"),
        }
    }
    println!(
        "dev-server load: {runs} runs then {runs} resumes, {concurrency} client threads, loopback"
    );
    println!("| store | new runs/s | p50 TTFB | p99 TTFB | resumes/s | p50 TTFB | p99 TTFB |");
    println!("|---|---|---|---|---|---|---|");
    for store in ["memory", "sqlite"] {
        let server = start(&bin_dir, store);
        let url = format!("{}/agent", server.url);
        let tag = std::process::id();
        let new_runs = (0..runs)
            .map(|i| {
                let body = format!(
                    r#"{{"threadId":"load-{tag}-{store}-{i}","runId":"r1","messages":[{{"id":"m1","role":"user","content":"Refund order A{}"}}]}}"#,
                    1000 + i
                );
                (url.clone(), body)
            })
            .collect();
        let (first, streams) = run_phase(concurrency, new_runs, |s| {
            s.contains("\"type\":\"interrupt\"")
        });
        let resumes = streams
            .iter()
            .enumerate()
            .map(|(i, stream)| {
                let id = interrupt_id(stream).expect("interrupt id");
                let body = format!(
                    r#"{{"threadId":"load-{tag}-{store}-{i}","runId":"r2","messages":[],"resume":[{{"interruptId":"{id}","status":"resolved","payload":{{"approved":true}}}}]}}"#
                );
                (url.clone(), body)
            })
            .collect();
        let (second, _) = run_phase(concurrency, resumes, |s| {
            s.contains("TOOL_CALL_RESULT") && s.contains("\"type\":\"success\"")
        });
        let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1000.0);
        println!(
            "| {store} | {:.0} | {} | {} | {:.0} | {} | {} |",
            first.per_second,
            ms(first.p50),
            ms(first.p99),
            second.per_second,
            ms(second.p50),
            ms(second.p99)
        );
    }
}
