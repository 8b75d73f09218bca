//! `agui-verify [--official] [--thread ID] [--run ID] [FILE]`: checks an AG-UI SSE
//! stream (FILE or stdin) with the strict verifier (or the official client's
//! rules). Prints the report as JSON and exits 0, or prints the violation and exits 1.

use std::io::Read;

use agui_protocol::verify::{Mode, VerifyOptions, verify_sse};

#[allow(clippy::print_stdout)] // The report is the output.
fn main() {
    let mut mode = Mode::Strict;
    let (mut thread, mut run, mut file) = (None, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--official" => mode = Mode::Official,
            "--thread" => thread = args.next(),
            "--run" => run = args.next(),
            other => file = Some(other.to_owned()),
        }
    }
    let mut bytes = Vec::new();
    let read = match &file {
        Some(path) => std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut bytes)),
        None => std::io::stdin().read_to_end(&mut bytes),
    };
    if let Err(e) = read {
        eprintln!("cannot read input: {e}");
        std::process::exit(2);
    }
    let mut options = VerifyOptions::new(mode);
    options.thread_id = thread.map(Into::into);
    options.run_id = run.map(Into::into);
    match verify_sse(&bytes, options) {
        Ok(report) => {
            let runs: Vec<_> = report
                .runs
                .iter()
                .map(|r| serde_json::json!({"runId": r.run_id, "outcome": r.outcome.as_str(), "interruptIds": r.interrupt_ids}))
                .collect();
            let summary = serde_json::json!({"ok": true, "events": report.events, "warnings": report.warnings, "runs": runs});
            println!("{summary}");
        }
        Err(violation) => {
            println!(
                "{}",
                serde_json::json!({"ok": false, "violation": violation.to_string()})
            );
            std::process::exit(1);
        }
    }
}
