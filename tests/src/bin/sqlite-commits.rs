//! What group commit saves the SQLite store per approval pair (issue 54): commits,
//! transactions, fsyncs and WAL frames, with group commit on and off, under
//! `synchronous = FULL` and `NORMAL`. Part of `make bench`.
//!
//! 16 clients run concurrently on a multi-threaded tokio runtime, each doing approval pairs
//! of the demo agent in-process (run 1 ends in an interrupt, the approving resume executes
//! the one refund, which the demo's ledger records) on threads of their own, all on one
//! [`SqliteStore`] file in a temporary directory. The counts come from
//! [`SqliteStore::stats`]; group commit is turned off with
//! [`SqliteOptions::with_max_group(1)`](SqliteOptions::with_max_group).
//!
//! `sqlite-commits [PAIRS_PER_CLIENT]` (default 40).

#![allow(clippy::disallowed_methods)] // It measures wall-clock time; it is not engine code.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agui_protocol::{Event, Message, ResumeEntry, RunAgentInput, RunFinishedOutcome};
use futures::StreamExt;
use handoff_core::runtime::{ManualClock, NeverSleep, SequentialIds};
use handoff_core::{Engine, RunOptions, Runtime, Store};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_store_sqlite::{SqliteOptions, SqliteStats, SqliteStore, Synchronous};
use serde_json::json;

const CLIENTS: usize = 16;
const DEFAULT_PAIRS_PER_CLIENT: usize = 40;
const NOW_MS: u64 = 1_795_000_000_000;

/// One line of the table: a store setting and what its pairs cost.
struct Row {
    label: &'static str,
    synchronous: Synchronous,
    pairs: usize,
    stats: SqliteStats,
    elapsed: Duration,
}

fn main() -> ExitCode {
    let pairs_per_client = match std::env::args().nth(1).map(|arg| arg.parse::<usize>()) {
        None => DEFAULT_PAIRS_PER_CLIENT,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: sqlite-commits [PAIRS_PER_CLIENT]");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("no tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let settings = [
        ("FULL, grouped", Synchronous::Full, 64),
        ("FULL, one per txn", Synchronous::Full, 1),
        ("NORMAL, grouped", Synchronous::Normal, 64),
        ("NORMAL, one per txn", Synchronous::Normal, 1),
    ];
    let mut rows = Vec::new();
    for (label, synchronous, max_group) in settings {
        let options = SqliteOptions::default()
            .with_synchronous(synchronous)
            .with_max_group(max_group);
        match runtime.block_on(measure(options, pairs_per_client)) {
            Ok((stats, elapsed)) => rows.push(Row {
                label,
                synchronous,
                pairs: CLIENTS * pairs_per_client,
                stats,
                elapsed,
            }),
            Err(e) => {
                eprintln!("sqlite-commits ({label}): {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    print_table(&rows);
    ExitCode::SUCCESS
}

/// Runs `pairs_per_client` pairs on each of [`CLIENTS`] concurrent clients over a fresh
/// store opened with `options`; returns the store's stats and the wall time.
async fn measure(
    options: SqliteOptions,
    pairs_per_client: usize,
) -> Result<(SqliteStats, Duration), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let store = Arc::new(
        SqliteStore::open_with(dir.path().join("commits.db"), options)
            .map_err(|e| format!("open: {e}"))?,
    );
    let shared: Arc<dyn Store> = store.clone();
    let agent = DemoAgent::new(shared.clone(), DemoConfig::default());
    let runtime = Runtime::new(
        ManualClock::new(NOW_MS),
        SequentialIds::new("commits"),
        NeverSleep,
    );
    let engine = Arc::new(Engine::new(agent, shared, runtime));
    let before = store.stats();
    let started = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let engine = Arc::clone(&engine);
            tokio::spawn(async move {
                for n in 0..pairs_per_client {
                    // A thread and an order of its own per pair: the ledger refunds an
                    // order only up to what it has left.
                    let order = format!("B{}", 100 + client * pairs_per_client + n);
                    pair(&engine, &format!("commits-{client}-{n}"), &order).await?;
                }
                Ok::<(), String>(())
            })
        })
        .collect();
    for client in clients {
        client.await.map_err(|e| format!("client: {e}"))??;
    }
    let elapsed = started.elapsed();
    let stats = store.stats().since(&before);
    // Dropping the store joins its threads: off the runtime's worker thread.
    tokio::task::spawn_blocking(move || drop((engine, store)))
        .await
        .map_err(|e| format!("closing the store: {e}"))?;
    Ok((stats, elapsed))
}

/// One approval pair: run 1 ends in an interrupt, the approving resume refunds once.
async fn pair(engine: &Engine, thread: &str, order: &str) -> Result<(), String> {
    let text = format!("Refund order {order}");
    let run = RunAgentInput::new(thread, "r1", vec![Message::user("m1", text)]);
    let interrupt = match finish(engine, run).await? {
        RunFinishedOutcome::Interrupt { interrupts } => interrupts
            .into_iter()
            .next()
            .ok_or_else(|| format!("{thread}: an interrupt outcome without interrupts"))?,
        other => return Err(format!("{thread}: run 1 ended with {other:?}")),
    };
    let answer = ResumeEntry::resolved(interrupt.id, json!({ "approved": true }));
    let resume = RunAgentInput::new(thread, "r2", Vec::new()).with_resume(vec![answer]);
    match finish(engine, resume).await? {
        RunFinishedOutcome::Success { .. } => Ok(()),
        other => Err(format!("{thread}: the resume ended with {other:?}")),
    }
}

/// Runs `input` to the end; returns its `RUN_FINISHED` outcome.
async fn finish(engine: &Engine, input: RunAgentInput) -> Result<RunFinishedOutcome, String> {
    let events: Vec<Event> = engine
        .start(input, RunOptions::default())
        .await
        .map_err(|e| format!("run refused: {e}"))?
        .collect()
        .await;
    match events.last() {
        Some(Event::RunFinished(finished)) => Ok(finished
            .outcome
            .clone()
            .unwrap_or(RunFinishedOutcome::success())),
        other => Err(format!("the run did not finish: {other:?}")),
    }
}

#[allow(clippy::print_stdout)] // The table is the output.
fn print_table(rows: &[Row]) {
    println!(
        "sqlite-commits: {CLIENTS} concurrent clients, approval pairs of the demo agent on one file"
    );
    println!(
        "{:<20} {:>6} {:>12} {:>12} {:>11} {:>12} {:>11} {:>9}",
        "store",
        "pairs",
        "commits/pair",
        "txns/pair",
        "fsyncs/pair",
        "frames/pair",
        "ckpts/pair",
        "ms/pair"
    );
    for row in rows {
        let per_pair = |n: u64| n as f64 / row.pairs as f64;
        let stats = &row.stats;
        // Under FULL every transaction fsyncs the WAL; under NORMAL none does. A checkpoint
        // that copies frames syncs the WAL and the database file.
        let commit_fsyncs = match row.synchronous {
            Synchronous::Full => stats.transactions,
            Synchronous::Normal => 0,
        };
        let fsyncs = commit_fsyncs + 2 * stats.checkpoints;
        println!(
            "{:<20} {:>6} {:>12.2} {:>12.2} {:>11.2} {:>12.1} {:>11.3} {:>9.3}",
            row.label,
            row.pairs,
            per_pair(stats.commits),
            per_pair(stats.transactions),
            per_pair(fsyncs),
            per_pair(stats.wal_frames),
            per_pair(stats.checkpoints),
            row.elapsed.as_secs_f64() * 1000.0 / row.pairs as f64,
        );
    }
    println!(
        "fsyncs = transactions under FULL (one WAL sync per COMMIT; none under NORMAL) + 2 per checkpoint (WAL and database file); ms/pair is wall time over all clients"
    );
}
