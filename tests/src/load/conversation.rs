//! Conversation mode: `clients` threads, one conversation each, `turns` turns in lockstep;
//! every turn sends the whole history so far (as the client holds it) and the server's CPU
//! is measured per turn, all clients' turn `k` together, so a server whose turn cost grows
//! with the history shows it as turn N over turn 1.

use std::sync::{Arc, Barrier, Mutex};

use super::bodies::{self, Shape};
use super::client::{agent, finished, post};
use super::server::cpu_ns;

/// One conversation set against one server.
pub(crate) struct Turns {
    /// Server CPU per turn (nanoseconds, summed over the clients), turn 1 first.
    pub(crate) cpu_ns: Vec<u64>,
    /// Failed turns and the first failure.
    pub(crate) errors: u64,
    pub(crate) first_error: Option<String>,
}

impl Turns {
    /// CPU of turn `k` (1-based) over turn 1.
    pub(crate) fn ratio(&self, k: usize) -> f64 {
        let first = self.cpu_ns.first().copied().unwrap_or(0).max(1) as f64;
        self.cpu_ns.get(k - 1).copied().unwrap_or(0) as f64 / first
    }
}

/// A user's turn: words that ask for nothing the demo scripts (no refund, no return).
fn question(turn: usize) -> String {
    format!("Turn {turn}: what can you help me with today? I am just looking around for now.")
}

/// The server's CPU clock once it stopped moving (two readings 1 ms apart agree; 50 ms at
/// most): the tail of a turn's work after its last byte is still that turn's.
fn settled_cpu_ns(pid: u32) -> u64 {
    let mut last = cpu_ns(pid);
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(1));
        let now = cpu_ns(pid);
        if now == last {
            break;
        }
        last = now;
    }
    last
}

pub(crate) fn drive(
    url: &str,
    pid: u32,
    clients: usize,
    turns: usize,
    tag: &str,
    shape: Shape,
) -> Turns {
    // Each turn: everyone waits at the start, sends, waits at the end; the coordinator reads
    // the server's CPU at both waits.
    let barrier = Arc::new(Barrier::new(clients + 1));
    let failures = Arc::new(Mutex::new((0u64, None::<String>)));
    let workers: Vec<_> = (0..clients)
        .map(|client| {
            let (barrier, failures, url) = (barrier.clone(), failures.clone(), url.to_owned());
            let thread = format!("conv-{}-{tag}-{client}", std::process::id());
            std::thread::spawn(move || {
                let agent = agent();
                let mut messages = Vec::new();
                let mut state = "{}".to_owned();
                for turn in 1..=turns {
                    // Ready (the coordinator reads the CPU clock), then go.
                    barrier.wait();
                    barrier.wait();
                    messages.push(bodies::message(
                        &format!("u{turn}"),
                        "user",
                        &question(turn),
                    ));
                    let body = bodies::run(shape, &thread, &format!("r{turn}"), &messages, &state);
                    let outcome =
                        post(&agent, &format!("{url}/agent"), &body).and_then(|(_, stream)| {
                            finished(&stream, "success")?;
                            bodies::apply_stream(&stream, &mut messages, &mut state);
                            Ok(())
                        });
                    if let Err(error) = outcome {
                        let mut failures = failures.lock().expect("failures");
                        failures.0 += 1;
                        failures.1.get_or_insert(error);
                    }
                    barrier.wait();
                }
                // Connections stay open until the last turn's CPU is read: closing them is
                // the server's work, but no turn's.
                barrier.wait();
                drop(agent);
            })
        })
        .collect();
    let mut cpu = Vec::with_capacity(turns);
    for _ in 0..turns {
        // Read while every client waits, so none of the turn's work comes before it.
        barrier.wait();
        let before = settled_cpu_ns(pid);
        barrier.wait();
        barrier.wait();
        // The server may still be finishing (dropping a run, a log line) after the last byte.
        cpu.push(settled_cpu_ns(pid).saturating_sub(before));
    }
    barrier.wait();
    for worker in workers {
        worker.join().expect("conversation thread");
    }
    let (errors, first_error) = std::mem::take(&mut *failures.lock().expect("failures"));
    Turns {
        cpu_ns: cpu,
        errors,
        first_error,
    }
}
