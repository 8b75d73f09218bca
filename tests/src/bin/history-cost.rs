//! `make bench`: bytes written and store calls per turn as a thread grows to 10, 100
//! and 1,000 messages, per store (memory, SQLite; DynamoDB when
//! `AWS_ENDPOINT_URL_DYNAMODB` points at a DynamoDB-compatible server and the
//! binary is run with `--dynamodb`, see the Makefile).

use std::process::ExitCode;

use handoff_core::Store;
use handoff_core::store::memory::MemoryStore;
use handoff_store_sqlite::SqliteStore;
use handoff_tests::history_cost::{Conversation, TurnCost};

const SIZES: [usize; 3] = [10, 100, 1_000];

fn print(store: &str, costs: &[TurnCost]) {
    for c in costs {
        #[allow(clippy::print_stdout)]
        {
            println!(
                "{store:<8} {:>5} msgs | chat: {:>6} B in {} puts, {} commits, {} gets ({} keys) | approval: {:>6} B in {} puts, {} commits, {} gets ({} keys)",
                c.messages,
                c.chat.bytes_written,
                c.chat.puts,
                c.chat.commits,
                c.chat.gets,
                c.chat.keys_read,
                c.approval.bytes_written,
                c.approval.puts,
                c.approval.commits,
                c.approval.gets,
                c.approval.keys_read,
            );
        }
    }
    let (first, last) = (costs[0], costs[costs.len() - 1]);
    let ratio = |a: u64, b: u64| b as f64 / a.max(1) as f64;
    #[allow(clippy::print_stdout)]
    {
        println!(
            "{store:<8} growth {}→{} msgs: chat ×{:.2}, approval ×{:.2} (target ≤ ×1.5)",
            first.messages,
            last.messages,
            ratio(first.chat.bytes_written, last.chat.bytes_written),
            ratio(first.approval.bytes_written, last.approval.bytes_written),
        );
    }
}

async fn measure<S: Store>(store: S) -> Vec<TurnCost> {
    let mut conversation = Conversation::new(store, "bench-thread");
    let mut costs = Vec::new();
    for size in SIZES {
        conversation.grow_to(size).await;
        costs.push(conversation.measure().await);
    }
    costs
}

fn main() -> ExitCode {
    futures::executor::block_on(async {
        print("memory", &measure(MemoryStore::default()).await);
        let dir = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => {
                eprintln!("no temp dir: {e}");
                return ExitCode::FAILURE;
            }
        };
        match SqliteStore::open(dir.path().join("bench.db")) {
            Ok(store) => print("sqlite", &measure(store).await),
            Err(e) => {
                eprintln!("sqlite: {e}");
                return ExitCode::FAILURE;
            }
        }
        ExitCode::SUCCESS
    })
}
