//! Writes the conformance corpus (`manifest.json` + one `.sse` file per stream)
//! that `tests/node/conformance.test.mjs` feeds to the official `@ag-ui/client`.

use std::path::PathBuf;

use handoff_tests::corpus;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("target/agui-corpus"), PathBuf::from);
    let count = corpus::write(&dir)?;
    eprintln!("wrote {count} streams to {}", dir.display());
    Ok(())
}
