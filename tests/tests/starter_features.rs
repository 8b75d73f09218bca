//! The starter serves AG-UI and CopilotKit only, so its Lambda bootstrap stays under 3 MB
//! gzipped (issue 54; `make bench-lambda` measures it): the optional servers and schedules
//! are features it leaves off, and nothing it depends on turns them back on. Finding one on
//! means a default feature crept back in (a `handoff-*` dependency without
//! `default-features = false`, or a feature list that names it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// The features the starter leaves off, and the crates that have them.
const LEFT_OFF: [(&str, &[&str]); 3] = [
    ("handoff", &["a2a-server", "mcp-server", "schedules"]),
    ("handoff-http", &["a2a-server", "mcp-server", "schedules"]),
    ("handoff-core", &["schedules"]),
];

/// Crates only those features link (not `chrono`: `worker` links it too).
const LEFT_OUT: [&str; 1] = ["croner"];

/// The starter's normal dependencies for `args`: each crate's name and enabled features.
fn starter_tree(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository");
    let output = Command::new(env!("CARGO"))
        .args(["tree", "--offline", "-p", "starter", "-e", "normal"])
        .args(["--prefix", "none", "--format", "{p}|{f}"])
        .args(args)
        .current_dir(root)
        .output()
        .expect("run cargo tree");
    assert!(
        output.status.success(),
        "cargo tree failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut crates = BTreeMap::<String, BTreeSet<String>>::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let (package, features) = line.split_once('|').unwrap_or((line, ""));
        let name = package.split_whitespace().next().unwrap_or_default();
        let features = features.trim().trim_end_matches("(*)").split(',');
        crates.entry(name.to_owned()).or_default().extend(
            features
                .map(str::trim)
                .filter(|f| !f.is_empty())
                .map(str::to_owned),
        );
    }
    crates
}

fn assert_left_off(args: &[&str]) {
    let tree = starter_tree(args);
    for (name, features) in LEFT_OFF {
        let enabled = tree.get(name).unwrap_or_else(|| {
            panic!("the starter ({args:?}) does not depend on {name}: {tree:?}")
        });
        for feature in features {
            assert!(
                !enabled.contains(*feature),
                "the starter ({args:?}) turns on {name}'s feature `{feature}`: {enabled:?}"
            );
        }
    }
    for name in LEFT_OUT {
        assert!(
            !tree.contains_key(name),
            "the starter ({args:?}) links {name}"
        );
    }
}

#[test]
fn the_native_starter_leaves_the_optional_features_off() {
    assert_left_off(&[]);
}

#[test]
fn the_worker_starter_leaves_the_optional_features_off() {
    assert_left_off(&[
        "--no-default-features",
        "--features",
        "worker",
        "--target",
        "wasm32-unknown-unknown",
    ]);
}
