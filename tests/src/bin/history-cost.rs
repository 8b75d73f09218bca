//! `make bench`: bytes written and store calls per turn as a thread grows to 10, 100
//! and 1,000 messages, per store: memory, SQLite, and DynamoDB when
//! `AWS_ENDPOINT_URL_DYNAMODB` points at a DynamoDB-compatible server (the Makefile
//! starts moto_server for it), with the DynamoDB requests each turn makes.

use std::collections::BTreeMap;
use std::process::ExitCode;

use handoff_core::Store;
use handoff_core::store::memory::MemoryStore;
use handoff_store_dynamodb::DynamoStore;
use handoff_store_sqlite::SqliteStore;
use handoff_tests::history_cost::{Conversation, TurnCost};

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

async fn measure<S: Store>(store: S, mut per_turn: impl FnMut(usize)) -> Vec<TurnCost> {
    let mut conversation = Conversation::new(store, "bench-thread");
    let mut costs = Vec::new();
    for size in SIZES {
        conversation.grow_to(size).await;
        per_turn(size);
        costs.push(conversation.measure().await);
        per_turn(size);
    }
    costs
}

/// DynamoDB requests per measured window (one chat and one approval turn), by operation.
#[allow(clippy::print_stdout)]
async fn dynamodb(endpoint: &str) -> Result<(), String> {
    let config = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
    let client = aws_sdk_dynamodb::Client::new(&config);
    let table = format!("history-cost-{}", std::process::id());
    DynamoStore::create_table(&client, &table)
        .await
        .map_err(|e| format!("create table at {endpoint}: {e}"))?;
    let store = DynamoStore::new(client, table);
    let counter = store.call_counter().clone();
    let mut before = None;
    let mut requests: BTreeMap<usize, String> = BTreeMap::new();
    let costs = measure(store, |size| match before.take() {
        None => before = Some(counter.snapshot()),
        Some(start) => {
            requests.insert(size, format!("{:?}", counter.since(&start)));
        }
    })
    .await;
    print("dynamodb", &costs);
    for (size, calls) in requests {
        println!("dynamodb {size:>5} msgs | requests for both turns: {calls}");
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
        print("memory", &measure(MemoryStore::default(), |_| {}).await);
        let dir = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => {
                eprintln!("no temp dir: {e}");
                return ExitCode::FAILURE;
            }
        };
        match SqliteStore::open(dir.path().join("bench.db")) {
            Ok(store) => print("sqlite", &measure(store, |_| {}).await),
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
