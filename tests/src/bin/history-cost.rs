//! `make bench`: bytes written and store calls per turn as a thread grows to 10, 100
//! and 1,000 messages, per store: memory, SQLite, and DynamoDB when
//! `AWS_ENDPOINT_URL_DYNAMODB` points at a DynamoDB-compatible server (the Makefile
//! starts moto_server for it), with the DynamoDB requests and request units of the measured
//! window (a chat turn plus an approval pair) and its on-demand bill per 1,000 windows,
//! before issue 54's cuts (a recorded baseline) and now.

use std::collections::BTreeMap;
use std::process::ExitCode;

use handoff_core::Store;
use handoff_core::store::memory::MemoryStore;
use handoff_store_dynamodb::DynamoStore;
use handoff_store_sqlite::SqliteStore;
use handoff_tests::dynamo_bill::{
    Bill, USD_PER_MILLION_READ_UNITS, USD_PER_MILLION_WRITE_UNITS, Units,
};
use handoff_tests::history_cost::{Conversation, ResumeBody, TurnCost, Window};

const SIZES: [usize; 3] = [10, 100, 1_000];

#[allow(clippy::print_stdout)]
fn print(store: &str, costs: &[TurnCost]) {
    for c in costs {
        println!(
            "{store:<8} {:>5} msgs | chat: {:>6} B in {} puts ({} listed), {} commits, {} gets ({} keys), {} scans | approval: {:>6} B in {} puts ({} listed), {} commits, {} gets ({} keys), {} scans",
            c.messages,
            c.chat.bytes_written,
            c.chat.puts,
            c.chat.indexed_puts,
            c.chat.commits,
            c.chat.gets,
            c.chat.keys_read,
            c.chat.scans,
            c.approval.bytes_written,
            c.approval.puts,
            c.approval.indexed_puts,
            c.approval.commits,
            c.approval.gets,
            c.approval.keys_read,
            c.approval.scans,
        );
    }
    let (first, last) = (costs[0], costs[costs.len() - 1]);
    let ratio = |a: u64, b: u64| b as f64 / a.max(1) as f64;
    println!(
        "{store:<8} growth {}→{} msgs: chat ×{:.2}, approval ×{:.2} bytes written (target ≤ ×1.5)",
        first.messages,
        last.messages,
        ratio(first.chat.bytes_written, last.chat.bytes_written),
        ratio(first.approval.bytes_written, last.approval.bytes_written),
    );
}

/// Grows a conversation through [`SIZES`], measuring at each; `window(size, edge)` marks the
/// edges of each measured turn.
async fn measure<S: Store>(store: S, mut window: impl FnMut(usize, Window)) -> Vec<TurnCost> {
    let mut conversation = Conversation::new(store, "bench-thread");
    let mut costs = Vec::new();
    for size in SIZES {
        conversation.grow_to(size).await;
        costs.push(conversation.measure_with(|edge| window(size, edge)).await);
    }
    costs
}

/// What `history-cost` counted for the window before issue 54's cuts (commit 701f0d1):
/// `{GetItem 2, Query 3, TransactGetItems 3, TransactWriteItems 8}`, 4 of them the bench's
/// own reads of the thread between turns (inside the window then), 1 the resume reading the
/// history pages (its body carried no messages). Its request units, billed by [`Bill`] on
/// that window at 10 messages.
const BASELINE_CALLS: u64 = 16;
/// See [`BASELINE_CALLS`].
const BASELINE_UNITS: Units = Units {
    write: 60,
    read: 27,
};

/// DynamoDB requests and request units per window (one chat turn and one approval pair), by
/// operation, and what 1,000 windows cost on demand.
#[allow(clippy::print_stdout)]
async fn dynamodb(endpoint: &str) -> Result<(), String> {
    let config = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
    let bill = Bill::new();
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&config)
            .interceptor(bill.clone())
            .build(),
    );
    let table = format!("history-cost-{}", std::process::id());
    DynamoStore::create_table(&client, &table)
        .await
        .map_err(|e| format!("create table at {endpoint}: {e}"))?;
    let store = DynamoStore::new(client.clone(), table.clone());
    let counter = store.call_counter().clone();
    let mut windows: BTreeMap<usize, (BTreeMap<String, u64>, Units)> = BTreeMap::new();
    let mut start = None;
    let mut record = |size: usize, edge: Window| match edge {
        Window::Start => start = Some((counter.snapshot(), bill.units())),
        Window::End => {
            let Some((calls, units)) = start.take() else {
                return;
            };
            let (sum, total) = windows.entry(size).or_default();
            for (op, n) in counter.since(&calls) {
                *sum.entry(op).or_default() += n;
            }
            let spent = bill.units().since(units);
            total.write += spent.write;
            total.read += spent.read;
        }
    };
    let costs = measure(store, &mut record).await;
    print("dynamodb", &costs);
    for (size, (calls, units)) in &windows {
        println!(
            "dynamodb {size:>5} msgs | requests for both turns: {calls:?} = {} calls, {} write + {} read request units",
            calls.values().sum::<u64>(),
            units.write,
            units.read
        );
    }
    // The same window, at 10 messages, with a resume that carries only the answers (no
    // history): the engine reads the history pages, one more `Query`.
    let store = DynamoStore::new(client, table);
    let counter = store.call_counter().clone();
    let mut answers_only = 0;
    let mut start = None;
    let mut conversation =
        Conversation::new(store, "bench-answers-only").with_resume_body(ResumeBody::AnswersOnly);
    conversation.grow_to(SIZES[0]).await;
    conversation
        .measure_with(|edge| match edge {
            Window::Start => start = Some(counter.snapshot()),
            Window::End => {
                if let Some(calls) = start.take() {
                    answers_only += counter.since(&calls).values().sum::<u64>();
                }
            }
        })
        .await;
    println!(
        "dynamodb {:>5} msgs | a resume sending no history (answers only) makes the window {answers_only} calls",
        SIZES[0]
    );
    if let Some((calls, units)) = windows.values().next() {
        let after_calls = calls.values().sum::<u64>();
        println!(
            "dynamodb per 1,000 windows (chat turn + approval pair, on-demand US$ {USD_PER_MILLION_WRITE_UNITS}/M write units, {USD_PER_MILLION_READ_UNITS}/M read units): before {BASELINE_CALLS} calls/window, ${:.4} ({} WRU + {} RRU); after {after_calls} calls/window, ${:.4} ({} WRU + {} RRU)",
            BASELINE_UNITS.usd() * 1_000.0,
            BASELINE_UNITS.write,
            BASELINE_UNITS.read,
            units.usd() * 1_000.0,
            units.write,
            units.read,
        );
    }
    Ok(())
}

fn main() -> ExitCode {
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
    runtime.block_on(async {
        print("memory", &measure(MemoryStore::default(), |_, _| {}).await);
        let dir = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => {
                eprintln!("no temp dir: {e}");
                return ExitCode::FAILURE;
            }
        };
        match SqliteStore::open(dir.path().join("bench.db")) {
            Ok(store) => print("sqlite", &measure(store, |_, _| {}).await),
            Err(e) => {
                eprintln!("sqlite: {e}");
                return ExitCode::FAILURE;
            }
        }
        match std::env::var("AWS_ENDPOINT_URL_DYNAMODB") {
            Ok(endpoint) => {
                if let Err(e) = dynamodb(&endpoint).await {
                    eprintln!("dynamodb: {e}");
                    return ExitCode::FAILURE;
                }
            }
            Err(_) => eprintln!("dynamodb: skipped (AWS_ENDPOINT_URL_DYNAMODB unset)"),
        }
        ExitCode::SUCCESS
    })
}
