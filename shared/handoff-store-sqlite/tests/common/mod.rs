//! Several processes on one database file: a test binary re-executes itself as child processes
//! that run only its `child_process` test, which does nothing unless the parent set the
//! environment variables below ([`child_env`]). Each child writes a report of numbers to
//! [`done_file`]; the parent collects them with [`wait_for`].

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const CHILD_DB: &str = "HANDOFF_SQLITE_TEST_CHILD_DB";
const CHILD_ID: &str = "HANDOFF_SQLITE_TEST_CHILD_ID";
const CHILD_MODE: &str = "HANDOFF_SQLITE_TEST_CHILD_MODE";

/// How many child processes [`spawn_children`] starts.
pub const CHILDREN: usize = 4;

/// In a child: `(database, child id, mode)`; `None` in the parent (the `child_process` test
/// then returns at once).
pub fn child_env() -> Option<(PathBuf, usize, String)> {
    let (Some(db), Ok(mode)) = (std::env::var_os(CHILD_DB), std::env::var(CHILD_MODE)) else {
        return None;
    };
    let id: usize = std::env::var(CHILD_ID)
        .expect("child id")
        .parse()
        .expect("child id");
    Some((PathBuf::from(db), id, mode))
}

/// Starts [`CHILDREN`] copies of this test binary running its `child_process` test in `mode`.
pub fn spawn_children(db: &Path, mode: &str) -> Vec<Child> {
    let exe = std::env::current_exe().expect("the test binary");
    (0..CHILDREN)
        .map(|n| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "child_process",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(CHILD_DB, db)
                .env(CHILD_ID, n.to_string())
                .env(CHILD_MODE, mode)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn a child process")
        })
        .collect()
}

/// Waits for every child, asserts it succeeded, and returns its report.
pub fn wait_for(children: Vec<Child>, db: &Path) -> Vec<(usize, Vec<u64>)> {
    let outputs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait for a child"))
        .collect();
    outputs
        .into_iter()
        .enumerate()
        .map(|(n, output)| {
            let log = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(
                output.status.success(),
                "child {n} failed ({}):\n{log}",
                output.status
            );
            let report = std::fs::read_to_string(done_file(db, n))
                .unwrap_or_else(|e| panic!("child {n} left no report ({e}):\n{log}"));
            let numbers = report
                .split_whitespace()
                .map(|w| w.parse().expect("a number"))
                .collect();
            (n, numbers)
        })
        .collect()
}

/// Writes a child's report (read back by [`wait_for`]).
pub fn write_report(db: &Path, child: usize, report: &[u64]) {
    let report: Vec<String> = report.iter().map(u64::to_string).collect();
    std::fs::write(done_file(db, child), report.join(" ")).expect("child: write the report");
}

/// Where child `child` leaves its report, next to the database.
pub fn done_file(db: &Path, child: usize) -> PathBuf {
    db.with_file_name(format!("child-{child}.done"))
}
