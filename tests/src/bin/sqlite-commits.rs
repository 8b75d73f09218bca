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
//! After the table, where the first setting's WAL frames went: each frame of the WAL (those
//! since it last restarted) is one page, attributed to the b-tree that owns that page now
//! (SQLite's `dbstat` table): the rows, the `(partition, key)` index, the listing index, the
//! header page. That is the write amplification a different table layout would change.
//!
//! `sqlite-commits [PAIRS_PER_CLIENT]` (default 40).

#![allow(clippy::disallowed_methods)] // It measures wall-clock time; it is not engine code.

use std::collections::HashMap;
use std::path::Path;
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
    let mut trees = None;
    for (label, synchronous, max_group) in settings {
        let options = SqliteOptions::default()
            .with_synchronous(synchronous)
            .with_max_group(max_group);
        let attribute = trees.is_none();
        match runtime.block_on(measure(options, pairs_per_client, attribute)) {
            Ok((stats, elapsed, by_tree)) => {
                rows.push(Row {
                    label,
                    synchronous,
                    pairs: CLIENTS * pairs_per_client,
                    stats,
                    elapsed,
                });
                trees = trees.or(by_tree.map(|by_tree| (label, by_tree)));
            }
            Err(e) => {
                eprintln!("sqlite-commits ({label}): {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    print_table(&rows);
    if let Some((label, by_tree)) = trees {
        print_trees(label, &by_tree);
    }
    ExitCode::SUCCESS
}

/// Runs `pairs_per_client` pairs on each of [`CLIENTS`] concurrent clients over a fresh
/// store opened with `options`; returns the store's stats and the wall time.
/// With `attribute`, also where the WAL's frames went ([`frames_by_tree`]).
async fn measure(
    options: SqliteOptions,
    pairs_per_client: usize,
    attribute: bool,
) -> Result<(SqliteStats, Duration, Option<Vec<(String, u64)>>), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let path = dir.path().join("commits.db");
    let store = Arc::new(SqliteStore::open_with(&path, options).map_err(|e| format!("open: {e}"))?);
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
    // Read while the store is open: closing it checkpoints and deletes the WAL.
    let by_tree = match attribute {
        true => Some(frames_by_tree(&path)?),
        false => None,
    };
    // Dropping the store joins its threads: off the runtime's worker thread.
    tokio::task::spawn_blocking(move || drop((engine, store)))
        .await
        .map_err(|e| format!("closing the store: {e}"))?;
    Ok((stats, elapsed, by_tree))
}

/// The WAL's frames (those of its current generation: the header's salts) counted by the
/// b-tree that owns each frame's page, most first. A page no b-tree owns is free.
fn frames_by_tree(db: &Path) -> Result<Vec<(String, u64)>, String> {
    let mut wal_path = db.as_os_str().to_owned();
    wal_path.push("-wal");
    let wal = std::fs::read(&wal_path).map_err(|e| format!("reading the WAL: {e}"))?;
    let word = |at: usize| {
        wal.get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (Some(page_size), Some(salt1), Some(salt2)) = (word(8), word(16), word(20)) else {
        return Ok(Vec::new());
    };
    let frame_len = 24 + page_size as usize;
    let mut pages = Vec::new();
    let mut at = 32;
    while at + frame_len <= wal.len() && word(at + 8) == Some(salt1) && word(at + 12) == Some(salt2)
    {
        pages.extend(word(at));
        at += frame_len;
    }
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| format!("opening for dbstat: {e}"))?;
    let mut owners = HashMap::new();
    let mut statement = conn
        .prepare("SELECT name, pageno FROM dbstat")
        .map_err(|e| format!("dbstat: {e}"))?;
    let rows = statement
        .query_map([], |row| {
            Ok((row.get::<_, u32>(1)?, row.get::<_, String>(0)?))
        })
        .map_err(|e| format!("dbstat: {e}"))?;
    for row in rows {
        let (page, name) = row.map_err(|e| format!("dbstat: {e}"))?;
        owners.insert(page, name);
    }
    let mut counts = HashMap::<String, u64>::new();
    for page in pages {
        let owner = owners.get(&page).map_or("(free page)", String::as_str);
        *counts.entry(owner.to_owned()).or_default() += 1;
    }
    let mut counts: Vec<_> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(counts)
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
fn print_trees(label: &str, by_tree: &[(String, u64)]) {
    let total: u64 = by_tree.iter().map(|(_, n)| n).sum();
    let share = |n: u64| 100.0 * n as f64 / total.max(1) as f64;
    let named = |tree: &str| {
        match tree {
            "items" => "rows (items)",
            "sqlite_autoindex_items_1" => "(partition, key) index",
            "items_listing" => "listing index",
            "sqlite_schema" => "header page",
            other => other,
        }
        .to_owned()
    };
    let parts: Vec<String> = by_tree
        .iter()
        .map(|(tree, n)| format!("{} {:.0}%", named(tree), share(*n)))
        .collect();
    println!(
        "WAL frames by b-tree ({label}, the WAL's last {total} frames): {}",
        parts.join(", ")
    );
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
